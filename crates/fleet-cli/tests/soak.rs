//! `fleet dev soak`, small: the harness runs real sessions (a fan-out whose children meet
//! every injected fault, a kill -9 followed by `--resume`, a team with mail, an MCP server)
//! as child processes against its fake model server, checks its invariants after each run,
//! and reports. The test asserts the report: every run accounted for, none failed or hung,
//! and an exit code of 0. Sizes are tiny; `fleet dev soak --short` is the CI soak itself
//! (see docs/soak.md).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::Command;

#[test]
fn a_small_soak_runs_every_kind_of_session_and_reports_no_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args([
        "dev",
        "soak",
        "--short",
        "--json",
        "--no-fuzz",
        "--runs",
        "2",
    ])
    .args(["--agents", "20", "--seed", "7"])
    .args(["--scenario", "faults", "--scenario", "kill-fanout"])
    .args(["--scenario", "team", "--scenario", "mcp"])
    .arg("--out")
    .arg(tmp.path().join("soak"))
    .current_dir(tmp.path())
    .env("HOME", tmp.path());
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr:\n{}", stderr(&out)));
    assert!(
        out.status.success(),
        "the soak failed:\n{report:#}\n{}",
        stderr(&out)
    );
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["faults", "team", "mcp", "kill-fanout"]);
    for s in report["scenarios"].as_array().unwrap() {
        assert_eq!(s["runs"], 2, "{s}");
        assert_eq!(s["failed"], 0, "{s}");
        assert_eq!(s["hangs"], 0, "{s}");
    }
    assert_eq!(report["failures"], serde_json::json!([]));
}
