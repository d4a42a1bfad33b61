//! The stream-json lines the Agent SDKs rely on, checked against Claude Code's reference lines
//! (`control-examples.jsonl`): foreground tasks, `permission_denied`,
//! `session_state_changed`, the full `stream_event` sequence and `structured_output`.

#![allow(clippy::unwrap_used)]

use super::fixtures::*;
use super::PrintOptions;
use fleet_protocol::{
    AgentEvent, BlockDelta, ContentBlock, DeniedCall, EventKind, ResultSubtype, SessionState,
    StreamEvent, TaskStatus,
};
use serde_json::{json, Value};

fn sdk_options() -> PrintOptions {
    PrintOptions {
        session_id: Some(SESSION.into()),
        results_as_they_come: true,
        session_state: true,
        ..PrintOptions::default()
    }
}

#[test]
fn a_foreground_task_has_the_reference_keys() {
    let mut started = task_started();
    started.is_backgrounded = false;
    let events = [
        main_event(EventKind::TaskStarted(started)),
        main_event(EventKind::TaskUpdated {
            task_id: CHILD.into(),
            status: TaskStatus::Completed,
            end_time_ms: Some(1_796_131_016_011),
        }),
        main_event(EventKind::TaskNotified(notification(
            TaskStatus::Completed,
            "hello from greeter",
        ))),
    ];
    let lines = print_stream(&events, &sdk_options());
    // The same shape as a background task's.
    assert_eq!(keys(&lines[0]), super::background_tests::TASK_STARTED);
    assert_eq!(lines[0]["is_backgrounded"], false);
    assert_eq!(lines[0]["task_type"], "local_agent");
    // Then the prompt, as the subagent's first `user` line (Claude Code's fan-out shape).
    assert_eq!(lines[1]["type"], "user");
    assert_eq!(lines[1]["parent_tool_use_id"], lines[0]["tool_use_id"]);
    assert_eq!(lines[1]["agent_id"], CHILD);
    assert_eq!(
        lines[1]["message"],
        json!({"role": "user", "content": [{"type": "text", "text": lines[0]["prompt"]}]})
    );
    assert_eq!(
        lines[2]["patch"],
        json!({"status": "completed", "end_time": 1_796_131_016_011u64})
    );
    assert_eq!(
        &keys(&lines[2])[..5],
        ["type", "subtype", "task_id", "run_id", "patch"]
    );
    let n = &lines[3];
    for key in [
        "task_id",
        "tool_use_id",
        "status",
        "output_file",
        "summary",
        "usage",
        "uuid",
        "session_id",
    ] {
        assert!(n.get(key).is_some(), "{key} in {n}");
    }
    assert_eq!(n["summary"], "hello from greeter");
    assert_eq!(n["output_file"], OUTPUT_FILE);
    assert_eq!(
        n["usage"],
        json!({"total_tokens": 7309, "tool_uses": 0, "duration_ms": 104})
    );
}

#[test]
fn a_killed_task_is_stopped_in_its_notification_and_killed_in_its_update() {
    let events = [
        main_event(EventKind::TaskUpdated {
            task_id: CHILD.into(),
            status: TaskStatus::Killed,
            end_time_ms: Some(1),
        }),
        main_event(EventKind::TaskNotified(notification(
            TaskStatus::Killed,
            "",
        ))),
    ];
    let lines = print_stream(&events, &PrintOptions::default());
    assert_eq!(lines[0]["patch"]["status"], "killed");
    assert_eq!(lines[1]["status"], "stopped");
}

fn denied() -> DeniedCall {
    DeniedCall {
        tool_name: "Bash".into(),
        tool_use_id: "toolu_p2".into(),
        message: "The user refused this Bash call.".into(),
        reason_type: fleet_protocol::PermissionReasonType::User,
    }
}

#[test]
fn permission_denied_has_the_sdk_keys_and_names_a_subagent() {
    let lines = print_stream(
        &[
            main_event(EventKind::PermissionDenied(denied())),
            sub_event(EventKind::PermissionDenied(denied())),
        ],
        &sdk_options(),
    );
    assert_eq!(
        keys(&lines[0]),
        [
            "type",
            "subtype",
            "tool_name",
            "tool_use_id",
            "decision_reason_type",
            "message",
            "uuid",
            "session_id"
        ]
    );
    assert_eq!(lines[0]["subtype"], "permission_denied");
    assert_eq!(lines[0]["message"], "The user refused this Bash call.");
    assert_eq!(lines[0]["session_id"], SESSION);
    assert_eq!(lines[1]["agent_id"], CHILD);
}

fn approval(waiting: bool) -> AgentEvent {
    main_event(EventKind::Approval {
        tool_use_id: "toolu_p1".into(),
        tool_name: "Bash".into(),
        waiting,
    })
}

fn states(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l["subtype"].as_str() {
            Some("session_state_changed") => l["state"].as_str().unwrap().to_string(),
            _ => l["type"].as_str().unwrap().to_string(),
        })
        .collect()
}

#[test]
fn session_states_follow_the_turn_and_idle_comes_last() {
    let events = [
        main_event(EventKind::SessionState(SessionState::Running)),
        approval(true),
        approval(false),
        main_event(EventKind::Finished(run_result(
            ResultSubtype::Success,
            "ok",
        ))),
        main_event(EventKind::SessionState(SessionState::Idle)),
    ];
    let lines = print_stream(&events, &sdk_options());
    assert_eq!(
        states(&lines),
        ["running", "requires_action", "running", "result", "idle"]
    );
    assert_eq!(
        keys(&lines[0]),
        [
            "type",
            "subtype",
            "state",
            "sdk_host_only",
            "uuid",
            "session_id"
        ]
    );
    // With the results held to the end (a prompt given as an argument), idle still follows
    // them.
    let held = PrintOptions {
        results_as_they_come: false,
        ..sdk_options()
    };
    assert_eq!(
        states(&print_stream(&events, &held)),
        ["running", "requires_action", "running", "result", "idle"]
    );
    // Without the SDK's variable there are no state lines at all.
    assert_eq!(
        states(&print_stream(&events, &PrintOptions::default())),
        ["result"]
    );
}

#[test]
fn stream_events_print_as_the_api_sent_them_and_replace_the_plain_deltas() {
    let parts = [
        StreamEvent::ContentBlockStart {
            index: 0,
            content_block: ContentBlock::tool_use("toolu_1", "Read", json!({})),
        },
        StreamEvent::ContentBlockDelta {
            index: 0,
            delta: BlockDelta::InputJsonDelta {
                partial_json: "{\"file_path\":".into(),
            },
        },
        StreamEvent::ContentBlockStop { index: 0 },
        StreamEvent::MessageStop,
    ];
    let mut events: Vec<AgentEvent> = parts
        .iter()
        .map(|p| main_event(EventKind::Stream(p.clone())))
        .collect();
    // The main agent streams, so its plain delta is not printed again; a subagent that does
    // not stream still gets its deltas printed.
    events.insert(1, main_event(EventKind::TextDelta("dup".into())));
    events.push(sub_event(EventKind::TextDelta("child".into())));
    let partial = PrintOptions {
        include_partial_messages: true,
        ..sdk_options()
    };
    let lines = print_stream(&events, &partial);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert_eq!(
        keys(&lines[0]),
        ["type", "event", "parent_tool_use_id", "session_id", "uuid"]
    );
    assert_eq!(
        lines[1]["event"],
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\":"}})
    );
    assert_eq!(lines[3]["event"], json!({"type": "message_stop"}));
    assert_eq!(lines[4]["event"]["delta"]["text"], "child");
    assert_eq!(lines[4]["parent_tool_use_id"], "toolu_bg1");
    // Without the flag, none of it.
    assert!(print_stream(&events, &sdk_options()).is_empty());
}

#[test]
fn structured_output_rides_on_the_result_and_its_failure_has_its_own_subtype() {
    let mut ok = run_result(ResultSubtype::Success, "");
    ok.structured_output = Some(json!({"name": "Ada"}));
    let failed = run_result(
        ResultSubtype::ErrorMaxStructuredOutputRetries,
        "Failed to provide valid structured output after 5 retries",
    );
    let lines = print_stream(
        &[
            main_event(EventKind::Finished(ok)),
            main_event(EventKind::Finished(failed)),
        ],
        &sdk_options(),
    );
    assert_eq!(lines[0]["structured_output"], json!({"name": "Ada"}));
    assert_eq!(lines[1]["subtype"], "error_max_structured_output_retries");
    assert_eq!(lines[1]["is_error"], true);
    assert_eq!(
        lines[1]["terminal_reason"],
        "structured_output_retry_exhausted"
    );
    assert!(lines[1].get("structured_output").is_none());
}
