//! `fleet dev bench long --turns N`: one agent working for N turns, each reading a file, so its
//! tool output adds up to many times the model's context window. Compaction has to keep it
//! going; the figures say what that costs: peak RSS (it should stop growing once compaction
//! starts), RSS sampled along the run, and the wall time per turn, against the fake model
//! server running as a separate process (its memory is not counted).

use super::{rss_kb, session, start_server};
use anyhow::{bail, Context};
use fleet_model::{Catalog, ModelInfo};
use fleet_protocol::{EventKind, ResultSubtype};
use fleet_runtime::compact::COMPACT_REQUEST_MARKER;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct LongArgs {
    /// How many turns the agent runs (each but the last reads the file).
    #[arg(long, default_value_t = 1000)]
    turns: u32,
    /// The size of the file read on every turn, in KiB.
    #[arg(long, default_value_t = 16)]
    file_kb: usize,
    /// The model's context window in tokens (the catalogue's figure is replaced; the fake
    /// server refuses anything larger).
    #[arg(long, default_value_t = 50_000)]
    window: u64,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// RSS samples taken along the run.
const SAMPLES: u32 = 10;

pub async fn long(args: LongArgs) -> anyhow::Result<()> {
    if args.turns < 2 {
        bail!("--turns must be at least 2");
    }
    let dir = tempfile::tempdir().context("creating a temporary folder")?;
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).context("creating the project folder")?;
    let file = project.join("big.txt");
    std::fs::write(&file, file_text(args.file_kb * 1024)).context("writing the file")?;
    let scenario = dir.path().join("long.json");
    let window = args.window.max(4_096);
    std::fs::write(
        &scenario,
        scenario_json(args.turns, &file, window).to_string(),
    )
    .context("writing the scenario")?;
    let (mut server, base_url) = start_server(&scenario)?;
    let outcome = measure(&args, &project, &base_url, window).await;
    let _ = server.kill();
    let _ = server.wait();
    let figures = outcome?;
    if args.json {
        println!("{figures}");
    } else {
        print_figures(&args, &figures);
    }
    Ok(())
}

fn print_figures(args: &LongArgs, figures: &Value) {
    let number = |key: &str| figures[key].as_f64().unwrap_or_default();
    println!(
        "long: {} turns reading {} KiB each ({} tokens of tool output, {:.1}× the {}-token window)\n  wall time        {:.2} s\n  per turn         {:.2} ms\n  compactions      {}\n  peak RSS         {:.1} MB (baseline {:.1} MB)\n  RSS along the run {}",
        args.turns,
        args.file_kb,
        figures["tool_output_tokens"],
        number("tool_output_windows"),
        figures["window_tokens"],
        number("wall_s"),
        number("per_turn_ms"),
        figures["compactions"],
        number("peak_rss_mb"),
        number("baseline_rss_mb"),
        figures["rss_samples_mb"],
    );
}

/// Lines of text adding up to `bytes`.
fn file_text(bytes: usize) -> String {
    let line = "the quick brown fox jumps over the lazy dog, again and again.\n";
    line.repeat(bytes / line.len() + 1)
}

/// The model reads the file on every turn but the last, and writes a summary whenever asked;
/// the server refuses any request over the window, as the API does.
fn scenario_json(turns: u32, file: &Path, window: u64) -> Value {
    json!({
        "validate_requests": false,
        "request_log": "count_only",
        "cache": {"enabled": false},
        "context_window": window,
        "rules": [
            {"name": "summary", "when": {"last_user_contains": COMPACT_REQUEST_MARKER},
             "respond": [{"text": "Summary: the user wants the file read again and again; keep reading."}]},
            {"name": "read", "times": turns - 1,
             "respond": [{"tool_use": {"name": "Read", "input": {"file_path": file}}}]},
            {"name": "done", "respond": [{"text": "read it all"}]},
        ]
    })
}

async fn measure(
    args: &LongArgs,
    project: &Path,
    base_url: &str,
    window: u64,
) -> anyhow::Result<Value> {
    let mut catalog = Catalog::builtin();
    catalog.insert(ModelInfo {
        context_window: window,
        ..catalog.info(session::MODEL)
    });
    let prepared =
        session::prepare_with(base_url, project, "You read files.", catalog, |config| {
            config
        })?;
    let baseline = rss_kb("VmRSS")?;
    let started = Instant::now();
    let mut handle = prepared.start("Read big.txt over and over.").await?;
    let every = (args.turns / SAMPLES).max(1);
    let mut replies = 0u32;
    let mut samples = Vec::new();
    let mut compactions = 0u32;
    let mut tool_output_bytes = 0u64;
    let mut result = None;
    while let Some(event) = handle.recv().await {
        if !event.agent.is_main() {
            continue;
        }
        match event.kind {
            EventKind::MessageCommitted(committed) if committed.reply.is_some() => {
                replies += 1;
                if replies.is_multiple_of(every) {
                    samples.push(rss_kb("VmRSS")? as f64 / 1024.0);
                }
            }
            EventKind::ToolResult(tool) => tool_output_bytes += tool.content.len() as u64,
            EventKind::CompactBoundary(_) => {
                compactions += 1;
            }
            EventKind::Finished(finished) => result = Some(finished),
            _ => {}
        }
    }
    let wall = started.elapsed();
    let peak = rss_kb("VmHWM")?;
    let result = result.context("the session ended without a result")?;
    if result.subtype != ResultSubtype::Success || result.num_turns != args.turns {
        bail!(
            "the run did not finish its {} turns: {:?} after {} turns: {}",
            args.turns,
            result.subtype,
            result.num_turns,
            result.result
        );
    }
    let tool_output_tokens = tool_output_bytes / 4;
    Ok(json!({
        "turns": args.turns,
        "file_kb": args.file_kb,
        "window_tokens": window,
        "tool_output_tokens": tool_output_tokens,
        "tool_output_windows": tool_output_tokens as f64 / window as f64,
        "compactions": compactions,
        "wall_s": wall.as_secs_f64(),
        "per_turn_ms": wall.as_secs_f64() * 1000.0 / f64::from(args.turns),
        "peak_rss_mb": peak as f64 / 1024.0,
        "baseline_rss_mb": baseline as f64 / 1024.0,
        "rss_samples_mb": samples.iter().map(|mb| (mb * 10.0).round() / 10.0).collect::<Vec<_>>(),
        "cost_usd": result.total_cost_usd,
    }))
}
