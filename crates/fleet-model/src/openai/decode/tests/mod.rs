//! The decoder on raw SSE text, as real servers write it, fed through the SSE decoder in
//! pieces of every size so that no result depends on where the network split the stream.

use super::*;
use crate::sse::SseDecoder;
use serde_json::json;

mod tool_calls;

const NONCE: u32 = 0xabc;

type Outcome = (
    Vec<ModelEvent>,
    Result<Option<AssistantMessage>, ModelError>,
);

/// Runs `stream` through SSE and the decoder the way the transport does, `size` bytes at a time.
fn decode_in_pieces(stream: &str, size: usize) -> Outcome {
    let mut sse = SseDecoder::new();
    let mut decoder = OpenAiDecoder::with_nonce(NONCE);
    let mut out = Vec::new();
    let mut events = Vec::new();
    let mut feed = |events: &mut Vec<SseEvent>, out: &mut Vec<ModelEvent>| {
        for event in events.drain(..) {
            match decoder.on_event(event, out) {
                Ok(None) => {}
                done => return Some(done),
            }
        }
        None
    };
    for piece in stream.as_bytes().chunks(size.max(1)) {
        sse.push(piece, &mut events);
        if let Some(done) = feed(&mut events, &mut out) {
            return (out, done);
        }
    }
    sse.finish(&mut events);
    if let Some(done) = feed(&mut events, &mut out) {
        return (out, done);
    }
    let end = decoder.on_eof(&mut out);
    (out, end)
}

/// Decodes whole and in pieces of several sizes, checks all agree, and returns the outcome.
fn decode(stream: &str) -> Outcome {
    let whole = decode_in_pieces(stream, stream.len());
    for size in [1, 2, 3, 5, 17, 64] {
        let split = decode_in_pieces(stream, size);
        assert_eq!(split.0, whole.0, "events differ with {size}-byte pieces");
        match (&split.1, &whole.1) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "message differs with {size}-byte pieces"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{size}-byte pieces gave {a:?}, whole gave {b:?}"),
        }
    }
    whole
}

/// Decodes a stream that must complete, returning the events and the message.
fn complete(stream: &str) -> (Vec<ModelEvent>, AssistantMessage) {
    match decode(stream) {
        (events, Ok(Some(message))) => (events, message),
        (_, other) => panic!("expected a complete message, got {other:?}"),
    }
}

fn failure(stream: &str) -> ModelError {
    match decode(stream) {
        (_, Err(e)) => e,
        (_, other) => panic!("expected an error, got {other:?}"),
    }
}

/// `data:` lines for each chunk, then `[DONE]`.
fn sse(chunks: &[Value]) -> String {
    let mut text = String::new();
    for chunk in chunks {
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    text.push_str("data: [DONE]\n\n");
    text
}

fn delta(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "model": "gpt-4o",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn tool_uses(message: &AssistantMessage) -> Vec<(String, String, Value)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse {
                id, name, input, ..
            } => Some((id.clone(), name.clone(), input.clone())),
            _ => None,
        })
        .collect()
}

fn generated(slot: usize) -> String {
    format!("call_{NONCE:08x}_{slot}")
}

#[test]
fn streamed_text_with_usage_in_a_final_chunk() {
    let stream = sse(&[
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Hel"})),
        delta(json!({"content": "lo ✓"})),
        finish("stop"),
        json!({"id": "chatcmpl-1", "model": "gpt-4o", "choices": [],
               "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                         "prompt_tokens_details": {"cached_tokens": 100}}}),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta {
                index: 0,
                text: "Hel".into()
            },
            ModelEvent::TextDelta {
                index: 0,
                text: "lo ✓".into()
            },
            ModelEvent::BlockComplete {
                index: 0,
                block: ContentBlock::text("Hello ✓")
            },
        ]
    );
    assert_eq!(message.id, "chatcmpl-1");
    assert_eq!(message.model, "gpt-4o");
    assert_eq!(message.content, vec![ContentBlock::text("Hello ✓")]);
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        message.usage,
        Usage {
            unreported: false,
            input_tokens: 20,
            cache_creation_input_tokens: None,
            cache_read_input_tokens: Some(100),
            output_tokens: 7,
        }
    );
}

#[test]
fn reasoning_text_and_parallel_tool_calls_in_openai_fragments() {
    let stream = sse(&[
        delta(json!({"role": "assistant", "reasoning_content": "Need "})),
        delta(json!({"reasoning_content": "both files."})),
        delta(json!({"content": "Reading."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                     "function": {"name": "Read", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"pa"}}]})),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                     "function": {"name": "Grep", "arguments": "{\"pattern\":"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "th\":\"a.rs\"}"}},
                                    {"index": 1, "function": {"arguments": "\"fn \\\"main\\\"\"}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let (events, message) = complete(&stream);
    assert_eq!(
        events,
        vec![
            ModelEvent::ThinkingDelta {
                index: 0,
                thinking: "Need ".into()
            },
            ModelEvent::ThinkingDelta {
                index: 0,
                thinking: "both files.".into()
            },
            ModelEvent::TextDelta {
                index: 1,
                text: "Reading.".into()
            },
            ModelEvent::ToolUseStart {
                index: 2,
                id: "call_a".into(),
                name: "Read".into()
            },
            ModelEvent::ToolInputDelta {
                index: 2,
                partial_json: "{\"pa".into()
            },
            ModelEvent::ToolUseStart {
                index: 3,
                id: "call_b".into(),
                name: "Grep".into()
            },
            ModelEvent::ToolInputDelta {
                index: 3,
                partial_json: "{\"pattern\":".into()
            },
            ModelEvent::ToolInputDelta {
                index: 2,
                partial_json: "th\":\"a.rs\"}".into()
            },
            ModelEvent::ToolInputDelta {
                index: 3,
                partial_json: "\"fn \\\"main\\\"\"}".into()
            },
            ModelEvent::BlockComplete {
                index: 0,
                block: ContentBlock::Thinking {
                    thinking: "Need both files.".into(),
                    signature: String::new()
                },
            },
            ModelEvent::BlockComplete {
                index: 1,
                block: ContentBlock::text("Reading.")
            },
            ModelEvent::BlockComplete {
                index: 2,
                block: ContentBlock::tool_use("call_a", "Read", json!({"path": "a.rs"})),
            },
            ModelEvent::BlockComplete {
                index: 3,
                block: ContentBlock::tool_use("call_b", "Grep", json!({"pattern": "fn \"main\""})),
            },
        ]
    );
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(message.content.len(), 4);
    assert_eq!(message.usage, Usage::unreported(), "no usage chunk came");
}

#[test]
fn ollama_reasoning_field_and_duplicate_names_are_read_once() {
    let stream = sse(&[
        delta(json!({"reasoning": "hmm"})),
        delta(json!({"reasoning": " ok", "reasoning_content": " ok"})),
        delta(json!({"content": [{"type": "text", "text": "Done"}]})),
        finish("stop"),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Thinking {
                thinking: "hmm ok".into(),
                signature: String::new()
            },
            ContentBlock::text("Done"),
        ]
    );
}

#[test]
fn openrouter_comments_and_empty_choices_are_skipped() {
    let stream = format!(
        ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\ndata: {}\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"id": "gen-1", "model": "openai/gpt-4o", "choices": []}),
        delta(json!({"content": "ok"})),
        json!({"id": "gen-1", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]}),
        json!({"id": "gen-1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}),
    );
    let (_, message) = complete(&stream);
    assert_eq!(message.id, "gen-1");
    assert_eq!(message.model, "openai/gpt-4o");
    assert_eq!(message.text(), "ok");
    assert_eq!(message.usage.output_tokens, 1);
    assert_eq!(message.usage.cache_read_input_tokens, None);
}

#[test]
fn usage_in_every_chunk_keeps_the_last() {
    let with_usage = |mut chunk: Value, prompt: u64, completion: u64| {
        chunk["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion});
        chunk
    };
    let stream = sse(&[
        with_usage(delta(json!({"content": "a"})), 10, 1),
        with_usage(delta(json!({"content": "b"})), 10, 2),
        with_usage(finish("stop"), 10, 3),
        delta(json!({"content": ""})),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(
        (message.usage.input_tokens, message.usage.output_tokens),
        (10, 3)
    );
}

#[test]
fn deepseek_cache_hits_become_cache_reads() {
    let mut chunk = finish("stop");
    chunk["usage"] =
        json!({"prompt_tokens": 50, "completion_tokens": 2, "prompt_cache_hit_tokens": 32});
    let (_, message) = complete(&sse(&[chunk]));
    assert_eq!(message.usage.input_tokens, 18);
    assert_eq!(message.usage.cache_read_input_tokens, Some(32));
}

#[test]
fn a_mid_stream_error_chunk_is_a_stream_error() {
    let stream = sse(&[
        delta(json!({"content": "par"})),
        json!({"error": {"message": "Provider returned error", "type": "server_error", "code": 502}}),
    ]);
    let (events, result) = decode(&stream);
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            index: 0,
            text: "par".into()
        }]
    );
    match result {
        Err(ModelError::StreamError {
            provider,
            error_type,
            message,
        }) => {
            assert_eq!((provider, error_type.as_str()), ("openai", "server_error"));
            assert_eq!(message, "Provider returned error");
        }
        other => panic!("expected StreamError, got {other:?}"),
    }
    let flat = sse(&[
        json!({"object": "error", "message": "out of memory", "type": "InternalServerError", "code": 500}),
    ]);
    assert!(
        matches!(failure(&flat), ModelError::StreamError { message, .. } if message == "out of memory")
    );
    let named = "event: error\ndata: upstream went away\n\n";
    assert!(
        matches!(failure(named), ModelError::StreamError { message, .. } if message == "upstream went away")
    );
}

#[test]
fn without_done_a_finish_reason_completes_at_eof() {
    let stream = format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "hi"})),
        finish("length")
    );
    let (_, message) = complete(&stream);
    assert_eq!(message.text(), "hi");
    assert_eq!(message.stop_reason, Some(StopReason::MaxTokens));
}

#[test]
fn without_done_or_finish_reason_the_stream_is_unfinished() {
    let stream = format!("data: {}\n\n", delta(json!({"content": "hi"})));
    let (events, result) = decode(&stream);
    assert_eq!(
        events,
        vec![ModelEvent::TextDelta {
            index: 0,
            text: "hi".into()
        }]
    );
    assert!(
        matches!(result, Ok(None)),
        "the transport reports the cut: {result:?}"
    );
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    let cases = [
        ("stop", StopReason::EndTurn),
        ("tool_calls", StopReason::ToolUse),
        ("function_call", StopReason::ToolUse),
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
        ("eos_token", StopReason::Other("eos_token".into())),
    ];
    for (reason, want) in cases {
        let (_, message) = complete(&sse(&[delta(json!({"content": "x"})), finish(reason)]));
        assert_eq!(message.stop_reason, Some(want), "{reason}");
    }
    let (_, message) = complete(&sse(&[delta(json!({"content": "x"}))]));
    assert_eq!(
        message.stop_reason,
        Some(StopReason::EndTurn),
        "[DONE] without a finish_reason"
    );
}

#[test]
fn missing_id_and_model_and_extra_choices() {
    let stream = sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": "first"}},
                           {"index": 1, "delta": {"content": "second"}}]}),
        json!({"choices": [{"delta": {"content": "!"}, "finish_reason": "stop"}]}),
    ]);
    let (_, message) = complete(&stream);
    assert_eq!(message.id, format!("chatcmpl-{NONCE:08x}"));
    assert_eq!(message.model, "");
    assert_eq!(message.text(), "first!");
}

#[test]
fn unreadable_chunk_is_a_protocol_error() {
    let stream = "data: {\"choices\": [oops]}\n\n";
    assert!(matches!(failure(stream), ModelError::Protocol(m) if m.contains("chunk")));
}

#[test]
fn crlf_line_endings_decode_the_same() {
    let stream = sse(&[delta(json!({"content": "a"})), finish("stop")]).replace('\n', "\r\n");
    let (_, message) = complete(&stream);
    assert_eq!(message.text(), "a");
}

#[test]
fn a_reporting_decoder_starts_the_reply_with_the_servers_id() {
    let chunk = |id: &str, delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": id, "model": "smol", "choices": [{"index": 0, "delta": delta}]})
        )
    };
    let stream = format!(
        "{}{}data: [DONE]\n\n",
        chunk(
            "chatcmpl-abc",
            json!({"role": "assistant", "content": "hi"})
        ),
        chunk("chatcmpl-abc", json!({"content": "!"})),
    );
    let mut sse = SseDecoder::new();
    let mut events = Vec::new();
    sse.push(stream.as_bytes(), &mut events);
    let mut decoder = OpenAiDecoder::reporting_start(100);
    let mut out = Vec::new();
    let mut message = None;
    for event in events {
        if let Some(done) = decoder.on_event(event, &mut out).expect("decodes") {
            message = Some(done);
        }
    }
    let starts: Vec<&ModelEvent> = out
        .iter()
        .filter(|e| matches!(e, ModelEvent::MessageStart { .. }))
        .collect();
    assert_eq!(starts.len(), 1, "{out:?}");
    assert!(
        matches!(&out[0], ModelEvent::MessageStart { id, model, .. } if id == "chatcmpl-abc" && model == "smol"),
        "{out:?}"
    );
    assert_eq!(message.map(|m| m.id).as_deref(), Some("chatcmpl-abc"));
    // Without reporting, nothing new is emitted.
    let (plain, _) = decode(&stream);
    assert!(plain
        .iter()
        .all(|e| !matches!(e, ModelEvent::MessageStart { .. })));
}
