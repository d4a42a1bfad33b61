//! The stream-json lines the Agent SDKs rely on, from the real binary against the fake model
//! server: a foreground subagent's task lines (with its output file on disk),
//! `permission_denied`, `session_state_changed` (only when the SDK asks for it), the full
//! `stream_event` sequence of `--include-partial-messages`, and `--json-schema`.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, result_of, run_with_stdin, server, stderr, Project};
use fleet_testkit::{ReplyBlock, Rule, Scenario};
use serde_json::{json, Value};

const CHILD: &str = "running as a subagent";

fn subtype<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["subtype"] == name).collect()
}

fn position(lines: &[Value], pick: impl Fn(&Value) -> bool) -> usize {
    lines
        .iter()
        .position(pick)
        .unwrap_or_else(|| panic!("no such line in {lines:#?}"))
}

#[tokio::test]
async fn a_foreground_subagent_reports_its_task_like_a_background_one() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("hello from greeter").when_system_contains(CHILD),
        Rule::text("MAIN-DONE").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "greet", "prompt": "say hi",
                   "subagent_type": "general-purpose"}),
        ),
    ]))
    .await;
    let (_, lines) = project.stream_json(&server, "delegate", &[]).await;
    let launch = lines[1]["message"]["content"][0]["id"].as_str().unwrap();

    let started = subtype(&lines, "task_started");
    assert_eq!(started.len(), 1, "{lines:#?}");
    let started = started[0];
    assert_eq!(started["is_backgrounded"], false);
    assert_eq!(started["task_type"], "local_agent");
    assert_eq!(started["spawn_depth"], 1);
    assert_eq!(started["tool_use_id"], launch);
    assert_eq!(started["description"], "greet");
    assert_eq!(started["subagent_type"], "general-purpose");
    assert_eq!(started["prompt"], "say hi");
    assert!(started["uuid"].is_string());
    assert_eq!(started["session_id"], lines[0]["session_id"]);
    let task_id = started["task_id"].as_str().unwrap();

    let updated = subtype(&lines, "task_updated")[0];
    assert_eq!(updated["task_id"], task_id);
    assert_eq!(updated["patch"]["status"], "completed");
    assert!(updated["patch"]["end_time"].as_u64().unwrap() > 0);

    let notified = subtype(&lines, "task_notification")[0];
    assert_eq!(notified["task_id"], task_id);
    assert_eq!(notified["tool_use_id"], launch);
    assert_eq!(notified["status"], "completed");
    assert_eq!(notified["summary"], "hello from greeter");
    assert!(notified["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(notified["usage"]["tool_uses"], 0);
    assert!(notified["usage"]["duration_ms"].is_u64());
    // The output file is the subagent's transcript, on disk, holding its answer.
    let output = notified["output_file"].as_str().unwrap();
    let text = std::fs::read_to_string(output).unwrap();
    assert!(text.contains("hello from greeter"), "{text}");

    // Started before the child's first line (its prompt, as Claude Code prints it); over
    // before its answer reaches the main agent.
    let child_says = position(&lines, |l| {
        l["type"] == "user" && !l["parent_tool_use_id"].is_null()
    });
    assert_eq!(
        lines[child_says]["message"]["content"][0]["text"], "say hi",
        "{lines:#?}"
    );
    let answer = position(&lines, |l| {
        l["type"] == "user" && l["parent_tool_use_id"].is_null()
    });
    let started_at = position(&lines, |l| l["subtype"] == "task_started");
    let notified_at = position(&lines, |l| l["subtype"] == "task_notification");
    assert!(
        started_at < child_says && notified_at < answer,
        "{lines:#?}"
    );
    // No background task is involved.
    assert!(subtype(&lines, "background_tasks_changed").is_empty());
    assert_eq!(result_of(&lines)["result"], "MAIN-DONE");
}

#[tokio::test]
async fn a_refused_call_gets_a_permission_denied_line() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "touch denied.txt"})),
        Rule::text("could not"),
    ]))
    .await;
    let (_, lines) = project.stream_json(&server, "make a file", &[]).await;
    let denied = subtype(&lines, "permission_denied");
    assert_eq!(denied.len(), 1, "{lines:#?}");
    let denied = denied[0];
    let call_id = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .map(|l| l["message"]["content"][0]["id"].clone())
        .unwrap();
    assert_eq!(denied["tool_name"], "Bash");
    assert_eq!(denied["tool_use_id"], call_id);
    assert!(denied["uuid"].is_string());
    assert_eq!(denied["session_id"], lines[0]["session_id"]);
    // The message is what the model was told.
    let result_line = lines.iter().find(|l| l["type"] == "user").unwrap();
    assert_eq!(
        denied["message"],
        result_line["message"]["content"][0]["content"]
    );
    assert!(!project.repo.join("denied.txt").exists());
    assert_eq!(
        result_of(&lines)["permission_denials"][0]["tool_use_id"],
        call_id
    );
}

fn states(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| match l["subtype"].as_str() {
            Some("session_state_changed") => {
                assert_eq!(l["sdk_host_only"], true);
                Some(l["state"].as_str().unwrap().to_string())
            }
            _ if l["type"] == "result" => Some("result".to_string()),
            _ => None,
        })
        .collect()
}

const TWO_MESSAGES: &str =
    "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"first\"}}\n\
{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"second\"}}\n";

#[tokio::test]
async fn session_states_frame_each_turn_when_the_sdk_asks() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("answer")])).await;
    let args = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
    ];
    let mut cmd = project.command(&server, &args);
    cmd.env("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1");
    let out = run_with_stdin(cmd, TWO_MESSAGES).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(
        states(&lines),
        ["running", "result", "idle", "running", "result", "idle"]
    );
    let first = lines
        .iter()
        .find(|l| l["subtype"] == "session_state_changed")
        .unwrap();
    assert_eq!(first["session_id"], lines[0]["session_id"]);

    // Without the variable, no state lines.
    let out = project.run(&server, &args, TWO_MESSAGES).await;
    assert_eq!(states(&json_lines(&out)), ["result", "result"]);
}

#[tokio::test]
async fn idle_waits_for_background_work_to_report() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_system_contains(CHILD)
            .delay_ms(200),
        Rule::text("MAIN-SAW-IT").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use(
            "Agent",
            json!({"description": "bg", "prompt": "work", "subagent_type": "general-purpose",
                   "run_in_background": true}),
        )
        .when_tool_result(false),
    ]))
    .await;
    let mut cmd = project.command(
        &server,
        &[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
        ],
    );
    cmd.env("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1");
    let one = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n";
    let out = run_with_stdin(cmd, one).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    // The first result comes while the background agent runs: the session stays running
    // until the notification's run has answered.
    assert_eq!(states(&lines), ["running", "result", "result", "idle"]);
}

fn stream_events(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "stream_event")
        .map(|l| &l["event"])
        .collect()
}

#[tokio::test]
async fn partial_messages_are_the_whole_api_stream_of_each_reply() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::reply([
            ReplyBlock::thinking_signed("let me look", "sig-1"),
            ReplyBlock::text("Reading it."),
            ReplyBlock::tool_use("Read", json!({"file_path": project.path("a.txt")})),
        ])
        .when_tool_result(false),
        Rule::text("It holds x.").when_tool_result(true),
    ]))
    .await;
    let (_, lines) = project
        .stream_json(&server, "read a", &["--include-partial-messages"])
        .await;
    let events = stream_events(&lines);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    // Two replies, each framed by message_start … message_stop.
    let starts: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "message_start")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "message_stop").count(), 2);
    let first = &events[..starts[1]];
    let first_kinds = &kinds[..starts[1]];
    assert_eq!(first_kinds[0], "message_start");
    assert_eq!(first[0]["message"]["model"], lines[0]["model"]);
    assert!(first[0]["message"]["id"]
        .as_str()
        .unwrap()
        .starts_with("msg_"));
    assert_eq!(
        &first_kinds[first_kinds.len() - 2..],
        ["message_delta", "message_stop"]
    );
    assert_eq!(first[first.len() - 2]["delta"]["stop_reason"], "tool_use");
    assert!(first[first.len() - 2]["usage"]["output_tokens"].is_u64());
    // Three blocks, each started, filled and stopped in order.
    for (index, kind) in ["thinking", "text", "tool_use"].iter().enumerate() {
        let start = first
            .iter()
            .position(|e| e["type"] == "content_block_start" && e["index"] == index)
            .unwrap_or_else(|| panic!("block {index} starts: {first:#?}"));
        let stop = first
            .iter()
            .position(|e| e["type"] == "content_block_stop" && e["index"] == index)
            .unwrap();
        assert_eq!(first[start]["content_block"]["type"], *kind);
        assert!(start < stop);
        let deltas: Vec<&&Value> = first[start..stop]
            .iter()
            .filter(|e| e["type"] == "content_block_delta")
            .collect();
        assert!(deltas.iter().all(|d| d["index"] == index), "{deltas:#?}");
        let joined: String = deltas
            .iter()
            .filter_map(|d| {
                let delta = &d["delta"];
                delta["text"]
                    .as_str()
                    .or(delta["thinking"].as_str())
                    .or(delta["partial_json"].as_str())
            })
            .collect();
        match *kind {
            "thinking" => {
                assert_eq!(joined, "let me look");
                assert!(deltas.iter().any(|d| d["delta"]["signature"] == "sig-1"));
            }
            "text" => assert_eq!(joined, "Reading it."),
            _ => {
                assert_eq!(first[start]["content_block"]["input"], json!({}));
                let input: Value = serde_json::from_str(&joined).unwrap();
                assert_eq!(input["file_path"], project.path("a.txt"));
            }
        }
    }
    // Each stream_event line is wrapped as Claude Code wraps it.
    let line = lines.iter().find(|l| l["type"] == "stream_event").unwrap();
    assert_eq!(line["parent_tool_use_id"], Value::Null);
    assert_eq!(line["session_id"], lines[0]["session_id"]);
    assert!(line["uuid"].is_string());
    // The whole messages still follow, as without the flag.
    assert!(lines.iter().any(|l| l["type"] == "assistant"));

    // Without the flag: no stream events at all.
    let (_, plain) = project.stream_json(&server, "read a", &[]).await;
    assert!(stream_events(&plain).is_empty());
}

const SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false}"#;

#[tokio::test]
async fn json_schema_answers_through_the_structured_output_tool() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::queue([
        // Forgets the call, then gets the shape wrong, then gets it right.
        Rule::text("Here is Ada, 36."),
        Rule::tool_use("StructuredOutput", json!({"name": "Ada", "age": "36"})),
        Rule::tool_use("StructuredOutput", json!({"name": "Ada", "age": 36})),
        Rule::text("never asked for"),
    ]))
    .await;
    let (_, lines) = project
        .stream_json(&server, "who?", &["--json-schema", SCHEMA])
        .await;
    let result = result_of(&lines);
    assert_eq!(result["subtype"], "success");
    assert_eq!(
        result["structured_output"],
        json!({"name": "Ada", "age": 36})
    );
    // A valid call ends the run: no request after it.
    assert_eq!(server.request_count(), 3);

    let requests = server.requests();
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .cloned()
        .expect("the tool is offered");
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    assert_eq!(tool["input_schema"], schema);
    assert!(requests[0].body["system"]
        .to_string()
        .contains("StructuredOutput"));
    // The reply without the call got a reminder; the bad call an error naming the problem.
    assert!(requests[1].body["messages"]
        .to_string()
        .contains("You MUST call the StructuredOutput tool"));
    let refused = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .map(|l| &l["message"]["content"][0])
        .find(|b| b["is_error"] == true)
        .unwrap();
    assert!(
        refused["content"]
            .as_str()
            .unwrap()
            .contains("/age: expected integer, got a string"),
        "{refused}"
    );
}

#[tokio::test]
async fn json_schema_gives_up_after_the_retries() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("no tool for me")])).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "who?",
                "--output-format",
                "stream-json",
                "--verbose",
                "--json-schema",
                SCHEMA,
            ],
            &[("MAX_STRUCTURED_OUTPUT_RETRIES", "1")],
        )
        .await;
    assert!(!out.status.success());
    let lines = json_lines(&out);
    let result = result_of(&lines);
    assert_eq!(result["subtype"], "error_max_structured_output_retries");
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["terminal_reason"],
        "structured_output_retry_exhausted"
    );
    assert!(result.get("structured_output").is_none());
    assert_eq!(server.request_count(), 2, "one reminder, then it gives up");
}

#[tokio::test]
async fn a_bad_json_schema_is_an_error_naming_the_flag() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("unused")])).await;
    for (schema, says) in [
        ("{not json", "--json-schema: the schema is not valid JSON"),
        (
            r#"{"type":"object","properties":{"a":{"type":"strnig"}}}"#,
            "/properties/a/type",
        ),
    ] {
        let out = project
            .run(&server, &["-p", "hi", "--json-schema", schema], "")
            .await;
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains(says) && err.contains("--json-schema"), "{err}");
    }
    assert_eq!(server.request_count(), 0);
}
