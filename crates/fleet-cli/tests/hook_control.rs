//! Hooks that steer the run, end to end against the fake model server: `continue: false` from
//! tool hooks, messages for the user (`systemMessage`, errors), `suppressOutput`, a hook's
//! `allow` in dontAsk mode, and the exact shape of the stream-json hook lines.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn project_with_settings(settings: Value) -> Project {
    Project::with_settings(&settings)
}

fn hook(matcher: &str, command: &str) -> Value {
    json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}])
}

fn answer(value: Value) -> String {
    format!("echo '{value}'")
}

fn system_lines<'a>(lines: &'a [Value], subtype: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == subtype)
        .collect()
}

const STREAM: [&str; 4] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-hook-events",
];

fn args<'a>(prompt: &'a str, mode: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-p", prompt, "--permission-mode", mode];
    args.extend_from_slice(extra);
    args
}

#[tokio::test]
async fn a_post_tool_use_continue_false_stops_the_agent_after_the_call() {
    let stop = answer(json!({"continue": false, "stopReason": "enough for today"}));
    let project = project_with_settings(json!({"hooks": {"PostToolUse": hook("Bash", &stop)}}));
    let server = server(Scenario::with_rules([
        Rule::text("NEVER ASKED").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo ran > ran.txt"})),
    ]))
    .await;
    let out = project
        .run(&server, &args("go", "bypassPermissions", &STREAM), "")
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    // The call ran, its result is in the conversation, and no further request was made.
    assert_eq!(project.read("ran.txt").trim(), "ran");
    assert_eq!(server.requests().len(), 1);
    let lines = json_lines(&out);
    let results = tool_result_texts(&lines, |_| true);
    assert_eq!(results.len(), 1, "{lines:#?}");
    let result = result_of(&lines);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["terminal_reason"], "hook_stopped");
    let notes = system_lines(&lines, "informational");
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!(
        notes[0]["content"],
        "PostToolUse:Bash hook stopped the agent: enough for today"
    );
    assert_eq!(notes[0]["prevent_continuation"], true);
    assert_eq!(notes[0]["level"], "warning");

    // In text mode the reason reaches the user on stderr, naming the hook.
    let out = project
        .run(&server, &args("go", "bypassPermissions", &[]), "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("fleet: PostToolUse:Bash hook stopped the agent: enough for today"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 2, "one request per run");
}

#[tokio::test]
async fn a_pre_tool_use_continue_false_refuses_the_call_and_the_rest_of_the_reply() {
    let stop = answer(json!({"continue": false, "stopReason": "frozen"}));
    let project = project_with_settings(json!({"hooks": {"PreToolUse": hook("Bash", &stop)}}));
    let server = server(Scenario::with_rules([
        Rule::text("NEVER ASKED").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "touch first.txt"}))
            .then_tool_use("Write", json!({"file_path": "second.txt", "content": "x"})),
    ]))
    .await;
    let out = project
        .run(&server, &args("go", "bypassPermissions", &STREAM), "")
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(!project.repo.join("first.txt").exists());
    assert!(
        !project.repo.join("second.txt").exists(),
        "a later call of the reply ran"
    );
    assert_eq!(server.requests().len(), 1);
    let lines = json_lines(&out);
    let texts = tool_result_texts(&lines, |_| true);
    assert_eq!(texts.len(), 2, "every call is answered: {lines:#?}");
    assert!(texts[0].contains("frozen"), "{texts:?}");
    assert!(texts[1].contains("a hook stopped the agent"), "{texts:?}");
    assert_eq!(result_of(&lines)["terminal_reason"], "hook_stopped");
}

#[tokio::test]
async fn system_messages_and_hook_errors_are_shown_to_the_user() {
    let project = project_with_settings(json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
    "hooks": [
        {"type": "command", "command": answer(json!({"systemMessage": "remember the tests"}))},
        {"type": "command", "command": "echo boom >&2; exit 1"}
    ]}]}}));
    let server = server(Scenario::with_rules([
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo ok"})),
    ]))
    .await;
    let out = project
        .run(&server, &args("go", "bypassPermissions", &[]), "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("fleet: PreToolUse:Bash hook: remember the tests\n"),
        "{err}"
    );
    assert!(
        err.contains("fleet: PreToolUse:Bash hook: error (exit 1): boom\n"),
        "{err}"
    );
    assert_eq!(stdout(&out).trim(), "DONE");

    // stream-json: one informational line each, without --include-hook-events too.
    let out = project
        .run(&server, &args("go", "bypassPermissions", &STREAM[..3]), "")
        .await;
    let lines = json_lines(&out);
    let notes: BTreeSet<String> = system_lines(&lines, "informational")
        .iter()
        .map(|l| l["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        notes,
        BTreeSet::from([
            "PreToolUse:Bash hook: remember the tests".to_string(),
            "PreToolUse:Bash hook: error (exit 1): boom".to_string(),
        ])
    );
    assert!(system_lines(&lines, "hook_started").is_empty());
}

/// The hook lines carry exactly the Agent SDK's fields (`SDKHookStartedMessage`,
/// `SDKHookResponseMessage` in sdk.d.ts), and `outcome` is one of its three values.
#[tokio::test]
async fn hook_lines_have_the_sdk_fields_and_suppress_output_hides_stdout() {
    let quiet = answer(json!({"suppressOutput": true, "systemMessage": "quietly checked"}));
    let project = project_with_settings(json!({"hooks": {
        "PreToolUse": hook("Bash", &quiet),
        "PostToolUse": hook("Bash", "echo 'no more' >&2; exit 2"),
    }}));
    let server = server(Scenario::with_rules([
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo ok"})),
    ]))
    .await;
    let out = project
        .run(&server, &args("go", "bypassPermissions", &STREAM), "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let keys =
        |line: &Value| -> BTreeSet<String> { line.as_object().unwrap().keys().cloned().collect() };
    let started = system_lines(&lines, "hook_started");
    let responses = system_lines(&lines, "hook_response");
    assert_eq!((started.len(), responses.len()), (2, 2), "{lines:#?}");
    let started_keys = [
        "type",
        "subtype",
        "hook_id",
        "hook_name",
        "hook_event",
        "uuid",
    ];
    let mut want: BTreeSet<String> = started_keys.iter().map(|k| k.to_string()).collect();
    want.insert("session_id".into());
    assert_eq!(keys(started[0]), want);
    for key in ["output", "stdout", "stderr", "exit_code", "outcome"] {
        want.insert(key.into());
    }
    for response in &responses {
        assert_eq!(keys(response), want);
    }
    let pre = responses
        .iter()
        .find(|r| r["hook_event"] == "PreToolUse")
        .unwrap();
    assert_eq!(pre["outcome"], "success");
    assert_eq!(pre["stdout"], "", "suppressOutput hides the JSON answer");
    assert_eq!(pre["output"], "");
    let post = responses
        .iter()
        .find(|r| r["hook_event"] == "PostToolUse")
        .unwrap();
    assert_eq!(post["outcome"], "error", "exit 2 is an error outcome");
    assert_eq!(post["exit_code"], 2);
    // The message itself is still shown.
    let notes = system_lines(&lines, "informational");
    assert_eq!(notes[0]["content"], "PreToolUse:Bash hook: quietly checked");
}

#[tokio::test]
async fn a_hook_allow_runs_a_call_in_dont_ask_mode_but_never_lifts_a_deny_rule() {
    let allow = answer(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow"}}));
    let project = project_with_settings(json!({
        "hooks": {"PreToolUse": hook("Bash", &allow)},
        "permissions": {"deny": ["Bash(touch *)"]}
    }));
    let server = server(Scenario::with_rules([
        Rule::text("DONE").when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "echo allowed > allowed.txt"}))
            .then_tool_use("Bash", json!({"command": "touch denied.txt"})),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &args("go", "dontAsk", &["--output-format", "json"]),
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project.read("allowed.txt").trim(), "allowed");
    assert!(!project.repo.join("denied.txt").exists());
    let result = result_of(&json_lines(&out)).clone();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{result:#}");
    assert_eq!(denials[0]["tool_input"]["command"], "touch denied.txt");

    // Without the hook, dontAsk refuses the same command.
    let plain = project_with_settings(json!({}));
    let out = plain
        .run(
            &server,
            &args("go", "dontAsk", &["--output-format", "json"]),
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!plain.repo.join("allowed.txt").exists());
}

#[tokio::test]
async fn a_hook_allow_does_not_widen_a_read_only_agent() {
    let allow = answer(json!({"hookSpecificOutput": {"permissionDecision": "allow"}}));
    let project = project_with_settings(json!({"hooks": {"PreToolUse": hook("Bash", &allow)}}));
    let server = server(Scenario::with_rules([
        Rule::text("EXPLORED")
            .when_marker("EXPLORE-TASK")
            .when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": "touch explored.txt"}))
            .when_marker("EXPLORE-TASK"),
        Rule::text("MAIN-DONE").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "look around", "prompt": "EXPLORE-TASK: look",
                   "subagent_type": "Explore"}),
        ),
    ]))
    .await;
    let out = project
        .run(
            &server,
            &args("go", "bypassPermissions", &["--output-format", "json"]),
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(result_of(&json_lines(&out))["result"], "MAIN-DONE");
    assert!(
        !project.repo.join("explored.txt").exists(),
        "a hook's allow let a read-only agent write"
    );
}
