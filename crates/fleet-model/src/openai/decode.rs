//! Assembles a Chat Completions stream into a message, emitting deltas as they arrive.
//!
//! The protocol has no block boundaries: every chunk may add reasoning, text and fragments of
//! any tool call at once, and the end is known only from `[DONE]` (or, on servers that never
//! send it, the end of the stream after a `finish_reason`). So the decoder keeps one thinking
//! block, one text block and a list of tool calls open for the whole response and closes them
//! all at the end. Event indexes count blocks in the order they first appeared; the finished
//! message orders them thinking, text, tool calls — the order every server streams them in.
//!
//! Servers differ most in how they fragment tool calls, so a fragment is matched to its call
//! by `index` when the server sends one, else by `id`, else it continues the latest call.
//!
//! `finish_reason: "length"` means two different things: the reply used all the `max_tokens`
//! it was given, or the server's context window filled first (llama-server stops there with
//! the same word). The decoder knows the request's `max_tokens`, so a `length` stop with fewer
//! completion tokens reported than that is the window's doing.

use super::error::stream_error;
use super::wire::{Chunk, ChunkUsage, Delta, ToolCallDelta};
use crate::anthropic::preview;
use crate::error::ModelError;
use crate::event::ModelEvent;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use calls::{Fragment, ToolCall};
use fleet_protocol::{AssistantMessage, ContentBlock, StopReason, Usage};
use serde_json::Value;
use std::collections::HashMap;

/// The most tool calls one reply may hold (see `check_bounds`): room for a fan-out of tens of
/// thousands of agents in one reply, far below an allocation that hurts.
pub(crate) const MAX_TOOL_CALLS: usize = 65_536;

/// Assembles one streamed reply; see the module docs. Public so that recorded streams can be
/// replayed (and benchmarked) without a server, like the Anthropic decoder.
#[derive(Debug)]
pub struct OpenAiDecoder {
    id: Option<String>,
    model: Option<String>,
    /// The event index the next block to open will get.
    next_index: usize,
    thinking: Option<OpenText>,
    text: Option<OpenText>,
    calls: Vec<ToolCall>,
    /// The latest call with each wire index and each id: a reply of tens of thousands of
    /// calls must not cost a scan of all of them per fragment.
    by_index: HashMap<u64, usize>,
    by_id: HashMap<String, usize>,
    finish_reason: Option<String>,
    /// The latest usage seen; some servers repeat it, growing, in every chunk.
    usage: Option<Usage>,
    /// The request's output limit, to tell a `length` stop at it from one short of it.
    max_tokens: Option<u64>,
    /// Makes generated ids unique across responses (ids are how results find their calls).
    nonce: u32,
    /// Emit [`ModelEvent::MessageStart`] with the first chunk, carrying the server's id
    /// (`chatcmpl-…`), for callers that replay the stream (see [`Self::reporting_start`]).
    report_start: bool,
}

#[derive(Debug)]
struct OpenText {
    index: usize,
    text: String,
}

impl Default for OpenAiDecoder {
    fn default() -> Self {
        Self {
            id: None,
            model: None,
            next_index: 0,
            thinking: None,
            text: None,
            calls: Vec::new(),
            by_index: HashMap::new(),
            by_id: HashMap::new(),
            finish_reason: None,
            usage: None,
            max_tokens: None,
            nonce: rand::random(),
            report_start: false,
        }
    }
}

impl OpenAiDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for a request that allowed `max_tokens` output tokens.
    pub fn for_request(max_tokens: u64) -> Self {
        Self {
            max_tokens: Some(max_tokens),
            ..Self::default()
        }
    }

    /// Like [`Self::for_request`], also reporting the reply's start with the first chunk, so
    /// that a partial-message reader learns the server's id (and a `message_discarded` can
    /// name it) before the reply is complete.
    pub fn reporting_start(max_tokens: u64) -> Self {
        Self {
            report_start: true,
            ..Self::for_request(max_tokens)
        }
    }

    /// A decoder whose generated ids are predictable, for tests.
    #[cfg(test)]
    fn with_nonce(nonce: u32) -> Self {
        Self {
            nonce,
            ..Self::default()
        }
    }

    fn on_chunk(&mut self, chunk: Chunk, out: &mut Vec<ModelEvent>) {
        if self.id.is_none() {
            self.id = chunk.id.filter(|id| !id.is_empty());
        }
        if self.model.is_none() {
            self.model = chunk.model.filter(|model| !model.is_empty());
        }
        if self.report_start {
            // Once, with the first chunk: the id is fixed from here on (a server that names
            // none gets the generated one the final message will carry too).
            self.report_start = false;
            let nonce = self.nonce;
            let id = self
                .id
                .get_or_insert_with(|| format!("chatcmpl-{nonce:08x}"))
                .clone();
            out.push(ModelEvent::MessageStart {
                id,
                model: self.model.clone().unwrap_or_default(),
                usage: Usage::default(),
            });
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(to_usage(usage));
        }
        // Only the first choice is read: fleet never asks for more than one (`n` is not sent).
        let choices = chunk.choices.unwrap_or_default();
        for choice in choices.into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                self.apply(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
    }

    fn apply(&mut self, delta: Delta, out: &mut Vec<ModelEvent>) {
        // Some servers send the same reasoning under both names; read only one of them.
        let reasoning =
            text_of(delta.reasoning_content.as_ref()).or_else(|| text_of(delta.reasoning.as_ref()));
        if let Some(thinking) = reasoning {
            let block = open(&mut self.thinking, &mut self.next_index);
            block.text.push_str(&thinking);
            out.push(ModelEvent::ThinkingDelta {
                index: block.index,
                thinking,
            });
        }
        if let Some(text) = text_of(delta.content.as_ref()) {
            let block = open(&mut self.text, &mut self.next_index);
            block.text.push_str(&text);
            out.push(ModelEvent::TextDelta {
                index: block.index,
                text,
            });
        }
        for fragment in delta.tool_calls.unwrap_or_default() {
            self.apply_tool_fragment(fragment, out);
        }
    }

    /// A reply with more tool calls than any model makes is a broken or hostile server: the
    /// stream is refused rather than held in memory call by call.
    fn check_bounds(&self) -> Result<(), ModelError> {
        if self.calls.len() > MAX_TOOL_CALLS {
            return Err(ModelError::Protocol(format!(
                "the server sent more than {MAX_TOOL_CALLS} tool calls in one reply"
            )));
        }
        Ok(())
    }

    fn apply_tool_fragment(&mut self, wire: ToolCallDelta, out: &mut Vec<ModelEvent>) {
        let fragment = Fragment::from(wire);
        let slot = match self.find_call(&fragment) {
            Some(slot) => slot,
            // A fragment that says nothing (an empty trailer) does not make a call.
            None if fragment.is_empty() => return,
            None => {
                self.calls.push(ToolCall {
                    wire_index: fragment.index,
                    wire_id: None,
                    name: None,
                    arguments: String::new(),
                    started: None,
                });
                let slot = self.calls.len() - 1;
                if let Some(index) = fragment.index {
                    self.by_index.insert(index, slot);
                }
                slot
            }
        };
        let Fragment {
            id,
            name,
            arguments,
            ..
        } = fragment;
        let call = &mut self.calls[slot];
        if call.wire_id.is_none() {
            if let Some(id) = &id {
                let latest = self.by_id.entry(id.clone()).or_insert(slot);
                *latest = (*latest).max(slot);
            }
            call.wire_id = id;
        }
        // A name repeated on every fragment is the same name; the first one stands.
        if call.name.is_none() {
            call.name = name;
        }
        call.arguments.push_str(&arguments);
        match (&call.started, &call.name) {
            (Some((index, _)), _) => {
                if !arguments.is_empty() {
                    out.push(ModelEvent::ToolInputDelta {
                        index: *index,
                        partial_json: arguments,
                    });
                }
            }
            (None, Some(name)) => {
                let index = self.next_index;
                self.next_index += 1;
                let id = call
                    .wire_id
                    .clone()
                    .unwrap_or_else(|| format!("call_{:08x}_{slot}", self.nonce));
                out.push(ModelEvent::ToolUseStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                });
                // Arguments that came before the name are released now, in one piece.
                if !call.arguments.is_empty() {
                    out.push(ModelEvent::ToolInputDelta {
                        index,
                        partial_json: call.arguments.clone(),
                    });
                }
                call.started = Some((index, id));
            }
            (None, None) => {}
        }
    }

    /// Which call a fragment continues, if any: the one with its `index`, else the one with
    /// its `id`, else the latest — unless the fragment plainly begins another call.
    fn find_call(&self, fragment: &Fragment) -> Option<usize> {
        let slot = if let Some(index) = fragment.index {
            match self.by_index.get(&index) {
                Some(slot) => *slot,
                None => {
                    // A server that left the index off the call's first fragment only.
                    let last = self.calls.len().checked_sub(1)?;
                    let unnumbered = self.calls[last].wire_index.is_none()
                        && fragment.id.is_none()
                        && fragment.name.is_none();
                    return unnumbered.then_some(last);
                }
            }
        } else if let Some(id) = &fragment.id {
            // An id seen before continues that call; a new one starts a call.
            return self.by_id.get(id).copied();
        } else {
            self.calls.len().checked_sub(1)?
        };
        (!self.calls[slot].is_ended_by(fragment)).then_some(slot)
    }

    /// Whether a `length` stop came before the request's `max_tokens`: the server ran out of
    /// context window, not of output allowance. Unknown without both figures.
    fn stopped_short(&self, usage: &Usage) -> bool {
        usage.is_reported()
            && self
                .max_tokens
                .is_some_and(|limit| usage.output_tokens < limit)
    }

    /// Closes every block and builds the message; nothing is emitted if a tool input is bad.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<AssistantMessage, ModelError> {
        let usage = self.usage.take().unwrap_or_else(Usage::unreported);
        let mut calls = std::mem::take(&mut self.calls);
        // Stable: calls a server numbered alike keep the order they arrived in.
        calls.sort_by_key(|c| c.wire_index.unwrap_or(u64::MAX));
        let mut stop = stop_reason(self.finish_reason.as_deref(), !calls.is_empty());
        if stop == StopReason::MaxTokens && self.stopped_short(&usage) {
            stop = StopReason::ModelContextWindowExceeded;
        }
        let mut blocks = Vec::new();
        if let Some(thinking) = self.thinking.take() {
            let block = ContentBlock::Thinking {
                thinking: thinking.text,
                signature: String::new(),
            };
            blocks.push((thinking.index, block));
        }
        if let Some(text) = self.text.take() {
            blocks.push((text.index, ContentBlock::text(text.text)));
        }
        for call in calls {
            blocks.push(call.into_block(&stop, &usage)?);
        }
        let mut message = AssistantMessage::empty(
            self.id
                .take()
                .unwrap_or_else(|| format!("chatcmpl-{:08x}", self.nonce)),
            self.model.take().unwrap_or_default(),
        );
        message.stop_reason = Some(stop);
        message.usage = usage;
        for (index, block) in blocks {
            out.push(ModelEvent::BlockComplete {
                index,
                block: block.clone(),
            });
            message.content.push(block);
        }
        Ok(message)
    }
}

impl WireDecoder for OpenAiDecoder {
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        if data == "[DONE]" {
            return self.finish(out).map(Some);
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(_) if event.event.as_deref() == Some("error") => {
                return Err(stream_error(&Value::String(data.to_owned())));
            }
            Err(e) => {
                return Err(ModelError::Protocol(format!(
                    "cannot read a chat completion chunk: {e} in {}",
                    preview(data)
                )))
            }
        };
        if chunk.is_error() {
            let body = serde_json::from_str::<Value>(data).unwrap_or(Value::Null);
            return Err(stream_error(&body));
        }
        self.on_chunk(chunk, out);
        self.check_bounds()?;
        Ok(None)
    }

    /// A non-streamed `chat.completion` is one chunk whose choice holds a `message` where a
    /// chunk holds a `delta`; tool calls there carry no `index`, so their position is used.
    fn on_whole_body(
        &mut self,
        body: &[u8],
        out: &mut Vec<ModelEvent>,
    ) -> Result<AssistantMessage, ModelError> {
        let text = String::from_utf8_lossy(body);
        let mut chunk: Chunk = serde_json::from_slice(body).map_err(|e| {
            ModelError::Protocol(format!(
                "expected an event stream or a chat completion, got: {e} in {}",
                preview(&text)
            ))
        })?;
        if chunk.is_error() {
            return Err(stream_error(
                &serde_json::from_slice(body).unwrap_or(Value::Null),
            ));
        }
        for choice in chunk.choices.iter_mut().flatten() {
            if choice.delta.is_none() {
                choice.delta = choice.message.take();
            }
            let calls = choice.delta.as_mut().and_then(|d| d.tool_calls.as_mut());
            for (position, call) in calls.into_iter().flatten().enumerate() {
                call.index.get_or_insert(position as u64);
            }
        }
        self.on_chunk(chunk, out);
        self.finish(out)
    }

    /// Some servers end the stream without `[DONE]`; a `finish_reason` says the reply was whole.
    fn on_eof(
        &mut self,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        if self.finish_reason.is_some() {
            self.finish(out).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// The open block in `slot`, opening it (with the next event index) if needed.
fn open<'a>(slot: &'a mut Option<OpenText>, next_index: &mut usize) -> &'a mut OpenText {
    slot.get_or_insert_with(|| {
        let index = *next_index;
        *next_index += 1;
        OpenText {
            index,
            text: String::new(),
        }
    })
}

/// Text from a string, or from a list of `{"type":"text","text":…}` parts; empty is none.
fn text_of(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text")?.as_str())
            .collect(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// `prompt_tokens` counts cached tokens too; fleet's usage keeps them apart, as Anthropic does.
fn to_usage(usage: &ChunkUsage) -> Usage {
    let prompt = usage.prompt_tokens.unwrap_or(0);
    let cached = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .or(usage.prompt_cache_hit_tokens);
    Usage {
        unreported: false,
        input_tokens: prompt.saturating_sub(cached.unwrap_or(0)),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: cached,
        output_tokens: usage.completion_tokens.unwrap_or(0),
    }
}

/// Maps `finish_reason`. A reply that calls tools is a `tool_use` stop even where a server
/// says `stop` (older Ollama) or never says anything before `[DONE]`.
fn stop_reason(finish_reason: Option<&str>, has_calls: bool) -> StopReason {
    match finish_reason {
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

mod calls;

#[cfg(test)]
mod tests;
