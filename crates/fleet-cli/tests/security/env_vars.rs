//! Every numeric and on/off environment variable goes through one parser: a bad value stops
//! `fleet` before any request, with an error naming the variable, its value and what it takes.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};

/// (variable, bad value, words the error must hold besides `NAME="value"`).
const BAD: &[(&str, &str, &str)] = &[
    (
        "FLEET_STREAM_IDLE_TIMEOUT_MS",
        "0",
        "a number of milliseconds from 1 to",
    ),
    (
        "FLEET_CONNECT_TIMEOUT_MS",
        "10s",
        "a number of milliseconds from 1 to",
    ),
    (
        "FLEET_RETRY_BASE_DELAY_MS",
        "-1",
        "a number of milliseconds from 1 to",
    ),
    ("FLEET_MAX_RETRIES", "abc", "a whole number from 0 to 100"),
    (
        "BASH_MAX_OUTPUT_LENGTH",
        "-5",
        "a whole number from 1 to 150000",
    ),
    (
        "FLEET_MAX_TOOL_USE_CONCURRENCY",
        "0",
        "a whole number from 1 to",
    ),
    ("FLEET_MAX_SPAWN_DEPTH", "deep", "a whole number from 1 to"),
    (
        "FLEET_MAX_CONCURRENT_SUBAGENTS",
        "2.5",
        "a whole number from 1 to",
    ),
    ("FLEET_FORK_SUBAGENT", "yes", "1 or true"),
    ("FLEET_COORDINATOR_MODE", "on", "1 or true"),
    ("FLEET_NO_SESSION_PERSISTENCE", "maybe", "1 or true"),
    ("DISABLE_PROMPT_CACHING", "yes", "1 or true"),
    ("FLEET_LOG", "fleet=loud", "a log filter"),
];

#[tokio::test]
async fn each_bad_value_is_refused_by_name_before_any_request() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("never")])).await;
    for (name, value, expected) in BAD {
        let mut cmd = project.command(&server, &["-p", "hi"]);
        cmd.env(name, value);
        let out = tokio::task::spawn_blocking(move || {
            fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
        })
        .await
        .unwrap();
        let err = stderr(&out);
        assert!(!out.status.success(), "{name}={value} was accepted");
        assert!(err.contains(&format!("{name}={value:?}")), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    }
    assert_eq!(server.request_count(), 0);
    assert!(project.transcripts().is_empty(), "nothing was started");
}

#[tokio::test]
async fn several_bad_values_are_reported_together() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("never")])).await;
    let mut cmd = project.command(&server, &["sessions"]);
    cmd.env("FLEET_MAX_RETRIES", "many")
        .env("FLEET_FORK_SUBAGENT", "2");
    let out = tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
    })
    .await
    .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("FLEET_MAX_RETRIES=\"many\""), "{err}");
    assert!(err.contains("FLEET_FORK_SUBAGENT=\"2\""), "{err}");
}

#[tokio::test]
async fn good_values_and_blank_ones_run() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("fine")])).await;
    let mut cmd = project.command(&server, &["-p", "hi"]);
    cmd.env("FLEET_STREAM_IDLE_TIMEOUT_MS", "60000")
        .env("FLEET_CONNECT_TIMEOUT_MS", " 5000 ")
        .env("BASH_MAX_OUTPUT_LENGTH", "150000")
        .env("FLEET_FORK_SUBAGENT", "FALSE")
        .env("DISABLE_PROMPT_CACHING", "1")
        .env("FLEET_MAX_SPAWN_DEPTH", "");
    let out = tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "fine\n");
    let request = &server.requests()[0].body;
    assert!(
        !request.to_string().contains("cache_control"),
        "DISABLE_PROMPT_CACHING=1 was honoured: {request}"
    );
}
