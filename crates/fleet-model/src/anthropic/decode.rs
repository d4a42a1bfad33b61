//! Assembles a Messages API stream into a message, emitting deltas as they arrive.
//!
//! A tool input that is not valid JSON is known at its block's end, but how the reply ended
//! (`stop_reason`) and what it cost (`usage`) only at the message's: the error waits for
//! `message_stop` (or the end of the stream) so that it can say both.

use crate::error::ModelError;
use crate::event::ModelEvent;
use crate::sse::SseEvent;
use crate::transport::WireDecoder;
use fleet_protocol::{
    ApiErrorBody, ApiErrorDetail, AssistantMessage, BlockDelta, ContentBlock, StreamEvent,
};
use serde_json::json;

const PROVIDER: &str = "anthropic";

/// The most content blocks one reply may hold: far above what a model sends (a fan-out of
/// 10,000 Agent calls is one reply of 10,000 blocks), far below an allocation that hurts (see
/// `start_block`).
pub(crate) const MAX_BLOCKS: usize = 65_536;

/// Event types this decoder knows; anything else (a newer API's addition) is skipped.
const KNOWN_EVENTS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
];

/// Assembles one streamed reply; see the module docs.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    message: Option<AssistantMessage>,
    /// Emit [`ModelEvent::MessageStart`] (see [`Self::reporting_start`]).
    report_start: bool,
    /// Blocks by stream index; `None` until started, then in progress, then finished.
    blocks: Vec<Option<BlockState>>,
    /// The first tool input that did not parse, reported once the reply has ended.
    invalid_input: Option<ModelError>,
}

#[derive(Debug)]
enum BlockState {
    Open(ContentBlock),
    /// A tool call whose input JSON is still arriving in fragments.
    OpenTool {
        id: String,
        name: String,
        json: String,
    },
    Done(ContentBlock),
}

impl AnthropicDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that also reports the reply's start, for callers that replay the stream.
    pub fn reporting_start() -> Self {
        Self {
            report_start: true,
            ..Self::default()
        }
    }

    fn block(&mut self, index: usize) -> Result<&mut BlockState, ModelError> {
        self.blocks
            .get_mut(index)
            .and_then(Option::as_mut)
            .ok_or_else(|| {
                ModelError::Protocol(format!(
                    "delta for content block {index}, which was never started"
                ))
            })
    }

    fn start_block(
        &mut self,
        index: usize,
        block: ContentBlock,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        // The index comes from the server and sizes a vector: a huge one must be an error, not
        // an allocation that aborts the process.
        if index >= MAX_BLOCKS {
            return Err(ModelError::Protocol(format!(
                "content_block_start with index {index}: a reply holds at most {MAX_BLOCKS} \
                 content blocks"
            )));
        }
        if self.blocks.len() <= index {
            self.blocks.resize_with(index + 1, || None);
        }
        let state = match block {
            ContentBlock::ToolUse { id, name, .. } => {
                out.push(ModelEvent::ToolUseStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                });
                BlockState::OpenTool {
                    id,
                    name,
                    json: String::new(),
                }
            }
            ContentBlock::Text { ref text, .. } if !text.is_empty() => {
                out.push(ModelEvent::TextDelta {
                    index,
                    text: text.clone(),
                });
                BlockState::Open(block)
            }
            other => BlockState::Open(other),
        };
        self.blocks[index] = Some(state);
        Ok(())
    }

    fn apply_delta(
        &mut self,
        index: usize,
        delta: BlockDelta,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        let state = self.block(index)?;
        match (state, delta) {
            (
                BlockState::Open(ContentBlock::Text { text, .. }),
                BlockDelta::TextDelta { text: more },
            ) => {
                text.push_str(&more);
                out.push(ModelEvent::TextDelta { index, text: more });
            }
            (
                BlockState::Open(ContentBlock::Text { citations, .. }),
                BlockDelta::CitationsDelta { citation },
            ) => match citations.get_or_insert_with(|| serde_json::Value::Array(Vec::new())) {
                serde_json::Value::Array(list) => list.push(citation),
                other => *other = serde_json::Value::Array(vec![citation]),
            },
            (
                BlockState::Open(ContentBlock::Thinking { thinking, .. }),
                BlockDelta::ThinkingDelta { thinking: more },
            ) => {
                thinking.push_str(&more);
                out.push(ModelEvent::ThinkingDelta {
                    index,
                    thinking: more,
                });
            }
            (
                BlockState::Open(ContentBlock::Thinking { signature, .. }),
                BlockDelta::SignatureDelta { signature: more },
            ) => {
                signature.push_str(&more);
            }
            (BlockState::OpenTool { json, .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                json.push_str(&partial_json);
                out.push(ModelEvent::ToolInputDelta {
                    index,
                    partial_json,
                });
            }
            (state, delta) => {
                return Err(ModelError::Protocol(format!(
                    "content block {index}: a {} delta does not fit a {} block",
                    delta_name(&delta),
                    state_name(state)
                )))
            }
        }
        Ok(())
    }

    fn stop_block(&mut self, index: usize, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let state = self.block(index)?;
        let block = match std::mem::replace(state, BlockState::Done(ContentBlock::text(""))) {
            BlockState::Open(block) => block,
            BlockState::OpenTool { id, name, json } => {
                let parsed = if json.trim().is_empty() {
                    Ok(serde_json::Value::Object(Default::default()))
                } else {
                    serde_json::from_str(&json)
                };
                match parsed {
                    Ok(input) => ContentBlock::tool_use(id, name, input),
                    Err(e) => {
                        let invalid = ModelError::InvalidToolInput {
                            tool: name.clone(),
                            id: id.clone(),
                            message: format!("{e} in {}", preview(&json)),
                            stop_reason: None,
                            usage: Box::new(fleet_protocol::Usage::unreported()),
                        };
                        self.invalid_input.get_or_insert(invalid);
                        // Never shown: the reply ends in the error above.
                        *self.block(index)? =
                            BlockState::Done(ContentBlock::tool_use(id, name, json!({})));
                        return Ok(());
                    }
                }
            }
            BlockState::Done(_) => {
                return Err(ModelError::Protocol(format!(
                    "content block {index} was stopped twice"
                )));
            }
        };
        out.push(ModelEvent::BlockComplete {
            index,
            block: block.clone(),
        });
        *state = BlockState::Done(block);
        Ok(())
    }

    /// The pending invalid-input error, completed with how the reply ended and its usage.
    fn invalid_input(&mut self) -> Option<ModelError> {
        let mut error = self.invalid_input.take()?;
        if let ModelError::InvalidToolInput {
            stop_reason, usage, ..
        } = &mut error
        {
            if let Some(message) = &self.message {
                *stop_reason = message.stop_reason.clone();
                **usage = message.usage.clone();
            }
        }
        Some(error)
    }

    fn finish(&mut self) -> Result<AssistantMessage, ModelError> {
        if let Some(error) = self.invalid_input() {
            return Err(error);
        }
        let mut message = self.message.take().ok_or_else(|| {
            ModelError::Protocol("message_stop arrived before message_start".into())
        })?;
        for (index, state) in std::mem::take(&mut self.blocks).into_iter().enumerate() {
            match state {
                Some(BlockState::Done(block)) => message.content.push(block),
                Some(_) => {
                    return Err(ModelError::Protocol(format!(
                        "content block {index} was never stopped"
                    )))
                }
                None => {}
            }
        }
        Ok(message)
    }
}

impl WireDecoder for AnthropicDecoder {
    fn on_event(
        &mut self,
        event: SseEvent,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        let parsed: StreamEvent = match serde_json::from_str(&event.data) {
            Ok(parsed) => parsed,
            Err(e) => {
                let kind = event.event.clone().or_else(|| {
                    serde_json::from_str::<serde_json::Value>(&event.data)
                        .ok()
                        .and_then(|v| v.get("type")?.as_str().map(str::to_owned))
                });
                return match kind {
                    Some(kind) if !KNOWN_EVENTS.contains(&kind.as_str()) => Ok(None),
                    kind => Err(ModelError::Protocol(format!(
                        "cannot read a `{}` event: {e} in {}",
                        kind.as_deref().unwrap_or("unnamed"),
                        preview(&event.data)
                    ))),
                };
            }
        };
        match parsed {
            StreamEvent::MessageStart { mut message } => {
                message.content.clear();
                if self.report_start {
                    out.push(ModelEvent::MessageStart {
                        id: message.id.clone(),
                        model: message.model.clone(),
                        usage: message.usage.clone(),
                    });
                }
                self.message = Some(message);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block, out)?,
            StreamEvent::ContentBlockDelta { index, delta } => {
                self.apply_delta(index, delta, out)?
            }
            StreamEvent::ContentBlockStop { index } => self.stop_block(index, out)?,
            StreamEvent::MessageDelta { delta, usage } => {
                let message = self.message.as_mut().ok_or_else(|| {
                    ModelError::Protocol("message_delta arrived before message_start".into())
                })?;
                if delta.stop_reason.is_some() {
                    message.stop_reason = delta.stop_reason;
                }
                if delta.stop_sequence.is_some() {
                    message.stop_sequence = delta.stop_sequence;
                }
                message.usage.merge_delta(&usage);
            }
            StreamEvent::MessageStop => return self.finish().map(Some),
            StreamEvent::Ping => {}
            StreamEvent::Error { error } => return Err(stream_error(error)),
        }
        Ok(None)
    }

    /// A stream that ended without `message_stop` after a bad tool input still reports the
    /// input, with what is known of the reply's end.
    fn on_eof(
        &mut self,
        _out: &mut Vec<ModelEvent>,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        match self.invalid_input() {
            Some(error) => Err(error),
            None => Ok(None),
        }
    }

    fn on_whole_body(
        &mut self,
        body: &[u8],
        out: &mut Vec<ModelEvent>,
    ) -> Result<AssistantMessage, ModelError> {
        if let Ok(body) = serde_json::from_slice::<ApiErrorBody>(body) {
            return Err(stream_error(body.error));
        }
        let message: AssistantMessage = serde_json::from_slice(body).map_err(|e| {
            ModelError::Protocol(format!(
                "expected an event stream or a message, got JSON that is neither ({e}): {}",
                preview(&String::from_utf8_lossy(body))
            ))
        })?;
        for (index, block) in message.content.iter().enumerate() {
            match block {
                ContentBlock::Text { text, .. } => out.push(ModelEvent::TextDelta {
                    index,
                    text: text.clone(),
                }),
                ContentBlock::Thinking { thinking, .. } => out.push(ModelEvent::ThinkingDelta {
                    index,
                    thinking: thinking.clone(),
                }),
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => {
                    out.push(ModelEvent::ToolUseStart {
                        index,
                        id: id.clone(),
                        name: name.clone(),
                    });
                    out.push(ModelEvent::ToolInputDelta {
                        index,
                        partial_json: input.to_string(),
                    });
                }
                _ => {}
            }
            out.push(ModelEvent::BlockComplete {
                index,
                block: block.clone(),
            });
        }
        Ok(message)
    }
}

/// An error the API reported inside a successful response.
fn stream_error(error: ApiErrorDetail) -> ModelError {
    ModelError::StreamError {
        provider: PROVIDER,
        error_type: error.error_type,
        message: error.message,
    }
}

fn delta_name(delta: &BlockDelta) -> &'static str {
    match delta {
        BlockDelta::TextDelta { .. } => "text_delta",
        BlockDelta::InputJsonDelta { .. } => "input_json_delta",
        BlockDelta::ThinkingDelta { .. } => "thinking_delta",
        BlockDelta::SignatureDelta { .. } => "signature_delta",
        BlockDelta::CitationsDelta { .. } => "citations_delta",
    }
}

fn state_name(state: &BlockState) -> &'static str {
    match state {
        BlockState::Open(block) | BlockState::Done(block) => block.type_name(),
        BlockState::OpenTool { .. } => "tool_use",
    }
}

/// The first characters of a payload, for error messages that must stay one line.
pub(crate) fn preview(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("`{}…`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

#[cfg(test)]
mod tests;
