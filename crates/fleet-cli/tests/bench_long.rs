//! `fleet dev bench long`, run as the real binary with a small window: an agent whose tool
//! output is many times its window finishes every turn, having compacted on the way.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::Command;

#[test]
fn a_long_run_compacts_and_finishes_every_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args([
        "dev",
        "bench",
        "long",
        "--turns",
        "120",
        "--file-kb",
        "8",
        "--window",
        "12000",
        "--json",
    ])
    .current_dir(tmp.path())
    .env("HOME", tmp.path())
    .env("FLEET_HOME", tmp.path().join("fleet-home"));
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    let out = fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT * 3, "fleet dev bench");
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));
    assert_eq!(report["turns"], 120);
    assert!(
        report["tool_output_windows"].as_f64().unwrap() > 20.0,
        "{report}"
    );
    assert!(report["compactions"].as_u64().unwrap() >= 1, "{report}");
    assert!(report["peak_rss_mb"].as_f64().unwrap() > 0.0);
    assert_eq!(report["rss_samples_mb"].as_array().unwrap().len(), 10);
}
