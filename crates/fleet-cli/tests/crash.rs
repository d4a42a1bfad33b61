//! A panic that escapes every guard (here forced by a debug-build failpoint between a reply's
//! tool calls being committed and their answers) ends the run with an error result and a
//! non-zero exit, in every output format, and the saved conversation resumes cleanly.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

const ID: &str = "6a1f3c0e-5b2d-4e8f-9a71-0c2d4e6f8a10";

fn scenario() -> Scenario {
    Scenario::with_rules([
        Rule::text("resumed fine").when_last_user_contains("go on"),
        Rule::tool_use("Bash", json!({"command": "echo hi"})),
    ])
}

#[tokio::test]
async fn an_escaped_panic_is_an_error_result_with_a_failing_exit_in_json() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "say hi",
                "--output-format",
                "json",
                "--session-id",
                ID,
                "--permission-mode",
                "bypassPermissions",
            ],
            &[("FLEET_FAILPOINT", "before-tool-calls")],
        )
        .await;
    assert!(!out.status.success(), "a crash must not exit 0");
    let lines = json_lines(&out);
    let result = result_of(&lines);
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["result"].as_str().unwrap();
    assert!(text.contains("failpoint before-tool-calls"), "{text}");
    assert!(text.contains(&format!("--resume {ID}")), "{text}");

    // The transcript ends in a reply whose call was never answered; resuming must still give
    // the API a valid conversation (every tool_use answered) and go on.
    let out = project
        .run(
            &server,
            &[
                "-p",
                "go on",
                "--resume",
                ID,
                "--permission-mode",
                "bypassPermissions",
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "resumed fine\n");
    let messages = server.last_request().unwrap().body["messages"].clone();
    assert_every_tool_use_answered(messages.as_array().unwrap());
}

#[tokio::test]
async fn an_escaped_panic_fails_text_and_stream_json_runs_too() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let env = [("FLEET_FAILPOINT", "before-tool-calls")];
    let text = project
        .run_with_env(
            &server,
            &["-p", "say hi", "--permission-mode", "bypassPermissions"],
            &env,
        )
        .await;
    assert!(!text.status.success());
    assert!(
        stderr(&text).contains("stopped unexpectedly")
            || stdout(&text).contains("stopped unexpectedly"),
        "stdout: {}\nstderr: {}",
        stdout(&text),
        stderr(&text)
    );
    let stream = project
        .run_with_env(
            &server,
            &[
                "-p",
                "say hi",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "bypassPermissions",
            ],
            &env,
        )
        .await;
    assert!(!stream.status.success());
    let lines = json_lines(&stream);
    let last = lines.last().unwrap();
    assert_eq!(
        last["type"], "result",
        "the result is the last line: {last}"
    );
    assert_eq!(last["is_error"], true);
}

/// Every `tool_use` of an assistant message has its `tool_result` in the next user message.
fn assert_every_tool_use_answered(messages: &[serde_json::Value]) {
    for (i, message) in messages.iter().enumerate() {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
            let id = &block["id"];
            let answered = messages
                .get(i + 1)
                .and_then(|m| m["content"].as_array())
                .is_some_and(|next| {
                    next.iter()
                        .any(|b| b["type"] == "tool_result" && &b["tool_use_id"] == id)
                });
            assert!(answered, "tool_use {id} is not answered: {messages:?}");
        }
    }
}
