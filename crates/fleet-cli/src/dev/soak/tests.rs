//! The invariant checks on made-up evidence: each problem kind is found where it is, and
//! nothing is reported where all is well.
#![allow(clippy::unwrap_used)]

use super::checks::{self, Kind, Torn};
use super::child::{Ended, Outcome};
use serde_json::json;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

fn outcome(dir: &std::path::Path, code: i32, stdout: &str, stderr: &str) -> Outcome {
    std::fs::write(dir.join("out"), stdout).unwrap();
    std::fs::write(dir.join("err"), stderr).unwrap();
    Outcome {
        ended: Ended::Exited(ExitStatus::from_raw(code << 8)),
        stdout: dir.join("out"),
        stderr: dir.join("err"),
        wall: Duration::from_secs(1),
    }
}

fn kinds(problems: &[checks::Problem]) -> Vec<Kind> {
    problems.iter().map(|p| p.kind).collect()
}

#[test]
fn the_exit_code_must_match_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"type":"result","is_error":false,"result":"all jobs done"}"#;
    let err = r#"{"type":"result","is_error":true,"result":"Interrupted"}"#;
    let check = |code, out: &str, errtext: &str, want: &str| {
        kinds(&checks::exit_and_result(
            &outcome(dir.path(), code, out, errtext),
            want,
        ))
    };
    assert_eq!(check(0, ok, "", "all jobs done"), []);
    assert_eq!(check(0, ok, "", "something else"), [Kind::Failed]);
    assert_eq!(check(0, "", "", ""), [Kind::SilentFailure]);
    assert_eq!(check(0, err, "", ""), [Kind::SilentFailure]);
    assert_eq!(check(1, err, "", ""), [Kind::Failed]);
    assert_eq!(check(1, "", "error: ENOSPC", ""), [Kind::Failed]);
    assert_eq!(check(1, "", "", ""), [Kind::UnexplainedExit]);
}

#[test]
fn a_torn_last_line_is_tolerated_only_after_a_kill() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("projects/p/s.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
    assert_eq!(kinds(&checks::transcripts(home.path(), Torn::Anywhere)), []);
    assert_eq!(
        kinds(&checks::transcripts(home.path(), Torn::Nowhere)),
        [Kind::Lost]
    );
    // After the resume, the session's own transcript must be whole again...
    assert_eq!(
        kinds(&checks::transcripts(home.path(), Torn::InSubagentFiles)),
        [Kind::Lost]
    );
    std::fs::write(&path, "{\"a\":1}\n{\"b\":\n{\"c\":3}\n").unwrap();
    assert_eq!(
        kinds(&checks::transcripts(home.path(), Torn::Anywhere)),
        [Kind::Lost]
    );
    // ...while a killed subagent's file, which nothing writes again, may keep its cut line.
    std::fs::write(&path, "{\"a\":1}\n").unwrap();
    let child = home.path().join("projects/p/s/subagents/agent-a1.jsonl");
    std::fs::create_dir_all(child.parent().unwrap()).unwrap();
    std::fs::write(&child, "{\"a\":1}\n{\"b\":").unwrap();
    assert_eq!(
        kinds(&checks::transcripts(home.path(), Torn::InSubagentFiles)),
        []
    );
    std::fs::write(&child, "{\"a\":1}\n{\"b\":\n{\"c\":3}\n").unwrap();
    assert_eq!(
        kinds(&checks::transcripts(home.path(), Torn::InSubagentFiles)),
        [Kind::Lost]
    );
}

#[test]
fn an_unanswered_tool_use_in_a_resumed_request_is_found() {
    let messages = |answered: bool| {
        let mut next = vec![json!({"type": "text", "text": "SOAK-RESUME: carry on."})];
        if answered {
            next.insert(
                0,
                json!({"type": "tool_result", "tool_use_id": "t1", "content": "x"}),
            );
        }
        json!([
            {"role": "user", "content": "Run the jobs."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]},
            {"role": "user", "content": next},
        ])
    };
    let req =
        |answered| json!([{"seq": 7, "status": 200, "body": {"messages": messages(answered)}}]);
    assert_eq!(
        kinds(&checks::resumed_requests_valid(
            req(true).as_array().unwrap(),
            "SOAK-RESUME"
        )),
        []
    );
    assert_eq!(
        kinds(&checks::resumed_requests_valid(
            req(false).as_array().unwrap(),
            "SOAK-RESUME"
        )),
        [Kind::InvalidResume]
    );
}

#[test]
fn a_background_agent_that_never_reports_is_found() {
    let req = |notes: &str| {
        json!([{"seq": 3, "body": {"messages": [
            {"role": "user", "content": "Start the jobs."},
            {"role": "user", "content": format!("Started background agent a1 (general-purpose): job 0. Started background agent a2 (general-purpose): job 1. {notes}")},
        ]}}])
    };
    let both = req(
        "<task-notification>\n<task-id>a1</task-id> <task-notification>\n<task-id>a2</task-id>",
    );
    assert_eq!(
        kinds(&checks::every_task_reported(both.as_array().unwrap())),
        []
    );
    let one = req("<task-notification>\n<task-id>a1</task-id>");
    assert_eq!(
        kinds(&checks::every_task_reported(one.as_array().unwrap())),
        [Kind::Lost]
    );
}

#[test]
fn rule_counts_come_from_the_request_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    std::fs::write(
        &log,
        "{\"event\":\"received\",\"seq\":1,\"rule\":\"child-done\",\"status\":200}\n\
         {\"event\":\"received\",\"seq\":2,\"rule\":\"child-done\",\"status\":529}\n\
         {\"event\":\"finished\",\"seq\":1,\"ended\":\"complete\"}\n",
    )
    .unwrap();
    assert_eq!(kinds(&checks::rule_counts(&log, &[("child-done", 1)])), []);
    assert_eq!(
        kinds(&checks::rule_counts(&log, &[("child-done", 2)])),
        [Kind::Lost]
    );
    let (received, finished, open) =
        super::hang::in_flight(&std::fs::read_to_string(&log).unwrap());
    assert_eq!((received, finished, open), (2, 1, vec![2]));
}

/// A session run as a real process: `exe` in a scratch run folder.
fn session_run(exe: &str, args: &[&str], idle: Duration) -> (tempfile::TempDir, Outcome) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    std::fs::write(&log, "").unwrap();
    let env = Vec::new();
    let exe = std::path::PathBuf::from(exe);
    let marker = format!("soak-selftest-{}", std::process::id());
    let session = super::child::Session {
        exe: &exe,
        dir: dir.path(),
        repo: dir.path(),
        base_url: "http://127.0.0.1:9",
        marker: &marker,
        env: &env,
        request_log: &log,
    };
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let capture_to = dir.path().join("hang.txt");
    let outcome = session
        .run(
            "first",
            &args,
            Duration::from_secs(120),
            idle,
            None,
            |pid| super::hang::capture(pid, &log, capture_to),
        )
        .unwrap();
    (dir, outcome)
}

#[test]
fn a_session_that_makes_no_progress_is_a_hang_captured_then_killed() {
    let (dir, outcome) = session_run("sleep", &["600"], Duration::from_secs(2));
    let problems = checks::exit_and_result(&outcome, "");
    assert_eq!(kinds(&problems), [Kind::Hang]);
    assert!(problems[0].detail.contains("no progress"), "{problems:?}");
    let capture = std::fs::read_to_string(dir.path().join("hang.txt")).unwrap();
    assert!(capture.contains("== threads of"), "{capture}");
    let marker = format!("soak-selftest-{}", std::process::id());
    assert!(super::child::marked_processes(&marker).is_empty());
}

#[test]
fn a_real_exit_0_without_a_result_is_a_silent_failure() {
    let (_dir, outcome) = session_run("true", &[], Duration::from_secs(60));
    assert_eq!(
        kinds(&checks::exit_and_result(&outcome, "")),
        [Kind::SilentFailure]
    );
}
