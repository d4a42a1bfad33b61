//! Round trips against JSON written the way the Messages API writes it: parsing and printing
//! must give back the same bytes.

use super::*;

fn roundtrip<T: serde::Serialize + serde::de::DeserializeOwned>(json: &str) -> T {
    let parsed: T = serde_json::from_str(json).expect("parses");
    let printed = serde_json::to_string(&parsed).expect("prints");
    assert_eq!(printed, json, "round trip changed the JSON");
    parsed
}

#[test]
fn every_block_kind_round_trips_exactly() {
    let json = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Let me look.","signature":"EqQBCkYIARgCKkD"},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"},{"type":"text","text":"Reading it now."},{"type":"tool_use","id":"toolu_01A","name":"Read","input":{"file_path":"/tmp/a.rs","limit":20}}]}"#;
    let m: Message = roundtrip(json);
    assert_eq!(m.role, Role::Assistant);
    let uses: Vec<_> = m.tool_uses().collect();
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].name, "Read");
    assert_eq!(uses[0].input["limit"], 20);
    assert_eq!(m.text(), "Reading it now.");
}

#[test]
fn tool_results_keep_string_or_block_content_and_error_flag() {
    let json = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"1\tfn main() {}"},{"type":"tool_result","tool_use_id":"toolu_01B","content":[{"type":"text","text":"no such file"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}],"is_error":true},{"type":"tool_result","tool_use_id":"toolu_01C"}]}"#;
    let m: Message = roundtrip(json);
    match &m.content {
        MessageContent::Blocks(b) => {
            assert!(matches!(
                &b[0],
                ContentBlock::ToolResult {
                    content: Some(ToolResultContent::Text(_)),
                    is_error: None,
                    ..
                }
            ));
            assert!(
                matches!(&b[1], ContentBlock::ToolResult { content: Some(ToolResultContent::Blocks(v)), is_error: Some(true), .. } if v.len() == 2)
            );
            assert!(matches!(
                &b[2],
                ContentBlock::ToolResult { content: None, .. }
            ));
        }
        MessageContent::Text(_) => panic!("expected blocks"),
    }
}

#[test]
fn string_content_stays_a_string() {
    let m: Message = roundtrip(r#"{"role":"user","content":"hello"}"#);
    assert_eq!(m, Message::user_text("hello"));
}

#[test]
fn cache_control_round_trips_with_and_without_ttl() {
    let json = r#"{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral","ttl":"1h"}}]}"#;
    let mut m: Message = roundtrip(json);
    if let MessageContent::Blocks(b) = &mut m.content {
        let slot = b[0]
            .cache_control_mut()
            .expect("text can carry a breakpoint");
        assert_eq!(slot.as_ref(), Some(&CacheControl::ephemeral()));
    }
}

#[test]
fn usage_with_cache_fields_round_trips_and_sums() {
    let u: Usage = roundtrip(
        r#"{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":7}"#,
    );
    assert_eq!(u.total_input(), 4312);
    assert_eq!(u.total(), 4319);
    let bare: Usage = roundtrip(r#"{"input_tokens":3,"output_tokens":1}"#);
    let mut sum = bare.clone();
    sum += &u;
    assert_eq!(sum.cache_read_input_tokens, Some(4000));
    assert_eq!(sum.input_tokens, 15);
    let mut none = bare.clone();
    none += &bare;
    assert_eq!(
        none.cache_read_input_tokens, None,
        "absent plus absent stays absent"
    );
}

#[test]
fn usage_delta_replaces_cumulative_fields() {
    let mut u = Usage {
        input_tokens: 10,
        output_tokens: 1,
        ..Usage::default()
    };
    u.merge_delta(&UsageDelta {
        output_tokens: Some(42),
        ..UsageDelta::default()
    });
    assert_eq!((u.input_tokens, u.output_tokens), (10, 42));
}

#[test]
fn assistant_message_object_round_trips() {
    let json = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}"#;
    let m: AssistantMessage = roundtrip(json);
    assert_eq!(m.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(m.text(), "Hi");
}

#[test]
fn unknown_stop_reason_is_kept() {
    let r: StopReason = serde_json::from_str(r#""model_context_window_exceeded""#).expect("parses");
    assert_eq!(r.as_str(), "model_context_window_exceeded");
    assert_eq!(
        serde_json::to_string(&r).expect("prints"),
        r#""model_context_window_exceeded""#
    );
}

#[test]
fn stream_events_parse_as_the_api_sends_them() {
    let lines = [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"abc"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ];
    let names: Vec<&str> = lines
        .iter()
        .map(|l| roundtrip::<StreamEvent>(l).event_name())
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error"
        ]
    );
}

#[test]
fn request_with_system_blocks_and_tools_round_trips() {
    let json = r#"{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"hi"}],"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"Read","description":"Reads a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}],"thinking":{"type":"enabled","budget_tokens":2048},"stream":true}"#;
    let r: MessagesRequest = roundtrip(json);
    assert_eq!(r.system_text(), "You are terse.");
    assert!(r.stream);
}

#[test]
fn api_error_body_round_trips() {
    let e: ApiErrorBody =
        roundtrip(r#"{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}"#);
    assert_eq!(e.error.error_type, ApiErrorBody::type_for_status(429));
}
