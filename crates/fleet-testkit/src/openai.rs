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

/// What the Chat Completions wire carries of a reply, in order: tool arguments as the text
/// sent (so that a cut or a fault can break them); redacted thinking has no form here.
enum Item {
    Text(String),
    Reasoning(String),
    Call {
        id: String,
        name: String,
        arguments: String,
    },
}

fn items(answer: &Answer, malformed: bool) -> Vec<Item> {
    answer
        .blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text, .. } => Some(Item::Text(text.clone())),
            ContentBlock::Thinking { thinking, .. } => Some(Item::Reasoning(thinking.clone())),
            ContentBlock::ToolUse {
                id, name, input, ..
            } => Some(Item::Call {
                id: id.clone(),
                name: name.clone(),
                arguments: tool_input_json(input, malformed),
            }),
            _ => None,
        })
        .collect()
}

/// Keeps at most `bytes` of `text`, never cutting a character.
fn keep(text: &mut String, bytes: usize) {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// Cuts the reply after `tokens` output tokens (4 bytes each, as they are counted), where a
/// server whose context window is full stops: mid-text, or mid-arguments of a tool call
/// (whose JSON is then broken). A call whose name does not fit is not sent at all. Returns
/// whether anything was cut.
fn cut(items: &mut Vec<Item>, tokens: u64) -> bool {
    let mut left = usize::try_from(tokens.saturating_mul(4)).unwrap_or(usize::MAX);
    let mut end = None;
    for (i, item) in items.iter_mut().enumerate() {
        let text = match item {
            Item::Text(text) | Item::Reasoning(text) => text,
            Item::Call {
                name, arguments, ..
            } => {
                if name.len() >= left {
                    end = Some(i);
                    break;
                }
                left -= name.len();
                arguments
            }
        };
        if text.len() > left {
            keep(text, left);
            end = Some(i + 1);
            break;
        }
        left -= text.len();
    }
    match end {
        Some(end) => {
            items.truncate(end);
            true
        }
        None => false,
    }
}

/// The `data:` frames of a streamed reply, `[DONE]` included.
fn stream_frames(answer: &Answer, items: &[Item], enc: &Encoding) -> Vec<Bytes> {
    let mut c = Chunks {
        answer,
        created: now(),
        include_usage: enc.include_usage,
        frames: Vec::new(),
    };
    c.push(json!({ "role": "assistant", "content": "" }), None);
    let mut tool_index = 0usize;
    for item in items {
        match item {
            Item::Text(text) => {
                for piece in split_chars(text, enc.delta_chars) {
                    c.push(json!({ "content": piece }), None);
                }
            }
            Item::Reasoning(thinking) => {
                for piece in split_chars(thinking, enc.delta_chars) {
                    c.push(json!({ "reasoning_content": piece }), None);
                }
            }
            Item::Call {
                id,
                name,
                arguments,
            } => {
                let whole = enc.openai.arguments_in_one_chunk;
                let mut first = json!({
                    "index": tool_index,
                    "type": "function",
                    "function": { "name": name, "arguments": if whole { arguments.as_str() } else { "" } },
                });
                if !enc.openai.omit_tool_call_ids {
                    first["id"] = json!(id);
                }
                c.push(json!({ "tool_calls": [first] }), None);
                if !whole {
                    for piece in split_chars(arguments, enc.delta_chars) {
                        let frag =
                            json!({ "index": tool_index, "function": { "arguments": piece } });
                        c.push(json!({ "tool_calls": [frag] }), None);
                    }
                }
                tool_index += 1;
            }
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
fn completion(answer: &Answer, items: &[Item], enc: &Encoding) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for item in items {
        match item {
            Item::Text(t) => text.push_str(t),
            Item::Reasoning(r) => reasoning.push_str(r),
            Item::Call {
                id,
                name,
                arguments,
            } => calls.push(json!({
                "id": id, "type": "function", "function": { "name": name, "arguments": arguments },
            })),
        }
    }
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
    let mut completion = json!({
        "id": answer.message_id,
        "object": "chat.completion",
        "created": now(),
        "model": answer.model,
        "choices": [{ "index": 0, "message": message, "logprobs": null,
                      "finish_reason": finish_reason(&answer.stop_reason) }],
    });
    if !enc.openai.omit_usage {
        completion["usage"] = usage(answer);
    }
    completion
}

pub(crate) fn respond(
    answer: &Answer,
    fault: Option<&Fault>,
    stream: bool,
    enc: &Encoding,
) -> Response {
    // Malformed arguments are a streaming fault; a whole reply always carries valid JSON.
    let malformed = stream && matches!(fault, Some(Fault::MalformedToolJson));
    let mut items = items(answer, malformed);
    let room = enc
        .output_room
        .filter(|room| *room < answer.usage.output_tokens);
    // The window filled up: the reply stops there, and usage counts what was sent.
    let cut_answer = room.filter(|room| cut(&mut items, *room)).map(|room| {
        let mut cut = answer.clone();
        cut.stop_reason = StopReason::MaxTokens;
        cut.usage.output_tokens = room;
        cut
    });
    let answer = cut_answer.as_ref().unwrap_or(answer);
    if stream {
        let frames = stream_frames(answer, &items, enc);
        let (frames, ending) = apply_stream_fault(frames, fault, |error_type, message| {
            sse::data_event(&openai_error(error_type, message).to_string())
        });
        return enc.sse_response(Protocol::OpenAi, frames, ending);
    }
    let json = serde_json::to_vec(&completion(answer, &items, enc)).unwrap_or_default();
    json_response(json, fault, Protocol::OpenAi, enc)
}
