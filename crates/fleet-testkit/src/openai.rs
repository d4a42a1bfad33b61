//! The Chat Completions side (`POST /v1/chat/completions`): `chat.completion.chunk` events
//! ending in `data: [DONE]`, or one `chat.completion` object when `stream` is false.
//!
//! Thinking is sent as `delta.reasoning_content` (the convention of vLLM and DeepSeek-style
//! servers); redacted thinking has no OpenAI form and is left out.

use crate::answer::{split_chars, Answer};
use crate::anthropic::{json_response, tool_input_json};
use crate::encode::{apply_stream_fault, Encoding};
use crate::http_error::openai_error;
use crate::scenario::Fault;
use crate::sse;
use crate::view::Protocol;
use axum::response::Response;
use bytes::Bytes;
use fleet_protocol::{ContentBlock, StopReason};
use serde_json::{json, Value};
use std::time::{SystemTime, UNIX_EPOCH};

/// The `finish_reason` that corresponds to an Anthropic stop reason.
fn finish_reason(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::Refusal => "content_filter",
        _ => "stop",
    }
}

fn usage(answer: &Answer) -> Value {
    let prompt = answer.usage.input_tokens;
    let completion = answer.usage.output_tokens;
    json!({ "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion })
}

struct Chunks<'a> {
    answer: &'a Answer,
    created: u64,
    include_usage: bool,
    frames: Vec<Bytes>,
}

impl Chunks<'_> {
    fn push(&mut self, delta: Value, finish: Option<&str>) {
        let mut chunk = json!({
            "id": self.answer.message_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.answer.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        if self.include_usage {
            chunk["usage"] = Value::Null;
        }
        self.frames.push(sse::data_event(&chunk.to_string()));
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The `data:` frames of a streamed reply, `[DONE]` included.
fn stream_frames(answer: &Answer, enc: &Encoding, malformed: bool) -> Vec<Bytes> {
    let mut c = Chunks {
        answer,
        created: now(),
        include_usage: enc.include_usage,
        frames: Vec::new(),
    };
    c.push(json!({ "role": "assistant", "content": "" }), None);
    let mut tool_index = 0usize;
    for block in &answer.blocks {
        match block {
            ContentBlock::Text { text, .. } => {
                for piece in split_chars(text, enc.delta_chars) {
                    c.push(json!({ "content": piece }), None);
                }
            }
            ContentBlock::Thinking { thinking, .. } => {
                for piece in split_chars(thinking, enc.delta_chars) {
                    c.push(json!({ "reasoning_content": piece }), None);
                }
            }
            ContentBlock::ToolUse {
                id, name, input, ..
            } => {
                let args = tool_input_json(input, malformed);
                let whole = enc.openai.arguments_in_one_chunk;
                let mut first = json!({
                    "index": tool_index,
                    "type": "function",
                    "function": { "name": name, "arguments": if whole { args.as_str() } else { "" } },
                });
                if !enc.openai.omit_tool_call_ids {
                    first["id"] = json!(id);
                }
                c.push(json!({ "tool_calls": [first] }), None);
                if !whole {
                    for piece in split_chars(&args, enc.delta_chars) {
                        let frag =
                            json!({ "index": tool_index, "function": { "arguments": piece } });
                        c.push(json!({ "tool_calls": [frag] }), None);
                    }
                }
                tool_index += 1;
            }
            _ => {}
        }
    }
    c.push(json!({}), Some(finish_reason(&answer.stop_reason)));
    if enc.include_usage {
        let chunk = json!({
            "id": answer.message_id,
            "object": "chat.completion.chunk",
            "created": c.created,
            "model": answer.model,
            "choices": [],
            "usage": usage(answer),
        });
        c.frames.push(sse::data_event(&chunk.to_string()));
    }
    c.frames.push(sse::data_event("[DONE]"));
    c.frames
}

/// The whole `chat.completion` object.
fn completion(answer: &Answer) -> Value {
    let text: String = answer
        .blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let reasoning: String = answer
        .blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = answer
        .blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input, .. } => Some(json!({
                "id": id, "type": "function", "function": { "name": name, "arguments": input.to_string() },
            })),
            _ => None,
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) },
        "refusal": null,
    });
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning);
    }
    json!({
        "id": answer.message_id,
        "object": "chat.completion",
        "created": now(),
        "model": answer.model,
        "choices": [{ "index": 0, "message": message, "logprobs": null,
                      "finish_reason": finish_reason(&answer.stop_reason) }],
        "usage": usage(answer),
    })
}

pub(crate) fn respond(
    answer: &Answer,
    fault: Option<&Fault>,
    stream: bool,
    enc: &Encoding,
) -> Response {
    if stream {
        let malformed = matches!(fault, Some(Fault::MalformedToolJson));
        let frames = stream_frames(answer, enc, malformed);
        let (frames, ending) = apply_stream_fault(frames, fault, |error_type, message| {
            sse::data_event(&openai_error(error_type, message).to_string())
        });
        return enc.sse_response(Protocol::OpenAi, frames, ending);
    }
    let json = serde_json::to_vec(&completion(answer)).unwrap_or_default();
    json_response(json, fault, Protocol::OpenAi, enc)
}
