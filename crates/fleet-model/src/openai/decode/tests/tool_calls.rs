//! Tool calls as the different servers fragment them: with and without `index` and `id`,
//! names repeated, arguments whole or as objects, and the failures a call can end in.

use super::*;

#[test]
fn calls_without_ids_get_unique_generated_ones() {
    let stream = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": "{\"path\":"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a\"}"}}]})),
        delta(
            json!({"tool_calls": [{"index": 1, "function": {"name": "Read", "arguments": "{\"path\":\"b\"}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            (generated(0), "Read".into(), json!({"path": "a"})),
            (generated(1), "Read".into(), json!({"path": "b"})),
        ]
    );
    assert!(events.contains(&ModelEvent::ToolUseStart {
        index: 0,
        id: generated(0),
        name: "Read".into()
    }));
}

#[test]
fn calls_without_index_continue_by_id_or_as_the_latest_call() {
    let stream = sse(&[
        // id only on the first fragment, then bare fragments continue it
        delta(
            json!({"tool_calls": [{"id": "c1", "function": {"name": "Bash", "arguments": "{\"comm"}}]}),
        ),
        delta(json!({"tool_calls": [{"function": {"arguments": "and\":\"ls\"}"}}]})),
        // a new id starts a new call; its later fragments repeat the id
        delta(
            json!({"tool_calls": [{"id": "c2", "function": {"name": "Read", "arguments": "{"}}]}),
        ),
        delta(json!({"tool_calls": [{"id": "c2", "function": {"arguments": "\"path\":\"x\"}"}}]})),
        finish("tool_calls"),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            ("c1".into(), "Bash".into(), json!({"command": "ls"})),
            ("c2".into(), "Read".into(), json!({"path": "x"})),
        ]
    );
}

#[test]
fn name_repeated_on_every_fragment_without_index_or_id() {
    let stream = sse(&[
        delta(json!({"tool_calls": [{"function": {"name": "Read", "arguments": "{\"path\""}}]})),
        delta(json!({"tool_calls": [{"function": {"name": "Read", "arguments": ":\"a\"}"}}]})),
        // same tool again once the first input is whole: a second call
        delta(
            json!({"tool_calls": [{"function": {"name": "Read", "arguments": "{\"path\":\"b\"}"}}]}),
        ),
        // another tool: a third call
        delta(json!({"tool_calls": [{"function": {"name": "Glob", "arguments": "{}"}}]})),
        // the name once more with nothing to add: still the third call
        delta(json!({"tool_calls": [{"function": {"name": "Glob", "arguments": ""}}]})),
        finish("tool_calls"),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            (generated(0), "Read".into(), json!({"path": "a"})),
            (generated(1), "Read".into(), json!({"path": "b"})),
            (generated(2), "Glob".into(), json!({})),
        ]
    );
    let starts = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::ToolUseStart { .. }))
        .count();
    assert_eq!(starts, 3);
}

#[test]
fn whole_arguments_in_one_chunk_and_object_arguments() {
    // Ollama: each call whole, with finish_reason "stop" even though tools were called.
    let stream = sse(&[
        delta(json!({"tool_calls": [
            {"id": "call_x", "index": 0, "type": "function",
             "function": {"name": "Read", "arguments": "{\"path\":\"src/lib.rs\"}"}},
            {"id": "call_y", "index": 1, "type": "function",
             "function": {"name": "Grep", "arguments": {"pattern": "todo", "glob": "*.rs"}}}
        ]})),
        finish("stop"),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            (
                "call_x".into(),
                "Read".into(),
                json!({"path": "src/lib.rs"})
            ),
            (
                "call_y".into(),
                "Grep".into(),
                json!({"pattern": "todo", "glob": "*.rs"})
            ),
        ]
    );
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert!(events.contains(&ModelEvent::ToolInputDelta {
        index: 1,
        partial_json: "{\"pattern\":\"todo\",\"glob\":\"*.rs\"}".into(),
    }));
}

#[test]
fn every_call_numbered_zero_is_told_apart_by_id() {
    let stream = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "Read", "arguments": "{\"path\":\"1\"}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "Read", "arguments": "{\"path\""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":\"2\"}"}}]})),
        finish("tool_calls"),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            ("a".into(), "Read".into(), json!({"path": "1"})),
            ("b".into(), "Read".into(), json!({"path": "2"})),
        ]
    );
}

#[test]
fn every_call_numbered_zero_without_ids_is_split_when_a_whole_input_is_followed() {
    let stream = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": "{\"path\":\"1\"}"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": ""}}]})),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": "{\"path\":\"2\"}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "Bash", "arguments": "{}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![
            (generated(0), "Read".into(), json!({"path": "1"})),
            (generated(1), "Read".into(), json!({"path": "2"})),
            (generated(2), "Bash".into(), json!({})),
        ]
    );
}

#[test]
fn first_fragment_without_index_then_numbered_fragments() {
    let stream = sse(&[
        delta(
            json!({"tool_calls": [{"id": "c", "function": {"name": "Read", "arguments": "{\"path\""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":\"q\"}"}}]})),
        finish("tool_calls"),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        tool_uses(&message),
        vec![("c".into(), "Read".into(), json!({"path": "q"}))]
    );
}

#[test]
fn arguments_before_the_name_are_released_with_the_start() {
    let stream = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": "{\"a\":"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"name": "T", "arguments": "1}"}}]})),
        finish("tool_calls"),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        events[..2],
        [
            ModelEvent::ToolUseStart {
                index: 0,
                id: "c".into(),
                name: "T".into()
            },
            ModelEvent::ToolInputDelta {
                index: 0,
                partial_json: "{\"a\":1}".into()
            },
        ]
    );
    assert_eq!(
        tool_uses(&message),
        vec![("c".into(), "T".into(), json!({"a": 1}))]
    );
}

#[test]
fn empty_arguments_are_an_empty_object_and_bad_ones_name_the_tool() {
    let empty = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "Glob", "arguments": ""}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (_, message) = complete(&empty);
    assert_eq!(
        tool_uses(&message),
        vec![("c".into(), "Glob".into(), json!({}))]
    );

    let bad = sse(&[
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "Bash", "arguments": "{\"command\": ls}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    match failure(&bad) {
        ModelError::InvalidToolInput { tool, id, .. } => {
            assert_eq!((tool.as_str(), id.as_str()), ("Bash", "c"))
        }
        other => panic!("expected InvalidToolInput, got {other:?}"),
    }
}

#[test]
fn a_call_that_never_names_its_function_is_a_protocol_error() {
    let stream = sse(&[
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": "{}"}}]})),
        finish("tool_calls"),
    ]);
    assert!(matches!(failure(&stream), ModelError::Protocol(m) if m.contains("never named")));
}

/// Tool-call indexes come from the server: a flood of distinct ones is refused once past the
/// bound, not held in memory call by call.
#[test]
fn more_tool_calls_than_any_model_makes_is_a_protocol_error() {
    let bound = crate::openai::decode::MAX_TOOL_CALLS as u64;
    let flood: Vec<serde_json::Value> = (0..bound + 10)
        .map(|i| json!({"index": i * 1_000_003, "id": format!("c{i}"), "function": {"name": "Read"}}))
        .collect();
    let stream = sse(&[delta(json!({ "tool_calls": flood })), finish("tool_calls")]);
    assert!(
        matches!(failure(&stream), ModelError::Protocol(m) if m.contains(&format!("more than {bound} tool calls")))
    );
}
