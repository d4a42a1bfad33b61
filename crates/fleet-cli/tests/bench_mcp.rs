//! `fleet dev bench mcp`, run as the real binary with tiny numbers, against its default server
//! (fleet's own `mcp serve`) and against the fault server named by `--server-cmd`: the report
//! has its shape, its figures agree with each other, the start delays were applied, and no
//! server is left running. No timing threshold is asserted (speed is what the bench prints,
//! not what a test decides).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The bench in a scratch folder with its own HOME, fleet home and TMPDIR; also whether any
/// process still has its working folder in that scratch folder afterwards.
fn bench(args: &[&str]) -> (Output, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "mcp"])
        .args(args)
        .current_dir(&root)
        .env("HOME", &root)
        .env("FLEET_HOME", root.join("fleet-home"))
        .env("TMPDIR", &root);
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    let out = fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT * 3, "fleet dev bench");
    (out, processes_left(&root))
}

/// Processes still in `root` once the kernel has had a moment: fleet's last act is a SIGKILL
/// to its servers' groups, and a killed process takes a little while to finish exiting.
fn processes_left(root: &Path) -> Vec<String> {
    for _ in 0..50 {
        if processes_in(root).is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    processes_in(root)
}

/// Live processes whose working folder is under `root` (the bench's servers run in a
/// temporary folder there). Zombies are not counted: they run nothing.
fn processes_in(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if cwd.starts_with(root) && !zombie {
            found.push(format!("{pid} in {}", cwd.display()));
        }
    }
    found
}

fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// One path's figures: positive, ordered percentiles, a throughput that matches its wall time.
fn check_path(figures: &Value, calls: f64) {
    let mean = number(&figures["mean_ms"], "mean_ms");
    let p50 = number(&figures["p50_ms"], "p50_ms");
    let p99 = number(&figures["p99_ms"], "p99_ms");
    let max = number(&figures["max_ms"], "max_ms");
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= max && mean <= max,
        "{figures:#}"
    );
    let wall = number(&figures["wall_s"], "wall_s");
    let rate = number(&figures["calls_per_s"], "calls_per_s");
    assert!(wall > 0.0, "{figures:#}");
    assert!((rate * wall - calls).abs() < 1e-6, "{figures:#}");
}

fn check_report(report: &Value, tool: &str, calls: u64, servers: u64, step_ms: u64) {
    assert_eq!(report["tool"], tool, "{report:#}");
    assert_eq!(report["calls"], calls);
    assert_eq!(report["concurrency"], 2);
    check_path(&report["fleet"], calls as f64);
    check_path(&report["baseline"], calls as f64);
    let overhead = number(&report["overhead_per_call_ms"], "overhead");
    let fleet_mean = number(&report["fleet"]["mean_ms"], "fleet mean");
    let raw_mean = number(&report["baseline"]["mean_ms"], "raw mean");
    assert!(
        (overhead - (fleet_mean - raw_mean)).abs() < 1e-9,
        "{report:#}"
    );
    assert_eq!(report["target_overhead_ms"], 1.0);
    assert_eq!(report["overhead_under_target"], overhead < 1.0);

    let startup = &report["startup"];
    assert_eq!(startup["servers"], servers, "{startup:#}");
    let delays: Vec<u64> = (0..servers).map(|i| i * step_ms).collect();
    assert_eq!(startup["delays_ms"], serde_json::json!(delays));
    let alone: Vec<f64> = startup["alone_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| number(v, "alone_ms"))
        .collect();
    assert_eq!(alone.len() as u64, servers);
    for (ms, delay) in alone.iter().zip(&delays) {
        assert!(
            *ms >= *delay as f64,
            "a server delayed {delay} ms started in {ms} ms: the delay was not applied"
        );
    }
    let slowest = number(&startup["slowest_alone_ms"], "slowest");
    assert_eq!(slowest, alone.iter().copied().fold(0.0, f64::max));
    let together = number(&startup["together_ms"], "together");
    assert!(
        together >= delays.last().copied().unwrap_or(0) as f64,
        "all together cannot beat the slowest delay: {startup:#}"
    );
    let margin = number(&startup["margin_ms"], "margin");
    assert!((margin - (together - slowest)).abs() < 1e-9, "{startup:#}");
    assert_eq!(startup["under_target"], margin <= 50.0);
}

#[test]
fn fleet_mcp_serve_by_default_with_a_sane_report_and_nothing_left_running() {
    let (out, left) = bench(&[
        "--calls",
        "10",
        "--concurrency",
        "2",
        "--servers",
        "2",
        "--start-step-ms",
        "50",
        "--runs",
        "1",
        "--json",
    ]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));
    assert_eq!(report["server"], "fleet mcp serve", "{report:#}");
    check_report(&report, "Glob", 10, 2, 50);
    assert!(left.is_empty(), "servers left running: {left:?}");
}

#[test]
fn the_fault_server_through_server_cmd_and_the_text_report() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let fault = fault.display().to_string();
    let (out, left) = bench(&[
        "--server-cmd",
        &fault,
        "--calls",
        "12",
        "--concurrency",
        "2",
        "--servers",
        "3",
        "--start-step-ms",
        "40",
        "--runs",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(report["server"], fault.as_str());
    check_report(&report, "echo", 12, 3, 40);
    assert_eq!(report["startup"]["runs"], 2);
    assert_eq!(
        report["startup"]["together_runs_ms"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(left.is_empty(), "servers left running: {left:?}");

    let (out, _) = bench(&[
        "--server-cmd",
        &fault,
        "--calls",
        "3",
        "--concurrency",
        "2",
        "--servers",
        "1",
        "--runs",
        "1",
    ]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "3 calls of echo",
        "fleet ",
        "raw JSON-RPC",
        "overhead",
        "per call",
        "slowest alone",
        "all together",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn bad_numbers_and_an_unknown_tool_are_refused() {
    let (out, _) = bench(&["--calls", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("at least 1"), "{}", stderr(&out));
    let (out, left) = bench(&["--calls", "2", "--tool", "NoSuchTool"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("has no tool NoSuchTool"),
        "{}",
        stderr(&out)
    );
    assert!(left.is_empty(), "servers left running: {left:?}");
}
