//! `fleet dev bench remote`, run as the real binary with a tiny N: every job completed, the
//! report has its figures, and no worker is left running. No timing is asserted.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::Command;

#[test]
fn a_small_batch_completes_and_is_reported() {
    if fleet_testkit::nats_server_binary().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "remote", "--jobs", "6", "--workers", "2"])
        .args(["--slots", "2", "--samples", "3", "--json"])
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("FLEET_HOME", tmp.path().join("fleet-home"))
        .env("TMPDIR", tmp.path());
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    let out = fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT * 3, "fleet dev bench");
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));
    assert_eq!(report["jobs"], 6, "{report:#}");
    assert_eq!(report["workers"], 2);
    assert_eq!(report["failed"], 0);
    assert!(report["jobs_per_s"].as_f64().unwrap() > 0.0, "{report:#}");
    for key in ["start_latency_under_load_ms", "start_latency_free_slot_ms"] {
        let p50 = report[key]["p50"].as_u64().unwrap();
        let p99 = report[key]["p99"].as_u64().unwrap();
        assert!(p50 <= p99, "{key}: {report:#}");
    }
    assert_eq!(report["worker_peak_rss_mb"].as_array().unwrap().len(), 2);
    // The workers were stopped with the bench: none still runs from this folder.
    let home = tmp.path().display().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let is_worker = String::from_utf8_lossy(&cmdline).contains("worker");
        assert!(
            !(is_worker && String::from_utf8_lossy(&environ).contains(&home)),
            "a worker outlived the bench: {}",
            String::from_utf8_lossy(&cmdline)
        );
    }
}
