//! `fleet dev bench worktrees`, run as the real binary with a tiny N: the report has its shape,
//! every child completed in both runs and no worktree, branch or record is left. No timing is
//! asserted (speed is what the bench prints, not what a test decides).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::{Command, Output};

/// The bench in a scratch folder with its own HOME and fleet home.
fn bench(args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "worktrees"])
        .args(args)
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("FLEET_HOME", tmp.path().join("fleet-home"))
        .env("TMPDIR", tmp.path());
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT * 3, "fleet dev bench")
}

fn seconds(value: &Value, what: &str) -> f64 {
    let s = value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"));
    assert!(s > 0.0, "{what} is not positive: {s}");
    s
}

#[test]
fn isolated_and_plain_runs_are_both_timed_and_nothing_is_left_behind() {
    let out = bench(&["--agents", "3", "--runs", "2", "--json"]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));

    assert_eq!(report["agents"], 3, "{report:#}");
    assert_eq!(report["runs"], 2);
    assert_eq!(report["completed"], 3);
    let isolated = seconds(&report["isolated_wall_s"], "isolated_wall_s");
    let plain = seconds(&report["plain_wall_s"], "plain_wall_s");
    let difference = report["difference_s"].as_f64().unwrap();
    assert!((difference - (isolated - plain)).abs() < 1e-9, "{report:#}");
    let per_agent = report["difference_per_agent_ms"].as_f64().unwrap();
    assert!(
        (per_agent - difference * 1000.0 / 3.0).abs() < 1e-6,
        "{report:#}"
    );
    for key in ["isolated_runs_s", "plain_runs_s"] {
        let runs = report[key].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{key}: {report:#}");
        for run in runs {
            seconds(run, key);
        }
    }
    let left = &report["left_behind"];
    assert_eq!(left["worktrees"], 0, "{report:#}");
    assert_eq!(left["branches"], 0, "{report:#}");
    assert_eq!(left["records"], 0, "{report:#}");
    assert_eq!(left["checkout_clean"], true, "{report:#}");
    assert_eq!(left["clean"], true, "{report:#}");
    assert_eq!(report["target_s"], 5.0);
    assert!(report["under_target"].is_boolean());
}

#[test]
fn the_text_report_names_both_figures_and_a_bad_count_is_refused() {
    let out = bench(&["--agents", "2", "--runs", "1"]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "isolated",
        "not isolated",
        "per agent",
        "left behind    0 worktrees, 0 branches, 0 records",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }

    let out = bench(&["--agents", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("at least 1"), "{}", stderr(&out));
}
