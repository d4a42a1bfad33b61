//! Partial-message mode in Claude Code's order: each content block's `assistant` line comes
//! right after the block's deltas, before its `content_block_stop`, and a `system/status`
//! (`requesting`) line comes before each request.
//!
//! The runtime reports a reply's blocks once the reply is complete, after all its stream
//! events. So the printer rebuilds each block from the stream (its start and deltas) and
//! prints it when the block stops; the runtime's own block events for those blocks are then
//! skipped. A block that cannot be rebuilt exactly (tool input that does not parse, a delta
//! kind this printer does not fold) is left to the runtime's event, printed when it comes.

use fleet_protocol::{AssistantMessage, BlockDelta, ContentBlock, StreamEvent, Usage};
use std::collections::{BTreeMap, HashMap};

/// One agent's reply being streamed.
#[derive(Debug)]
struct Reply {
    id: String,
    model: String,
    usage: Usage,
    /// Blocks started and not stopped yet, by index.
    open: BTreeMap<usize, Open>,
}

#[derive(Debug)]
struct Open {
    block: ContentBlock,
    /// A tool's input as streamed so far (fragments of one JSON text).
    input_json: String,
    /// A delta this printer does not fold arrived: leave the block to the runtime's event.
    unsure: bool,
}

/// A block rebuilt from the stream, to print as an `assistant` line now.
pub(super) struct Rebuilt {
    pub(super) message_id: String,
    pub(super) model: String,
    pub(super) usage: Usage,
    pub(super) block: ContentBlock,
}

/// The replies being streamed, per agent, and how many of each reply's blocks were already
/// printed from the stream.
#[derive(Debug, Default)]
pub(super) struct PartialBlocks {
    replies: HashMap<String, Reply>,
    /// Per agent: the reply and how many of its block events to skip.
    printed: HashMap<String, (String, usize)>,
}

impl PartialBlocks {
    /// Follows one stream event of `agent`'s; returns the block to print when one stops.
    pub(super) fn follow(&mut self, agent: &str, event: &StreamEvent) -> Option<Rebuilt> {
        match event {
            StreamEvent::MessageStart { message } => {
                self.start(agent, message);
                None
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let reply = self.replies.get_mut(agent)?;
                reply.open.insert(
                    *index,
                    Open {
                        block: content_block.clone(),
                        input_json: String::new(),
                        unsure: false,
                    },
                );
                None
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let open = self.replies.get_mut(agent)?.open.get_mut(index)?;
                fold(open, delta);
                None
            }
            StreamEvent::ContentBlockStop { index } => self.stop(agent, *index),
            _ => None,
        }
    }

    fn start(&mut self, agent: &str, message: &AssistantMessage) {
        self.replies.insert(
            agent.to_string(),
            Reply {
                id: message.id.clone(),
                model: message.model.clone(),
                usage: message.usage.clone(),
                open: BTreeMap::new(),
            },
        );
        self.printed
            .insert(agent.to_string(), (message.id.clone(), 0));
    }

    fn stop(&mut self, agent: &str, index: usize) -> Option<Rebuilt> {
        let reply = self.replies.get_mut(agent)?;
        let mut open = reply.open.remove(&index)?;
        if open.unsure {
            return None;
        }
        if let ContentBlock::ToolUse { input, .. } = &mut open.block {
            let text = open.input_json.trim();
            *input = match text {
                "" => serde_json::Value::Object(Default::default()),
                _ => serde_json::from_str(text).ok()?,
            };
        }
        let rebuilt = Rebuilt {
            message_id: reply.id.clone(),
            model: reply.model.clone(),
            usage: reply.usage.clone(),
            block: open.block,
        };
        match self.printed.get_mut(agent) {
            Some((id, count)) if *id == rebuilt.message_id => *count += 1,
            _ => {
                self.printed
                    .insert(agent.to_string(), (rebuilt.message_id.clone(), 1));
            }
        }
        Some(rebuilt)
    }

    /// Whether the runtime's event for the next block of `message_id` was already printed
    /// from the stream (and so is to be skipped); counts it off.
    pub(super) fn already_printed(&mut self, agent: &str, message_id: &str) -> bool {
        match self.printed.get_mut(agent) {
            Some((id, count)) if id == message_id && *count > 0 => {
                *count -= 1;
                true
            }
            _ => false,
        }
    }

    /// The reply in progress was thrown away (a retried turn): forget it.
    pub(super) fn discard(&mut self, agent: &str) {
        self.replies.remove(agent);
        self.printed.remove(agent);
    }
}

fn fold(open: &mut Open, delta: &BlockDelta) {
    match (&mut open.block, delta) {
        (ContentBlock::Text { text, .. }, BlockDelta::TextDelta { text: more }) => {
            text.push_str(more)
        }
        (ContentBlock::Thinking { thinking, .. }, BlockDelta::ThinkingDelta { thinking: more }) => {
            thinking.push_str(more)
        }
        (ContentBlock::Thinking { signature, .. }, BlockDelta::SignatureDelta { signature: s }) => {
            signature.push_str(s)
        }
        (ContentBlock::ToolUse { .. }, BlockDelta::InputJsonDelta { partial_json }) => {
            open.input_json.push_str(partial_json)
        }
        _ => open.unsure = true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn start(id: &str) -> StreamEvent {
        StreamEvent::MessageStart {
            message: AssistantMessage::empty(id, "m"),
        }
    }

    #[test]
    fn a_block_is_rebuilt_when_it_stops_and_its_event_skipped_once() {
        let mut p = PartialBlocks::default();
        assert!(p.follow("a", &start("msg_1")).is_none());
        p.follow(
            "a",
            &StreamEvent::ContentBlockStart {
                index: 0,
                content_block: ContentBlock::ToolUse {
                    id: "t".into(),
                    name: "Read".into(),
                    input: json!({}),
                    cache_control: None,
                },
            },
        );
        for part in ["{\"file_", "path\":\"/x\"}"] {
            p.follow(
                "a",
                &StreamEvent::ContentBlockDelta {
                    index: 0,
                    delta: BlockDelta::InputJsonDelta {
                        partial_json: part.into(),
                    },
                },
            );
        }
        let rebuilt = p
            .follow("a", &StreamEvent::ContentBlockStop { index: 0 })
            .unwrap();
        match rebuilt.block {
            ContentBlock::ToolUse { input, .. } => assert_eq!(input, json!({"file_path": "/x"})),
            other => panic!("{other:?}"),
        }
        assert!(p.already_printed("a", "msg_1"));
        assert!(!p.already_printed("a", "msg_1"), "only once");
        assert!(!p.already_printed("b", "msg_1"), "per agent");
    }

    #[test]
    fn tool_input_that_does_not_parse_is_left_to_the_runtime() {
        let mut p = PartialBlocks::default();
        p.follow("a", &start("msg_1"));
        p.follow(
            "a",
            &StreamEvent::ContentBlockStart {
                index: 0,
                content_block: ContentBlock::ToolUse {
                    id: "t".into(),
                    name: "Read".into(),
                    input: json!({}),
                    cache_control: None,
                },
            },
        );
        p.follow(
            "a",
            &StreamEvent::ContentBlockDelta {
                index: 0,
                delta: BlockDelta::InputJsonDelta {
                    partial_json: "{\"broken".into(),
                },
            },
        );
        assert!(p
            .follow("a", &StreamEvent::ContentBlockStop { index: 0 })
            .is_none());
        assert!(!p.already_printed("a", "msg_1"));
    }
}
