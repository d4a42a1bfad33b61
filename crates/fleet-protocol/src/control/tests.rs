#![allow(clippy::unwrap_used)]

use super::*;
use crate::vocab::PermissionMode;
use serde_json::{json, Value};

/// Reads `value` as a line, checks it is `expected`, and that writing it gives `value` back.
fn round_trip(value: Value, expected: &ControlLine) {
    let read = ControlLine::from_value(&value).unwrap();
    assert_eq!(&read, expected, "{value}");
    assert_eq!(serde_json::to_value(&read).unwrap(), value);
    let text = read.to_json();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
}

#[test]
fn the_hosts_requests_read_and_write_through_the_same_types() {
    let cases = [
        (json!({"subtype": "interrupt"}), ControlRequest::Interrupt),
        (
            json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
            ControlRequest::SetPermissionMode {
                mode: PermissionMode::AcceptEdits,
            },
        ),
        (
            json!({"subtype": "set_model", "model": "claude-haiku-4-5"}),
            ControlRequest::SetModel {
                model: Some("claude-haiku-4-5".into()),
            },
        ),
        (
            json!({"subtype": "set_model", "model": null}),
            ControlRequest::SetModel { model: None },
        ),
        (json!({"subtype": "mcp_status"}), ControlRequest::McpStatus),
        (
            json!({"subtype": "mcp_reconnect", "serverName": "calc"}),
            ControlRequest::McpReconnect {
                server_name: "calc".into(),
            },
        ),
        (
            json!({"subtype": "mcp_toggle", "serverName": "calc", "enabled": false}),
            ControlRequest::McpToggle {
                server_name: "calc".into(),
                enabled: false,
            },
        ),
        (
            json!({"subtype": "get_context_usage"}),
            ControlRequest::GetContextUsage,
        ),
        (
            json!({"subtype": "stop_task", "task_id": "a7db"}),
            ControlRequest::StopTask {
                task_id: "a7db".into(),
            },
        ),
        (
            json!({"subtype": "initialize", "hooks": {"Stop": []}, "systemPrompt": "be brief",
                   "title": "kept as it came"}),
            ControlRequest::Initialize(Box::new(Initialize {
                hooks: Some(json!({"Stop": []})),
                system_prompt: Some(json!("be brief")),
                other: [("title".to_string(), json!("kept as it came"))]
                    .into_iter()
                    .collect(),
                ..Initialize::default()
            })),
        ),
    ];
    for (n, (body, request)) in cases.into_iter().enumerate() {
        let id = format!("req_{n}");
        let line = json!({"type": "control_request", "request_id": id, "request": body});
        round_trip(line, &ControlLine::request(id, request));
    }
}

#[test]
fn fleets_own_requests_are_worded_as_claude_code_words_them() {
    let ask = CanUseTool {
        tool_name: "Bash".into(),
        display_name: "Bash".into(),
        input: json!({"command": "touch allowed.txt", "description": "make allowed"}),
        description: Some("make allowed".into()),
        permission_suggestions: vec![
            PermissionUpdate::AddRules {
                rules: vec![RuleValue::from_rule_string("Bash(touch allowed.txt)")],
                behavior: RuleBehavior::Allow,
                destination: Destination::LocalSettings,
            },
            PermissionUpdate::SetMode {
                mode: PermissionMode::AcceptEdits,
                destination: Destination::Session,
            },
        ],
        blocked_path: None,
        decision_reason: "needs approval".into(),
        tool_use_id: "toolu_1".into(),
        agent_id: None,
    };
    let line = ControlLine::request("r1", ControlRequest::CanUseTool(Box::new(ask)));
    assert_eq!(
        line.to_json(),
        concat!(
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","#,
            r#""tool_name":"Bash","display_name":"Bash","input":{"command":"touch allowed.txt","#,
            r#""description":"make allowed"},"description":"make allowed","permission_suggestions":"#,
            r#"[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch allowed.txt"}],"#,
            r#""behavior":"allow","destination":"localSettings"},{"type":"setMode","mode":"acceptEdits","#,
            r#""destination":"session"}],"decision_reason":"needs approval","tool_use_id":"toolu_1"}}"#
        )
    );
    round_trip(serde_json::to_value(&line).unwrap(), &line);

    let hook = ControlLine::request(
        "r2",
        ControlRequest::HookCallback(HookCallback {
            callback_id: "hook_0".into(),
            input: json!({"hook_event_name": "PreToolUse", "tool_use_id": "toolu_2"}),
            tool_use_id: Some(json!("toolu_2")),
        }),
    );
    round_trip(serde_json::to_value(&hook).unwrap(), &hook);

    let mcp = json!({"type": "control_request", "request_id": "r3", "request": {
        "subtype": "mcp_message", "server_name": "calc",
        "message": {"method": "tools/list", "jsonrpc": "2.0", "id": 1}}});
    round_trip(
        mcp,
        &ControlLine::request(
            "r3",
            ControlRequest::McpMessage(McpMessage {
                server_name: "calc".into(),
                message: json!({"method": "tools/list", "jsonrpc": "2.0", "id": 1}),
            }),
        ),
    );
}

#[test]
fn answers_cancels_and_keep_alives_round_trip() {
    round_trip(
        json!({"type": "control_response", "response": {"subtype": "success",
               "request_id": "req_2", "response": {"still_queued": []}}}),
        &ControlLine::success("req_2", json!({"still_queued": []})),
    );
    round_trip(
        json!({"type": "control_response", "response": {"subtype": "error",
               "request_id": "req_3", "error": "nope"}}),
        &ControlLine::error("req_3", "nope"),
    );
    round_trip(
        json!({"type": "control_cancel_request", "request_id": "req_4"}),
        &ControlLine::cancel("req_4"),
    );
    round_trip(json!({"type": "keep_alive"}), &ControlLine::KeepAlive);
    // The exact bytes fleet has always written.
    assert_eq!(
        ControlLine::success("x", json!({"mode": "plan"})).to_json(),
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"x","response":{"mode":"plan"}}}"#
    );
    // An error answer without a message (or with one that is not text) is still an answer.
    let bare = json!({"type": "control_response", "response": {"subtype": "error",
                      "request_id": "y", "error": 42}});
    assert_eq!(
        ControlLine::from_value(&bare).unwrap(),
        ControlLine::ControlResponse {
            response: ControlResponse::Error {
                request_id: "y".into(),
                error: None
            }
        }
    );
}

#[test]
fn answer_bodies_round_trip() {
    let allow = CanUseToolAnswer::Allow {
        updated_input: Some(json!({"command": "ls"})),
        updated_permissions: Some(vec![json!({"type": "setMode", "mode": "acceptEdits"})]),
    };
    let value = serde_json::to_value(&allow).unwrap();
    assert_eq!(
        value,
        json!({"behavior": "allow", "updatedInput": {"command": "ls"},
               "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits"}]})
    );
    assert_eq!(
        serde_json::from_value::<CanUseToolAnswer>(value).unwrap(),
        allow
    );
    let deny = CanUseToolAnswer::Deny {
        message: Some("no".into()),
        interrupt: None,
    };
    assert_eq!(
        serde_json::to_string(&deny).unwrap(),
        r#"{"behavior":"deny","message":"no"}"#
    );
    assert!(serde_json::from_value::<CanUseToolAnswer>(json!({"behavior": "maybe"})).is_err());
    let mcp: McpMessageAnswer =
        serde_json::from_value(json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})).unwrap();
    assert_eq!(mcp.mcp_response.unwrap()["jsonrpc"], "2.0");
    assert_eq!(serde_json::to_string(&Empty {}).unwrap(), "{}");
}

#[test]
fn an_unknown_subtype_is_kept_by_name_and_written_back_as_it_came() {
    let line = json!({"type": "control_request", "request_id": "r_unknown",
                      "request": {"subtype": "teleport", "to": "mars"}});
    let read = ControlLine::from_value(&line).unwrap();
    let ControlLine::ControlRequest { request, .. } = &read else {
        panic!("{read:?}")
    };
    assert_eq!(request.subtype(), "teleport");
    assert!(matches!(request, RequestBody::Unknown(u) if u.body["to"] == "mars"));
    assert_eq!(serde_json::to_value(&read).unwrap(), line);
}

#[test]
fn every_known_subtype_is_listed() {
    for name in ControlRequest::SUBTYPES {
        let body = json!({"subtype": name});
        // Known names are read as known, even when their fields are missing (an error).
        match serde_json::from_value::<RequestBody>(body) {
            Ok(RequestBody::Known(request)) => assert_eq!(request.subtype(), *name),
            Ok(RequestBody::Unknown(_)) => panic!("{name} read as unknown"),
            Err(_) => {}
        }
    }
}

#[test]
fn bad_control_lines_say_what_is_wrong_and_keep_the_request_id() {
    let err = |value: Value| ControlLine::from_value(&value).unwrap_err();
    let e = err(json!({"type": "control_request", "request": {"subtype": "interrupt"}}));
    assert_eq!(e, LineError::RequestWithoutId);
    assert!(e.to_string().contains("without a string \"request_id\""));
    let e = err(json!({"type": "control_request", "request_id": "r9", "request": {}}));
    assert_eq!(e.request_id(), Some("r9"));
    assert!(e.to_string().contains("subtype"), "{e}");
    let e = err(json!({"type": "control_request", "request_id": "r8",
                       "request": {"subtype": "set_permission_mode", "mode": "sideways"}}));
    assert_eq!(e.request_id(), Some("r8"));
    assert!(
        e.to_string().contains("set_permission_mode") && e.to_string().contains("sideways"),
        "{e}"
    );
    let e = err(json!({"type": "control_response", "response": {"subtype": "success"}}));
    assert_eq!(e, LineError::ResponseWithoutId);
    let e = err(
        json!({"type": "control_response", "response": {"subtype": "maybe",
                       "request_id": "q"}}),
    );
    assert_eq!(
        e,
        LineError::ResponseSubtype {
            request_id: "q".into()
        }
    );
    assert_eq!(e.request_id(), None);
    assert_eq!(
        err(json!({"type": "control_cancel_request"})),
        LineError::CancelWithoutId
    );
    // Other lines are not this protocol's to judge.
    for other in [
        json!({"type": "user"}),
        json!({"no": "type"}),
        json!("text"),
    ] {
        assert_eq!(
            ControlLine::from_value(&other).unwrap(),
            ControlLine::NotControl
        );
    }
    // A mode in any case, as the command line takes it.
    let any_case = json!({"type": "control_request", "request_id": "m",
                          "request": {"subtype": "set_permission_mode", "mode": "AcceptEdits"}});
    assert!(ControlLine::from_value(&any_case).is_ok());
}
