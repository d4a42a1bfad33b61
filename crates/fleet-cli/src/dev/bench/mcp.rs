//! `fleet dev bench mcp`: what fleet's MCP client costs.
//!
//! 1. Calls: N calls of a trivial tool on a stdio server, C in flight at once, through fleet's
//!    path (`McpTool::call`, as an agent calls it: adapter, connection, rmcp, output mapping)
//!    and through a minimal baseline (raw JSON-RPC on the server's pipes, see [`mcp_raw`]).
//!    The baseline is the server's own time; the difference of the means is fleet's overhead
//!    per call. Target: under 1 ms.
//! 2. Start-up: S servers whose own start takes different times (0, step, 2·step, …), each
//!    connected alone and then all through `McpServers::start`, as a session starts them.
//!    Started together they should take no longer than the slowest alone plus a small margin.
//!
//! The server is fleet's own `fleet mcp serve` (in an empty temporary folder, calling Glob)
//! unless `--server-cmd` names another, e.g. `fleet-mcp-fault` (calling echo). A slow start is
//! the fault server's `--start-delay-ms` for the fault server and a `sleep` before `exec` for
//! any other command.
//!
//! [`mcp_raw`]: super::mcp_raw

use super::mcp_raw::{RawServer, Timings};
use anyhow::{bail, Context};
use fleet_runtime::mcp::config::McpConfig;
use fleet_runtime::mcp::{
    McpConnection, McpServerConfig, McpServers, McpSource, McpTimeouts, McpTool, McpTransport,
};
use fleet_tools::{Tool, ToolContext, Workspace};
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Calls of the tool through each path (fleet's and the raw baseline).
    #[arg(long, default_value_t = 100)]
    calls: usize,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 10)]
    concurrency: usize,
    /// Servers started together in the start-up part.
    #[arg(long, default_value_t = 5)]
    servers: usize,
    /// How much longer each server's own start is than the one before, in milliseconds.
    #[arg(long, default_value_t = 100)]
    start_step_ms: u64,
    /// Start-up runs (each: every server alone, then all together); medians are reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// The stdio server to run: a command and its arguments separated by spaces (no quoting).
    /// Default: this fleet's `mcp serve`.
    #[arg(long, value_name = "COMMAND")]
    server_cmd: Option<String>,
    /// The tool to call. Default: Glob if the server has it, else echo.
    #[arg(long)]
    tool: Option<String>,
    /// The tool's input as JSON. Default: a pattern nothing matches for Glob, a short text
    /// for echo, `{}` otherwise.
    #[arg(long, value_name = "JSON")]
    tool_input: Option<String>,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Fleet's overhead per call the issue allows, in milliseconds.
const TARGET_OVERHEAD_MS: f64 = 1.0;
/// How much longer than the slowest server alone a session's start may take, in milliseconds.
const TARGET_START_MARGIN_MS: f64 = 50.0;
/// Rounds the timed calls are split into, alternating which path goes first.
const ROUNDS: usize = 10;
/// The fewest windows of calls in flight one round holds.
const WINDOWS_PER_ROUND: usize = 5;
/// Calls of each path before timing starts (process start-up, caches, the allocator).
const WARMUP_CALLS: usize = 10;

/// The server command, split.
#[derive(Debug, Clone)]
struct ServerCmd {
    command: String,
    args: Vec<String>,
    /// How the report names it.
    label: String,
}

impl ServerCmd {
    fn from_args(args: &McpArgs) -> anyhow::Result<Self> {
        match &args.server_cmd {
            Some(line) => {
                let mut words = line.split_whitespace().map(String::from);
                let command = words.next().context("--server-cmd is empty")?;
                Ok(Self {
                    command,
                    args: words.collect(),
                    label: line.trim().to_string(),
                })
            }
            None => {
                let exe = std::env::current_exe().context("finding the fleet binary")?;
                Ok(Self {
                    command: exe.display().to_string(),
                    args: vec!["mcp".into(), "serve".into()],
                    label: "fleet mcp serve".into(),
                })
            }
        }
    }

    fn is_fault_server(&self) -> bool {
        Path::new(&self.command)
            .file_name()
            .is_some_and(|name| name == "fleet-mcp-fault")
    }

    /// The server as a stdio configuration named `name`, run in `cwd`, its start delayed.
    fn config(&self, name: &str, cwd: &Path, delay_ms: u64) -> McpServerConfig {
        let (command, args) = if delay_ms == 0 {
            (self.command.clone(), self.args.clone())
        } else if self.is_fault_server() {
            let mut args = self.args.clone();
            args.extend(["--start-delay-ms".into(), delay_ms.to_string()]);
            (self.command.clone(), args)
        } else {
            // `$0` is the "sh" after the script; the server and its arguments are `$@`.
            let script = format!("sleep {}; exec \"$@\"", delay_ms as f64 / 1000.0);
            let mut args = vec!["-c".into(), script, "sh".into(), self.command.clone()];
            args.extend(self.args.iter().cloned());
            ("sh".to_string(), args)
        };
        McpServerConfig {
            name: name.to_string(),
            transport: McpTransport::Stdio {
                command,
                args,
                env: BTreeMap::new(),
                cwd: Some(cwd.to_path_buf()),
            },
            source: McpSource::FlagInline(0),
        }
    }
}

fn timeouts() -> McpTimeouts {
    McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_secs(60)),
    }
}

pub async fn mcp(args: McpArgs) -> anyhow::Result<()> {
    if args.calls == 0 || args.concurrency == 0 || args.servers == 0 || args.runs == 0 {
        bail!("--calls, --concurrency, --servers and --runs must be at least 1");
    }
    let input_override = args
        .tool_input
        .as_deref()
        .map(serde_json::from_str::<Value>)
        .transpose()
        .context("--tool-input is not JSON")?;
    let server = ServerCmd::from_args(&args)?;
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let cwd = dir
        .path()
        .canonicalize()
        .context("resolving the temporary folder")?;

    let calls = calls(&args, &server, &cwd, input_override).await?;
    let startup = startup(&args, &server, &cwd).await?;
    let mut figures = calls;
    figures["server"] = json!(server.label);
    figures["startup"] = startup;
    if args.json {
        println!("{figures}");
    } else {
        println!("{}", render(&figures));
    }
    Ok(())
}

/// Part 1: the same calls through fleet's path and the raw baseline.
async fn calls(
    args: &McpArgs,
    server: &ServerCmd,
    cwd: &Path,
    input_override: Option<Value>,
) -> anyhow::Result<Value> {
    let connection = McpConnection::connect(&server.config("bench", cwd, 0), timeouts())
        .await
        .with_context(|| format!("connecting to {}", server.label))?;
    let connection = Arc::new(connection);
    let listed = connection.tools().await;
    let (tool_name, default_input) = match &args.tool {
        Some(name) => (name.clone(), json!({})),
        None if listed.iter().any(|t| t.name == "Glob") => (
            "Glob".to_string(),
            json!({"pattern": "**/*.fleet-bench-nothing"}),
        ),
        None if listed.iter().any(|t| t.name == "echo") => {
            ("echo".to_string(), json!({"text": "ping"}))
        }
        None => bail!(
            "{} has neither Glob nor echo; name the tool with --tool",
            server.label
        ),
    };
    let input = input_override.unwrap_or(default_input);
    let info = listed
        .iter()
        .find(|t| t.name == tool_name)
        .with_context(|| format!("{} has no tool {tool_name}", server.label))?
        .clone();
    let tool = McpTool::new(connection.clone(), info);
    let ctx = ToolContext::new(cwd.to_path_buf(), Arc::new(Workspace::new(cwd)));

    let mut raw = RawServer::start(&server.command, &server.args, cwd)
        .await
        .with_context(|| format!("starting {} for the baseline", server.label))?;
    let warmup = WARMUP_CALLS.min(args.calls);
    let outcome = async {
        fleet_calls(&tool, &ctx, &input, warmup, args.concurrency).await?;
        raw.run(&tool_name, &input, warmup, args.concurrency)
            .await?;
        // Rounds alternate which path goes first, so drift in the machine or the server
        // (caches warming, a neighbour's load) touches both alike.
        let mut fleet = Timings::default();
        let mut baseline = Timings::default();
        for (round, size) in rounds(args.calls, args.concurrency).into_iter().enumerate() {
            if round % 2 == 0 {
                baseline.extend(raw.run(&tool_name, &input, size, args.concurrency).await?);
                fleet.extend(fleet_calls(&tool, &ctx, &input, size, args.concurrency).await?);
            } else {
                fleet.extend(fleet_calls(&tool, &ctx, &input, size, args.concurrency).await?);
                baseline.extend(raw.run(&tool_name, &input, size, args.concurrency).await?);
            }
        }
        anyhow::Ok((fleet, baseline))
    }
    .await;
    raw.stop().await;
    drop(tool);
    if let Ok(connection) = Arc::try_unwrap(connection) {
        connection.shutdown().await;
    }
    let (fleet, baseline) = outcome?;
    let fleet = summary(fleet);
    let baseline = summary(baseline);
    let figure = |v: &Value, key: &str| v[key].as_f64().unwrap_or_default();
    let overhead = figure(&fleet, "mean_ms") - figure(&baseline, "mean_ms");
    Ok(json!({
        "tool": tool_name,
        "input": input,
        "calls": args.calls,
        "concurrency": args.concurrency,
        "fleet": fleet,
        "baseline": baseline,
        "overhead_per_call_ms": overhead,
        "overhead_p50_ms": figure(&fleet, "p50_ms") - figure(&baseline, "p50_ms"),
        // With calls overlapping, a call's latency also holds its turn behind the others'
        // client work; the wall time per call is that client work counted once.
        "overhead_wall_per_call_ms":
            (figure(&fleet, "wall_s") - figure(&baseline, "wall_s")) * 1000.0 / args.calls as f64,
        "target_overhead_ms": TARGET_OVERHEAD_MS,
        "overhead_under_target": overhead < TARGET_OVERHEAD_MS,
    }))
}

/// `calls` calls through the tool adapter, `concurrency` at once; each must succeed.
async fn fleet_calls(
    tool: &McpTool,
    ctx: &ToolContext,
    input: &Value,
    calls: usize,
    concurrency: usize,
) -> anyhow::Result<Timings> {
    let wall = Instant::now();
    let results: Vec<(f64, Result<fleet_tools::ToolOutput, fleet_tools::ToolError>)> =
        futures::stream::iter(0..calls)
            .map(|_| async {
                let started = Instant::now();
                let out = tool.call(input.clone(), ctx).await;
                (started.elapsed().as_secs_f64() * 1000.0, out)
            })
            .buffer_unordered(concurrency)
            .collect()
            .await;
    let wall = wall.elapsed();
    let mut millis = Vec::with_capacity(calls);
    for (ms, out) in results {
        match out {
            Ok(out) if !out.is_error => millis.push(ms),
            Ok(out) => bail!("{} answered with an error: {}", tool.name(), out.content),
            Err(e) => bail!("calling {} failed: {e}", tool.name()),
        }
    }
    Ok(Timings { millis, wall })
}

/// How many calls each round makes: up to [`ROUNDS`] rounds, each at least
/// [`WINDOWS_PER_ROUND`] windows of `concurrency` calls, so that most of a round runs with
/// the pipeline full rather than filling and draining it.
fn rounds(calls: usize, concurrency: usize) -> Vec<usize> {
    let count = ROUNDS
        .min(calls / (WINDOWS_PER_ROUND * concurrency.max(1)))
        .max(1);
    (0..count)
        .map(|i| calls / count + usize::from(i < calls % count))
        .collect()
}

/// Mean, percentiles and throughput of one batch.
fn summary(timings: Timings) -> Value {
    let mut millis = timings.millis;
    millis.sort_by(f64::total_cmp);
    let calls = millis.len();
    let mean = millis.iter().sum::<f64>() / calls.max(1) as f64;
    let wall_s = timings.wall.as_secs_f64();
    json!({
        "mean_ms": mean,
        "p50_ms": percentile(&millis, 0.50),
        "p99_ms": percentile(&millis, 0.99),
        "max_ms": millis.last().copied().unwrap_or_default(),
        "wall_s": wall_s,
        "calls_per_s": if wall_s > 0.0 { calls as f64 / wall_s } else { 0.0 },
    })
}

/// Nearest-rank percentile of sorted values (`p` in 0..=1).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Part 2: each server's start alone, then all of them as a session starts them.
async fn startup(args: &McpArgs, server: &ServerCmd, cwd: &Path) -> anyhow::Result<Value> {
    let delays: Vec<u64> = (0..args.servers as u64)
        .map(|i| i * args.start_step_ms)
        .collect();
    let configs: Vec<McpServerConfig> = delays
        .iter()
        .enumerate()
        .map(|(i, &delay)| server.config(&format!("s{i}"), cwd, delay))
        .collect();
    let mut alone: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut together = Vec::new();
    for _ in 0..args.runs {
        for (config, times) in configs.iter().zip(&mut alone) {
            let started = Instant::now();
            let connection = McpConnection::connect(config, timeouts())
                .await
                .with_context(|| format!("starting server {} alone", config.name))?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            connection.shutdown().await;
        }
        let config = McpConfig {
            servers: configs.clone(),
            ..McpConfig::default()
        };
        let started = Instant::now();
        let session = McpServers::start(&config, timeouts()).await;
        together.push(started.elapsed().as_secs_f64() * 1000.0);
        let failed: Vec<String> = session
            .entries
            .iter()
            .filter(|e| e.connection.is_none())
            .map(|e| format!("{}: {}", e.name, e.error.as_deref().unwrap_or("failed")))
            .collect();
        for entry in session.entries {
            if let Some(connection) = entry.connection.and_then(|c| Arc::try_unwrap(c).ok()) {
                connection.shutdown().await;
            }
        }
        if !failed.is_empty() {
            bail!("servers failed to start together: {}", failed.join("; "));
        }
    }
    let alone_ms: Vec<f64> = alone.into_iter().map(median).collect();
    let slowest = alone_ms.iter().copied().fold(0.0, f64::max);
    let together_ms = median(together.clone());
    let margin = together_ms - slowest;
    Ok(json!({
        "servers": args.servers,
        "runs": args.runs,
        "delays_ms": delays,
        "alone_ms": alone_ms,
        "slowest_alone_ms": slowest,
        "together_ms": together_ms,
        "together_runs_ms": together,
        "margin_ms": margin,
        "target_margin_ms": TARGET_START_MARGIN_MS,
        "under_target": margin <= TARGET_START_MARGIN_MS,
    }))
}

fn render(f: &Value) -> String {
    let n = |v: &Value| v.as_f64().unwrap_or_default();
    let row = |name: &str, v: &Value| {
        format!(
            "  {name:<13}{:>9.3}{:>9.3}{:>9.3} ms  {:>8.0} calls/s",
            n(&v["mean_ms"]),
            n(&v["p50_ms"]),
            n(&v["p99_ms"]),
            n(&v["calls_per_s"]),
        )
    };
    let met = |ok: &Value| if ok == true { "met" } else { "MISSED" };
    let header = format!("  {:<13}{:>9}{:>9}{:>9}", "", "mean", "p50", "p99");
    let s = &f["startup"];
    let alone: Vec<String> = s["alone_ms"]
        .as_array()
        .map(|a| a.iter().map(|v| format!("{:.1}", n(v))).collect())
        .unwrap_or_default();
    format!(
        "mcp: {calls} calls of {tool} on `{server}`, {conc} at a time\n\
         {header}\n\
         {fleet}\n{base}\n\
         \x20 overhead     {over:+.3} ms per call (mean latency; p50 {p50:+.3}; wall time {wall:+.3}); target < {target} ms: {met_calls}\n\
         start-up: {servers} server(s), own starts {step} ms apart, median of {runs} run(s)\n\
         \x20 alone          {alone} ms\n\
         \x20 slowest alone  {slowest:.1} ms\n\
         \x20 all together   {together:.1} ms ({margin:+.1} ms); target within {target_margin} ms: {met_start}",
        calls = f["calls"],
        tool = f["tool"].as_str().unwrap_or_default(),
        server = f["server"].as_str().unwrap_or_default(),
        conc = f["concurrency"],
        fleet = row("fleet", &f["fleet"]),
        base = row("raw JSON-RPC", &f["baseline"]),
        over = n(&f["overhead_per_call_ms"]),
        p50 = n(&f["overhead_p50_ms"]),
        wall = n(&f["overhead_wall_per_call_ms"]),
        target = TARGET_OVERHEAD_MS,
        met_calls = met(&f["overhead_under_target"]),
        servers = s["servers"],
        step = s["delays_ms"][1].as_u64().unwrap_or_default(),
        runs = s["runs"],
        alone = alone.join(", "),
        slowest = n(&s["slowest_alone_ms"]),
        together = n(&s["together_ms"]),
        margin = n(&s["margin_ms"]),
        target_margin = TARGET_START_MARGIN_MS,
        met_start = met(&s["under_target"]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_split_the_calls_without_half_empty_windows() {
        assert_eq!(rounds(100, 10), [50, 50]);
        assert_eq!(rounds(1000, 10), [100; 10]);
        assert_eq!(rounds(49, 10), [49]);
        assert_eq!(rounds(5, 10), [5]);
        assert_eq!(rounds(52, 1), [6, 6, 5, 5, 5, 5, 5, 5, 5, 5]);
        assert_eq!(rounds(77, 3).iter().sum::<usize>(), 77);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.5), 50.0);
        assert_eq!(percentile(&values, 0.99), 99.0);
        assert_eq!(percentile(&values, 1.0), 100.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn a_slow_start_uses_the_fault_servers_flag_or_a_sleep() {
        let cwd = Path::new("/tmp");
        let fault = ServerCmd {
            command: "/x/fleet-mcp-fault".into(),
            args: vec![],
            label: "fault".into(),
        };
        let McpTransport::Stdio { command, args, .. } = fault.config("s", cwd, 200).transport
        else {
            panic!("not stdio")
        };
        assert_eq!(command, "/x/fleet-mcp-fault");
        assert_eq!(args, ["--start-delay-ms", "200"]);

        let other = ServerCmd {
            command: "/x/fleet".into(),
            args: vec!["mcp".into(), "serve".into()],
            label: "fleet mcp serve".into(),
        };
        let McpTransport::Stdio { command, args, .. } = other.config("s", cwd, 250).transport
        else {
            panic!("not stdio")
        };
        assert_eq!(command, "sh");
        assert_eq!(
            args,
            [
                "-c",
                "sleep 0.25; exec \"$@\"",
                "sh",
                "/x/fleet",
                "mcp",
                "serve"
            ]
        );
        let McpTransport::Stdio { command, args, .. } = other.config("s", cwd, 0).transport else {
            panic!("not stdio")
        };
        assert_eq!((command.as_str(), args.len()), ("/x/fleet", 2));
    }
}
