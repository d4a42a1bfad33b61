//! `fleet dev bench team`, run as the real binary with tiny numbers: the report has its shape
//! and every message was delivered exactly once. No timing is asserted (speed is what the
//! bench prints, not what a test decides).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::{Command, Output};

/// The bench in a scratch folder with its own HOME and fleet home.
fn bench(args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "team"])
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

fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

fn check_phase(phase: &Value, mode: &str, members: u64, per_member: u64) {
    assert_eq!(phase["mode"], mode, "{phase:#}");
    assert_eq!(phase["messages_per_member"], per_member, "{phase:#}");
    assert_eq!(phase["messages"], members * per_member, "{phase:#}");
    assert_eq!(phase["delivered"], members * per_member, "{phase:#}");
    assert_eq!(phase["exactly_once"], true, "{phase:#}");
    let latency = &phase["latency"];
    let p50 = number(&latency["p50_ms"], "p50");
    let p99 = number(&latency["p99_ms"], "p99");
    let max = number(&latency["max_ms"], "max");
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= max,
        "percentiles out of order: {phase:#}"
    );
    assert!(number(&phase["messages_per_s"], "messages_per_s") > 0.0);
    assert!(number(&phase["peak_rss_mb"], "peak_rss_mb") > 0.0);
    assert!(phase["p99_under_target"].is_boolean(), "{phase:#}");
}

#[test]
fn every_message_reaches_its_addressee_exactly_once_and_the_report_has_its_figures() {
    let out = bench(&["--members", "4", "--messages", "30", "--json"]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));

    assert_eq!(report["members"], 4);
    assert_eq!(report["messages_per_member"], 30);
    check_phase(&report["small"], "unpaced", 4, 3);
    check_phase(&report["unpaced"], "unpaced", 4, 30);
    check_phase(&report["paced"], "paced", 4, 30);
    assert!(number(&report["paced"]["offered_per_s"], "offered_per_s") > 0.0);
    assert_eq!(report["target_p99_ms"], 10.0);
}

#[test]
fn the_text_report_names_each_phase_and_the_paced_phase_can_be_skipped() {
    let out = bench(&["--members", "3", "--messages", "10", "--paced-share", "0"]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("unpaced"), "{text}");
    assert!(text.contains("30 of 30 delivered exactly once"), "{text}");
    assert!(text.contains("peak RSS"), "{text}");
    assert!(
        !text
            .lines()
            .any(|line| line.trim_start().starts_with("paced")),
        "the paced phase ran: {text}"
    );
}

#[test]
fn bad_sizes_are_refused_naming_the_flag() {
    for (args, flag) in [
        (["--members", "1", "--messages", "5"], "--members"),
        (["--members", "3", "--messages", "0"], "--messages"),
    ] {
        let out = bench(&args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
    }
}
