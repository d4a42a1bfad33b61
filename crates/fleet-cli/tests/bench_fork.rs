//! `fleet dev bench fork`, run as the real binary: forks must find their parent's history in
//! the prompt cache, and so cost less than fresh subagents handed the same text.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, SCRUBBED};
use serde_json::Value;
use std::process::{Command, Output};

/// The bench in a scratch folder with its own HOME and fleet home, and no credentials or
/// provider settings from the developer's environment (it runs its own fake server).
fn bench(args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(["dev", "bench", "fork"])
        .args(args)
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .env("FLEET_HOME", tmp.path().join("fleet-home"));
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

#[test]
fn forks_read_the_parents_history_from_cache_and_cost_less_than_fresh_agents() {
    let out = bench(&["--forks", "3", "--history-kb", "32", "--json"]);
    assert!(out.status.success(), "bench failed: {}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {}", stdout(&out)));

    let forks = report["fork"]["children"].as_array().unwrap();
    assert_eq!(forks.len(), 3, "{report:#}");
    for child in forks {
        assert_eq!(child["subagent_type"], "fork", "{child:#}");
        let share = number(&child["cache_read_share"], "cache_read_share");
        assert!(
            share >= 0.95,
            "a fork read only {share} from cache: {child:#}"
        );
    }
    assert_eq!(report["fresh"]["children"].as_array().unwrap().len(), 3);

    let fork_billed = number(&report["fork"]["children_total"]["billed"], "fork billed");
    let fresh_billed = number(&report["fresh"]["children_total"]["billed"], "fresh billed");
    assert!(
        fork_billed < fresh_billed,
        "forks billed {fork_billed}, fresh agents {fresh_billed}: {report:#}"
    );
    assert_eq!(report["every_fork_reached_target"], true);
}

#[test]
fn bad_sizes_are_refused_naming_the_flag() {
    for (args, flag) in [
        (["--forks", "0", "--history-kb", "4"], "--forks"),
        (["--forks", "2", "--history-kb", "0"], "--history-kb"),
    ] {
        let out = bench(&args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
    }
}
