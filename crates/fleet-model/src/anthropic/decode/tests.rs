//! The Messages API decoder on raw SSE text, for what the fake server does not produce on its
//! own: stop reasons newer than the fake's scripts, and streams that end without
//! `message_stop`.

use super::*;
use crate::sse::SseDecoder;
use fleet_protocol::StopReason;

fn decode(stream: &str) -> Result<Option<AssistantMessage>, ModelError> {
    let mut sse = SseDecoder::new();
    let mut events = Vec::new();
    sse.push(stream.as_bytes(), &mut events);
    sse.finish(&mut events);
    let mut decoder = AnthropicDecoder::new();
    let mut out = Vec::new();
    for event in events {
        if let Some(message) = decoder.on_event(event, &mut out)? {
            return Ok(Some(message));
        }
    }
    decoder.on_eof(&mut out)
}

const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":900,\"output_tokens\":1}}}\n\n";

fn tool_block(json: &str) -> String {
    format!(
        "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Write\",\"input\":{{}}}}}}\n\n\
         event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{}}}}}\n\n\
         event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n",
        serde_json::to_string(json).unwrap_or_default()
    )
}

fn end(stop_reason: &str, output_tokens: u64) -> String {
    format!(
        "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop_reason}\",\"stop_sequence\":null}},\"usage\":{{\"output_tokens\":{output_tokens}}}}}\n\n\
         event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    )
}

#[test]
fn the_context_window_stop_reason_is_its_own() {
    let stream = format!(
        "{START}{}{}",
        tool_block(r#"{"file_path":"/a"}"#),
        end("model_context_window_exceeded", 77)
    );
    let message = decode(&stream).ok().flatten().expect("a whole message");
    assert_eq!(
        message.stop_reason,
        Some(StopReason::ModelContextWindowExceeded)
    );
}

#[test]
fn bad_tool_input_is_reported_at_the_end_with_the_replys_stop_and_usage() {
    let stream = format!(
        "{START}{}{}",
        tool_block(r#"{"file_path":"/a","content":"unfinis"#),
        end("max_tokens", 4096)
    );
    match decode(&stream) {
        Err(ModelError::InvalidToolInput {
            tool,
            stop_reason,
            usage,
            ..
        }) => {
            assert_eq!(tool, "Write");
            assert_eq!(stop_reason, Some(StopReason::MaxTokens));
            assert_eq!((usage.input_tokens, usage.output_tokens), (900, 4096));
            assert!(usage.is_reported());
        }
        other => panic!("expected invalid tool input, got {other:?}"),
    }
}

#[test]
fn bad_tool_input_is_still_reported_when_the_stream_ends_early() {
    let stream = format!("{START}{}", tool_block(r#"{"file_path":"#));
    match decode(&stream) {
        Err(ModelError::InvalidToolInput {
            stop_reason, usage, ..
        }) => {
            assert_eq!(stop_reason, None, "the reply never said how it ended");
            assert_eq!(usage.input_tokens, 900);
        }
        other => panic!("expected invalid tool input, got {other:?}"),
    }
}

/// A block index from the server sizes a vector: a huge one is a protocol error naming it,
/// not an allocation of about a petabyte that aborts fleet.
#[test]
fn a_huge_block_index_is_an_error_not_an_abort() {
    let stream = format!(
        "{START}event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":\
         18446744073709551000,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n{}",
        end("end_turn", 1)
    );
    let err = decode(&stream).expect_err("refused");
    assert!(err.to_string().contains("18446744073709551000"), "{err}");
    let at = |index: usize| {
        format!(
            "{START}event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":\
             {index},\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n{}",
            end("end_turn", 1)
        )
    };
    assert!(decode(&at(super::MAX_BLOCKS)).is_err());
    // A fan-out of 10,000 agents is one reply of 10,000 blocks: the bound must let it pass
    // (this lone block may fail for other reasons, never for its index).
    if let Err(err) = decode(&at(10_000)) {
        assert!(!err.to_string().contains("at most"), "{err}");
    }
}
