#![allow(clippy::unwrap_used)]

use super::*;
use crate::{ContentBlock, PermissionDecision, PermissionReasonType, TaskStatus, Usage};
use serde_json::json;

fn round_trip(line: StreamLine) -> String {
    let text = serde_json::to_string(&line).unwrap();
    let back: StreamLine = serde_json::from_str(&text).unwrap();
    assert_eq!(back, line, "{text}");
    text
}

#[test]
fn lines_read_back_as_the_same_variant() {
    let assistant = AssistantLine {
        message: AssistantEnvelope::new(
            "msg_1",
            "claude-x",
            vec![ContentBlock::text("hi")],
            Usage::default(),
        ),
        parent_tool_use_id: None,
        agent_id: None,
        session_id: "s".into(),
        uuid: "u".into(),
        timestamp: "2026-12-04T20:45:08.265Z".into(),
        subagent_type: None,
        task_description: None,
        error: None,
        is_api_error_message: None,
        api_error_status: None,
    };
    let text = round_trip(assistant.into());
    assert!(
        text.starts_with(r#"{"type":"assistant","message":{"id":"msg_1""#),
        "{text}"
    );
    assert!(text.contains(r#""parent_tool_use_id":null"#), "{text}");

    let user = UserLine {
        message: UserEnvelope::new(vec![UserBlock::ToolResult(ToolResultBlock {
            tool_use_id: "toolu_1".into(),
            kind: message::ToolResultTag::ToolResult,
            content: ToolResultBody::Blocks(vec![TextBlock::new("done")]),
            is_error: false,
        })]),
        parent_tool_use_id: None,
        agent_id: None,
        session_id: "s".into(),
        uuid: "u".into(),
        timestamp: "t".into(),
        subagent_type: None,
        task_description: None,
        tool_use_result: Some(json!({"status": "completed"})),
        tool_result_meta: Some(vec![ToolResultMeta {
            id: "toolu_1".into(),
            permission_decision: WirePermissionDecision {
                decision: PermissionDecision::Accept,
                source: "config".into(),
                reason_type: Some(PermissionReasonType::Mode),
                rule: None,
            },
        }]),
    };
    let text = round_trip(user.into());
    assert!(
        text.contains(r#"{"tool_use_id":"toolu_1","type":"tool_result","content":[{"type":"text","text":"done"}],"is_error":false}"#),
        "{text}"
    );

    let retry = ApiRetryLine {
        attempt: 1,
        max_retries: 10,
        retry_delay_ms: 500,
        error_status: Some(429),
        error: ApiErrorCategory::from_status(Some(429)),
        error_message: Some("rate limited".into()),
        retry_scope: Some(crate::RetryScope::Request),
        session_id: "s".into(),
        uuid: "u".into(),
        subagent: SubagentKeys::default(),
    };
    let text = round_trip(retry.into());
    assert!(
        text.starts_with(r#"{"type":"system","subtype":"api_retry","attempt":1"#),
        "{text}"
    );
    assert!(text.contains(r#""error":"rate_limit""#), "{text}");

    let updated = TaskUpdatedLine {
        task_id: "a1".into(),
        run_id: "r1".into(),
        patch: TaskPatch {
            status: TaskStatus::Completed,
            end_time: Some(5),
        },
        uuid: "u".into(),
        session_id: "s".into(),
        subagent: SubagentKeys {
            parent_tool_use_id: Some("toolu_p".into()),
            agent_id: Some("a0".into()),
        },
    };
    let text = round_trip(updated.into());
    assert!(
        text.ends_with(r#""parent_tool_use_id":"toolu_p","agent_id":"a0"}"#),
        "{text}"
    );

    let result = ResultLine {
        subtype: crate::ResultSubtype::Success,
        is_error: true,
        duration_ms: 1,
        duration_api_ms: 0,
        num_turns: 1,
        result: "Invalid API key".into(),
        stop_reason: None,
        session_id: "s".into(),
        total_cost_usd: Some(0.0),
        usage: Some(ResultUsage::new(1, 2, 3, 4)),
        model_usage: Default::default(),
        permission_denials: vec![],
        api_error_status: Some(401),
        terminal_reason: crate::TerminalReason::ApiError,
        structured_output: None,
        origin: None,
        subagent_stats: None,
        usage_by_agent: None,
        errors: Some(vec!["Invalid API key".into()]),
        usage_unreported_replies: None,
        result_index: 0,
        uuid: "u".into(),
        team: None,
    };
    let text = round_trip(result.into());
    assert!(
        text.contains(
            r#""cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":2}"#
        ),
        "{text}"
    );
}

#[test]
fn unknown_lines_and_subtypes_are_kept_whole() {
    let line = r#"{"type":"brand_new","x":1}"#;
    let parsed: StreamLine = serde_json::from_str(line).unwrap();
    assert_eq!(
        parsed,
        StreamLine::Unknown(json!({"type": "brand_new", "x": 1}))
    );
    assert_eq!(parsed.kind(), "brand_new");
    assert_eq!(serde_json::to_string(&parsed).unwrap(), line);

    let line = r#"{"type":"system","subtype":"brand_new","session_id":"s"}"#;
    let parsed: StreamLine = serde_json::from_str(line).unwrap();
    assert!(
        matches!(&parsed, StreamLine::System(SystemLine::Other(_))),
        "{parsed:?}"
    );
    assert_eq!(parsed.kind(), "system/brand_new");
    assert_eq!(parsed.session_id(), Some("s"));
    assert_eq!(serde_json::to_string(&parsed).unwrap(), line);

    let category: ApiErrorCategory = serde_json::from_str(r#""new_category""#).unwrap();
    assert_eq!(category, ApiErrorCategory::Other("new_category".into()));
}

/// Claude Code's own lines (the reference captures) read as the known variants.
#[test]
fn claude_codes_lines_read_as_known_kinds() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/headless");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // the reference material is not beside this checkout
    };
    let mut seen = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let parsed: StreamLine = serde_json::from_str(line).unwrap();
            let known = match &parsed {
                StreamLine::Unknown(_) => false,
                StreamLine::System(system) => !matches!(system, SystemLine::Other(_)),
                _ => true,
            };
            let why = match parsed.kind().split('/').next().unwrap_or_default() {
                "result" => serde_json::from_str::<ResultLine>(line).err(),
                "assistant" => serde_json::from_str::<AssistantLine>(line).err(),
                "user" => serde_json::from_str::<UserLine>(line).err(),
                "stream_event" => serde_json::from_str::<StreamEventLine>(line).err(),
                _ => None,
            };
            assert!(
                known,
                "{}:{}: {} {why:?}",
                path.display(),
                n + 1,
                parsed.kind()
            );
            seen += 1;
        }
    }
    assert!(seen > 0);
}
