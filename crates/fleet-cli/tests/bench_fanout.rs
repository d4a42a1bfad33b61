//! `fleet dev bench fanout`, run as the real binary with tiny numbers, plain and with `--work`
//! (each subagent Reads and Greps before it answers): every subagent completes and the report
//! has its figures. No timing is asserted.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::Command;

fn bench(args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "fanout", "--json"])
        .args(args)
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("FLEET_HOME", tmp.path().join("fleet-home"))
        .env("TMPDIR", tmp.path());
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    let out = fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT * 3, "fleet dev bench");
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

#[test]
fn every_subagent_completes_with_and_without_work() {
    for (args, tool_uses) in [
        (&["--agents", "3"][..], 0),
        (&["--agents", "3", "--work"][..], 6),
    ] {
        let figures = bench(args);
        assert_eq!(figures["completed"], 3, "{args:?}: {figures:#}");
        assert_eq!(
            figures["child_tool_uses"], tool_uses,
            "{args:?}: {figures:#}"
        );
        assert!(
            figures["peak_rss_mb"].as_f64().unwrap() > 0.0,
            "{figures:#}"
        );
    }
}
