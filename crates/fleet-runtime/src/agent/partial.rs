//! The reply as the Messages API streamed it, for readers that replay the stream
//! (`--include-partial-messages`): every [`ModelEvent`] becomes the API event(s) it stands
//! for, with the block starts and stops, the tool-input fragments and the closing
//! `message_delta` / `message_stop` that the plain deltas leave out.
//!
//! Only agents whose config asks for it keep this state, so a session without partial
//! messages pays nothing for it. Both providers' decoders feed it; what a decoder does not
//! report (the OpenAI-compatible one has no `message_start`, nor text block starts) is
//! filled in here, so a reader always sees a whole sequence.

use fleet_model::ModelEvent;
use fleet_protocol::{
    AssistantMessage, BlockDelta, ContentBlock, MessageDeltaBody, Role, StreamEvent, Usage,
    UsageDelta,
};

/// What has been said of the reply being received.
#[derive(Debug, Default)]
pub(super) struct PartialStream {
    started: bool,
    /// The blocks started and not yet stopped, by stream index.
    open: Vec<usize>,
}

impl PartialStream {
    /// The API events `event` stands for, in order (often one, never many).
    pub(super) fn translate(&mut self, event: &ModelEvent, model: &str) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        match event {
            ModelEvent::Retry { .. } | ModelEvent::ModelSwitched { .. } => *self = Self::default(),
            ModelEvent::MessageStart { id, model, usage } => {
                self.started = true;
                out.push(message_start(id, model, usage.clone()));
            }
            ModelEvent::TextDelta { index, text } => {
                self.open_block(*index, ContentBlock::text(""), model, &mut out);
                out.push(delta(*index, BlockDelta::TextDelta { text: text.clone() }));
            }
            ModelEvent::ThinkingDelta { index, thinking } => {
                self.open_block(*index, empty_thinking(), model, &mut out);
                out.push(delta(
                    *index,
                    BlockDelta::ThinkingDelta {
                        thinking: thinking.clone(),
                    },
                ));
            }
            ModelEvent::ToolUseStart { index, id, name } => {
                let block = ContentBlock::tool_use(id, name, serde_json::json!({}));
                self.open_block(*index, block, model, &mut out);
            }
            ModelEvent::ToolInputDelta {
                index,
                partial_json,
            } => out.push(delta(
                *index,
                BlockDelta::InputJsonDelta {
                    partial_json: partial_json.clone(),
                },
            )),
            ModelEvent::BlockComplete { index, block } => {
                self.open_block(*index, opening(block), model, &mut out);
                if let ContentBlock::Thinking { signature, .. } = block {
                    if !signature.is_empty() {
                        out.push(delta(
                            *index,
                            BlockDelta::SignatureDelta {
                                signature: signature.clone(),
                            },
                        ));
                    }
                }
                self.open.retain(|open| open != index);
                out.push(StreamEvent::ContentBlockStop { index: *index });
            }
            ModelEvent::Completed(response) => {
                let reply = &response.message;
                self.start(&reply.id, &reply.model, &mut out);
                for index in std::mem::take(&mut self.open) {
                    out.push(StreamEvent::ContentBlockStop { index });
                }
                out.push(StreamEvent::MessageDelta {
                    delta: MessageDeltaBody {
                        stop_reason: reply.stop_reason.clone(),
                        stop_sequence: reply.stop_sequence.clone(),
                    },
                    usage: usage_delta(&reply.usage),
                });
                out.push(StreamEvent::MessageStop);
                *self = Self::default();
            }
        }
        out
    }

    /// `message_start` when no decoder said it (the id is not known yet).
    fn start(&mut self, id: &str, model: &str, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(message_start(id, model, Usage::default()));
        }
    }

    /// `content_block_start` for `index` the first time it is mentioned.
    fn open_block(
        &mut self,
        index: usize,
        block: ContentBlock,
        model: &str,
        out: &mut Vec<StreamEvent>,
    ) {
        self.start("", model, out);
        if !self.open.contains(&index) {
            self.open.push(index);
            out.push(StreamEvent::ContentBlockStart {
                index,
                content_block: block,
            });
        }
    }
}

fn message_start(id: &str, model: &str, usage: Usage) -> StreamEvent {
    StreamEvent::MessageStart {
        message: AssistantMessage {
            id: id.to_string(),
            kind: "message".into(),
            role: Role::Assistant,
            model: model.to_string(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage,
        },
    }
}

fn delta(index: usize, delta: BlockDelta) -> StreamEvent {
    StreamEvent::ContentBlockDelta { index, delta }
}

fn empty_thinking() -> ContentBlock {
    ContentBlock::Thinking {
        thinking: String::new(),
        signature: String::new(),
    }
}

/// How a block that arrived whole looks as it starts: empty where deltas would fill it.
fn opening(block: &ContentBlock) -> ContentBlock {
    match block {
        ContentBlock::Text { .. } => ContentBlock::text(""),
        ContentBlock::Thinking { .. } => empty_thinking(),
        ContentBlock::ToolUse { id, name, .. } => {
            ContentBlock::tool_use(id, name, serde_json::json!({}))
        }
        other => other.clone(),
    }
}

/// The reply's final usage as `message_delta` carries it.
fn usage_delta(usage: &Usage) -> UsageDelta {
    let mut delta = UsageDelta {
        input_tokens: Some(usage.input_tokens),
        output_tokens: Some(usage.output_tokens),
        ..UsageDelta::default()
    };
    delta.cache_creation_input_tokens = Some(usage.cache_creation());
    delta.cache_read_input_tokens = Some(usage.cache_read());
    delta
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fleet_model::ModelResponse;
    use fleet_protocol::StopReason;

    fn names(events: &[StreamEvent]) -> Vec<&'static str> {
        events.iter().map(StreamEvent::event_name).collect()
    }

    fn reply(content: Vec<ContentBlock>) -> ModelEvent {
        ModelEvent::Completed(ModelResponse {
            message: AssistantMessage {
                id: "msg_1".into(),
                kind: "message".into(),
                role: Role::Assistant,
                model: "m".into(),
                content,
                stop_reason: Some(StopReason::ToolUse),
                stop_sequence: None,
                usage: Usage {
                    input_tokens: 5,
                    output_tokens: 7,
                    ..Usage::default()
                },
            },
            request_id: None,
            attempts: 1,
            duration: std::time::Duration::ZERO,
        })
    }

    #[test]
    fn a_text_and_tool_reply_is_the_whole_api_sequence() {
        let tool = ContentBlock::tool_use("toolu_1", "Read", serde_json::json!({"a": 1}));
        let model = [
            ModelEvent::MessageStart {
                id: "msg_1".into(),
                model: "m".into(),
                usage: Usage::default(),
            },
            ModelEvent::TextDelta {
                index: 0,
                text: "Hi".into(),
            },
            ModelEvent::BlockComplete {
                index: 0,
                block: ContentBlock::text("Hi"),
            },
            ModelEvent::ToolUseStart {
                index: 1,
                id: "toolu_1".into(),
                name: "Read".into(),
            },
            ModelEvent::ToolInputDelta {
                index: 1,
                partial_json: "{\"a\":".into(),
            },
            ModelEvent::ToolInputDelta {
                index: 1,
                partial_json: "1}".into(),
            },
            ModelEvent::BlockComplete {
                index: 1,
                block: tool.clone(),
            },
            reply(vec![ContentBlock::text("Hi"), tool]),
        ];
        let mut partial = PartialStream::default();
        let events: Vec<StreamEvent> = model
            .iter()
            .flat_map(|e| partial.translate(e, "m"))
            .collect();
        assert_eq!(
            names(&events),
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let json = serde_json::to_value(&events[4]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "content_block_start", "index": 1, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}})
        );
        let json = serde_json::to_value(&events[5]).unwrap();
        assert_eq!(json["delta"]["type"], "input_json_delta");
        let json = serde_json::to_value(&events[8]).unwrap();
        assert_eq!(json["delta"]["stop_reason"], "tool_use");
        assert_eq!(json["usage"]["output_tokens"], 7);
    }

    #[test]
    fn missing_starts_are_filled_in_and_a_retry_starts_over() {
        let mut partial = PartialStream::default();
        let first = partial.translate(
            &ModelEvent::ThinkingDelta {
                index: 0,
                thinking: "hmm".into(),
            },
            "m",
        );
        assert_eq!(
            names(&first),
            [
                "message_start",
                "content_block_start",
                "content_block_delta"
            ]
        );
        partial.translate(
            &ModelEvent::Retry {
                attempt: 2,
                max_attempts: 3,
                delay: std::time::Duration::ZERO,
                reason: "x".into(),
                status: None,
            },
            "m",
        );
        let whole = partial.translate(
            &ModelEvent::BlockComplete {
                index: 0,
                block: ContentBlock::Thinking {
                    thinking: "hmm".into(),
                    signature: "sig".into(),
                },
            },
            "m",
        );
        assert_eq!(
            names(&whole),
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop"
            ]
        );
        let end = partial.translate(&reply(Vec::new()), "m");
        assert_eq!(names(&end), ["message_delta", "message_stop"]);
    }
}
