//! `fleet dev bench fanout`, `fork`, `long`, `mcp`, `sandbox`, `team`, `tui` and `worktrees`. Fanout: one parent spawns N subagents in a single turn, against the fake
//! model server running as a separate process (so its memory and sockets are not counted),
//! and the wall time and this process's peak RSS are reported.
//!
//! It runs the real thing — the Agent tool, limits, ledger, transcripts on disk, HTTP and SSE —
//! with the subagent concurrency limit raised to N.

use anyhow::{bail, Context};
use fleet_protocol::AgentEvent;
use fleet_runtime::subagent::TranscriptTarget;
use fleet_runtime::SpawnLimits;
use fleet_store::FleetHome;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

mod fork;
mod fork_report;
mod long;
mod mcp;
mod mcp_raw;
mod remote;
mod sandbox;
mod session;
mod team;
mod team_latency;
mod tui;
mod worktrees;

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// A parent spawns N subagents in one turn; reports wall time and peak RSS.
    Fanout(FanoutArgs),
    /// K forks of a parent that read H KiB, against K fresh subagents given the same text;
    /// reports prompt-cache reuse and billed input tokens.
    Fork(fork::ForkArgs),
    /// One agent for N turns whose tool output is many times the context window: compaction
    /// keeps it going; reports peak RSS, RSS along the run and the time per turn.
    Long(long::LongArgs),
    /// fleet's MCP client: overhead per tool call against raw JSON-RPC on the same stdio
    /// server, and a session's start with servers of different start times.
    Mcp(mcp::McpArgs),
    /// The cost of the OS sandbox per Bash call: sandboxed (read-only, writable) against
    /// unsandboxed, median and 90th percentile.
    Sandbox(sandbox::SandboxArgs),
    /// N in-process teammates exchange M messages each, round-robin, through their durable
    /// inboxes; reports messages/s, p50/p99/max delivery latency and peak RSS at two M.
    Team(team::TeamArgs),
    /// The terminal UI: keystroke to frame while subagents stream, paging a 20,000-line
    /// session, and memory over many frames.
    Tui(tui::TuiArgs),
    /// N isolated agents in one reply against the same N without isolation: wall time of
    /// creating and removing N worktrees, and a check that none is left.
    Worktrees(worktrees::WorktreesArgs),
    /// Remote workers on a local nats-server: N trivial jobs over W workers; jobs per second
    /// and queue-to-start latency p50/p99.
    Remote(remote::RemoteArgs),
}

#[derive(Debug, clap::Args)]
pub struct FanoutArgs {
    /// How many subagents the parent starts in its one Agent-calling turn.
    #[arg(long, default_value_t = 200)]
    agents: usize,
    /// Delay before every model response, in milliseconds (0: as fast as the server goes).
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Each subagent first does real work: Reads a 20 KB file and Greps a 50-file project, as
    /// the "bytes per agent" figure asks.
    #[arg(long)]
    work: bool,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// What every subagent's system prompt contains (and the parent's does not).
const CHILD_MARK: &str = "running as a subagent";

pub async fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Fanout(args) => fanout(args).await,
        BenchCommand::Fork(args) => fork::fork(args).await,
        BenchCommand::Long(args) => long::long(args).await,
        BenchCommand::Mcp(args) => mcp::mcp(args).await,
        BenchCommand::Sandbox(args) => sandbox::sandbox(args).await,
        BenchCommand::Team(args) => team::team(args).await,
        BenchCommand::Tui(args) => tui::tui(args),
        BenchCommand::Worktrees(args) => worktrees::worktrees(args).await,
        BenchCommand::Remote(args) => remote::remote(args).await,
    }
}

async fn fanout(args: FanoutArgs) -> anyhow::Result<()> {
    if args.agents == 0 {
        bail!("--agents must be at least 1");
    }
    raise_file_limit();
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let scenario = dir.path().join("fanout.json");
    let project = dir.path().join("project");
    let work = if args.work {
        Some(write_work_project(&project)?)
    } else {
        None
    };
    write_scenario(&scenario, args.agents, args.latency_ms, work.as_deref())?;
    let (mut server, base_url) = start_server(&scenario)?;
    let outcome = measure(&args, dir.path(), &base_url).await;
    let _ = server.kill();
    let _ = server.wait();
    let figures = outcome?;
    if args.json {
        println!("{figures}");
    } else {
        println!(
            "fanout: {} agents{}, {} ms model latency\n  wall time      {:.3} s\n  peak RSS       {:.1} MB (baseline {:.1} MB)\n  RSS per agent  {:.1} KB\n  completed      {} of {}",
            args.agents,
            if args.work {
                " (each Reads 20 KB and Greps 50 files)"
            } else {
                ""
            },
            args.latency_ms,
            figures["wall_s"].as_f64().unwrap_or_default(),
            figures["peak_rss_mb"].as_f64().unwrap_or_default(),
            figures["baseline_rss_mb"].as_f64().unwrap_or_default(),
            figures["rss_per_agent_kb"].as_f64().unwrap_or_default(),
            figures["completed"],
            args.agents,
        );
    }
    Ok(())
}

/// A project for `--work`: a 20 KB file to Read and 50 source files to Grep. Returns the
/// file to read.
fn write_work_project(project: &Path) -> anyhow::Result<PathBuf> {
    let src = project.join("src");
    std::fs::create_dir_all(&src).context("creating the project folder")?;
    for i in 0..50 {
        let body: String = (0..40)
            .map(|line| format!("fn item_{i}_{line}() -> u32 {{ {line} }} // needle {line}\n"))
            .collect();
        std::fs::write(src.join(format!("m{i}.rs")), body).context("writing the project")?;
    }
    let big = project.join("notes.txt");
    let text: String = (0..400)
        .map(|n| format!("{n:04} a line of notes that fills the file to twenty kilobytes\n"))
        .collect();
    std::fs::write(&big, &text[..20_000.min(text.len())]).context("writing the project")?;
    Ok(big)
}

/// The parent asks for N agents at once, each child answers at once (or, with `work`, first
/// Reads `work` and Greps the project), the parent sums up.
///
/// Written call by call: the whole scenario as one JSON value is ~3 KB per agent, freed before
/// the run but still counted in the process's peak RSS, which is meant to be fleet's own.
fn write_scenario(
    path: &Path,
    agents: usize,
    latency_ms: u64,
    work: Option<&Path>,
) -> anyhow::Result<()> {
    let file = std::fs::File::create(path).context("writing the scenario")?;
    let mut out = std::io::BufWriter::new(file);
    let mut rules = child_rules(latency_ms, work);
    rules.push(
        json!({"name": "summary", "when": {"has_tool_result": true}, "delay_ms": latency_ms,
               "respond": [{"text": "all jobs done"}]}),
    );
    let head = json!({"validate_requests": false, "request_log": "count_only",
                      "cache": {"enabled": false}});
    let head = head.to_string();
    let rules = serde_json::to_string(&rules)?;
    // `{…head…,"rules":[…rules…,{"name":"fanout",…,"respond":[calls]}]}`
    write!(
        out,
        "{},\"rules\":{},{{\"name\":\"fanout\",\"delay_ms\":{latency_ms},\"respond\":[",
        head.strip_suffix('}').unwrap_or(&head),
        rules.strip_suffix(']').unwrap_or(&rules),
    )?;
    for i in 0..agents {
        if i > 0 {
            out.write_all(b",")?;
        }
        let call = json!({"tool_use": {"name": "Agent", "input": {
            "description": format!("job {i}"),
            "prompt": format!("Do job {i} and report."),
        }}});
        serde_json::to_writer(&mut out, &call)?;
    }
    out.write_all(b"]}]}")?;
    out.flush().context("writing the scenario")?;
    Ok(())
}

/// What a child does: answer at once, or first read a file and search the project.
fn child_rules(latency_ms: u64, work: Option<&Path>) -> Vec<Value> {
    let done = json!({"name": "child", "when": {"system_contains": CHILD_MARK, "has_tool_result": work.is_some()},
                      "delay_ms": latency_ms, "respond": [{"text": "job done"}]});
    let Some(file) = work else {
        return vec![done];
    };
    let root = file
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    vec![
        done,
        json!({"name": "child-work", "when": {"system_contains": CHILD_MARK, "has_tool_result": false},
        "delay_ms": latency_ms, "respond": [
            {"tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}},
            {"tool_use": {"name": "Grep", "input": {"pattern": "needle 3", "path": root, "output_mode": "content"}}}
        ]}),
    ]
}

/// Runs `fleet dev fake-model` and reads the URL it prints.
///
/// `FLEET_BENCH_FAKE_MODEL` names another `fleet` binary to serve the model instead, so that
/// one client can be measured against two versions of the fake server.
fn start_server(scenario: &Path) -> anyhow::Result<(Child, String)> {
    let exe = match std::env::var_os("FLEET_BENCH_FAKE_MODEL") {
        Some(exe) => PathBuf::from(exe),
        None => std::env::current_exe().context("finding the fleet binary")?,
    };
    let mut child = Command::new(exe)
        .args(["dev", "fake-model", "--scenario"])
        .arg(scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the fake model server")?;
    let stdout = child
        .stdout
        .take()
        .context("reading the fake server's output")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("reading the fake server's address")?;
    let Some(url) = line.trim().strip_prefix("listening on ") else {
        let _ = child.kill();
        bail!("the fake model server did not start (it said {line:?})");
    };
    Ok((child, url.to_string()))
}

async fn measure(args: &FanoutArgs, dir: &Path, base_url: &str) -> anyhow::Result<Value> {
    let project = dir.join("project");
    std::fs::create_dir_all(&project).context("creating the project folder")?;
    let prepared = session::prepare(base_url, &project, "You coordinate jobs.", |mut config| {
        config.limits.spawn = SpawnLimits {
            max_depth: 3,
            max_concurrent: args.agents,
        };
        config.places.transcripts = Some(TranscriptTarget {
            home: FleetHome::at(dir.join("fleet-home")),
            project: project.clone(),
            session_id: "bench".into(),
        });
        config
    })?;
    let spawner = prepared.spawner.clone();

    let baseline = rss_kb("VmRSS")?;
    let started = Instant::now();
    let mut handle = prepared.start("Run the jobs.").await?;
    let mut last: Option<AgentEvent> = None;
    while let Some(event) = handle.recv().await {
        if event.agent.is_main() {
            last = Some(event);
        }
    }
    let wall = started.elapsed();
    let peak = rss_kb("VmHWM")?;
    let stats = spawner.ledger().stats();
    if stats.completed != args.agents as u64 {
        bail!(
            "only {} of {} subagents completed ({} failed, refused {:?}); last event: {last:?}",
            stats.completed,
            args.agents,
            stats.failed,
            stats.refused
        );
    }
    let per_agent = (peak.saturating_sub(baseline)) as f64 / args.agents as f64;
    // The subagents' tool calls: 0 plain, two each with `--work` (proof the work was done).
    let child_tool_uses: u64 = spawner
        .ledger()
        .report()
        .agents
        .iter()
        .filter(|a| a.agent_id != "main")
        .map(|a| a.tool_uses)
        .sum();
    Ok(json!({
        "agents": args.agents,
        "latency_ms": args.latency_ms,
        "wall_s": wall.as_secs_f64(),
        "peak_rss_mb": peak as f64 / 1024.0,
        "baseline_rss_mb": baseline as f64 / 1024.0,
        "rss_per_agent_kb": per_agent,
        "completed": stats.completed,
        "child_tool_uses": child_tool_uses,
    }))
}

/// A field of /proc/self/status in kB (`VmRSS` now, `VmHWM` the peak).
fn rss_kb(field: &str) -> anyhow::Result<u64> {
    status_kb("self", field)
}

/// A field of /proc/<pid>/status in kB (`pid` may be `self`).
fn status_kb(pid: &str, field: &str) -> anyhow::Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in {path}"))
}

/// Thousands of agents each hold a socket and, briefly, a transcript file.
fn raise_file_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}
