//! Forks: children that carry on their parent's own conversation.
//!
//! A fork is sent the parent's system prompt, its exact tool array and model, and the parent's
//! messages up to and including the reply that made the Agent call. Every tool call of that
//! reply is answered with the same placeholder, and one text block holds the fork instruction
//! and the child's directive. So a fork's first request begins with exactly the parent's
//! previous request (already in the prompt cache), and sibling forks of one reply send
//! requests that are byte-identical up to their directives — the last placeholder carries a
//! cache breakpoint, so the second sibling on reads everything before its directive from the
//! cache the first one wrote.

use fleet_protocol::{
    CacheControl, ContentBlock, Message, MessageContent, Role, ThinkingConfig, ToolDefinition,
};
use std::sync::{Arc, Mutex};

/// The `subagent_type` that asks for a fork (and the agent type forks run as).
pub const FORK_TYPE: &str = "fork";

/// Opens the instruction every fork reads; how a conversation is recognised as a fork's.
pub const FORK_TAG: &str = "<fork-boilerplate>";

/// The result every forked call of the parent's reply gets in a fork's copy: the same text for
/// all of them and in every sibling, or the siblings' requests would differ before their
/// directives.
pub const PLACEHOLDER_RESULT: &str =
    "(This call belongs to the agent you were forked from; its result goes to that agent.)";

/// A fork runs up to this many turns (it inherits no definition to say otherwise).
pub const FORK_MAX_TURNS: u32 = 200;

/// The part of an agent's requests that stays the same from turn to turn. A fork sends it
/// unchanged; it is kept after the fork ends so a resumed fork sends it again.
#[derive(Debug)]
pub struct ForkBase {
    pub model: String,
    pub max_tokens: u32,
    pub system: Vec<String>,
    pub tools: Arc<Vec<ToolDefinition>>,
    pub thinking: Option<ThinkingConfig>,
}

/// An agent's conversation at the moment one of its replies asks for tools.
#[derive(Debug)]
pub struct ForkPoint {
    pub base: Arc<ForkBase>,
    /// Everything the agent had sent, then the reply making the calls.
    pub messages: fleet_protocol::Shared<Message>,
}

/// Where an agent leaves its latest [`ForkPoint`] for the Agent tool it holds to read.
#[derive(Debug, Default)]
pub struct ForkSource {
    latest: Mutex<Option<Arc<ForkPoint>>>,
}

impl ForkSource {
    pub fn publish(&self, point: ForkPoint) {
        *self.lock() = Some(Arc::new(point));
    }

    /// Drops the copy once the agent's run is over: agents it started keep its view alive,
    /// and a whole conversation should not stay in memory with it.
    pub fn clear(&self) {
        *self.lock() = None;
    }

    pub fn latest(&self) -> Option<Arc<ForkPoint>> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<ForkPoint>>> {
        self.latest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The conversation a fork starts with: its parent's, ending with the reply that forked it.
/// The block where the parent's previous request ended carries a cache breakpoint, so the fork
/// reads that request from the cache however many calls the reply made (the API looks back
/// only 20 blocks from a breakpoint, and a reply forking many children puts two blocks per
/// fork between the parent's last breakpoint and the fork's first).
pub fn fork_history(parent_messages: &[Message]) -> Vec<Message> {
    let mut history = parent_messages.to_vec();
    let before_reply = history.len().checked_sub(2);
    if let Some(message) = before_reply.and_then(|i| history.get_mut(i)) {
        let mut blocks = message.blocks();
        if let Some(slot) = blocks
            .iter_mut()
            .rev()
            .find_map(ContentBlock::cache_control_mut)
        {
            *slot = Some(CacheControl::ephemeral());
            message.content = MessageContent::Blocks(blocks);
        }
    }
    history
}

/// The fork's first user turn: a placeholder result for every tool call of the parent's last
/// reply (the last one marked as a cache breakpoint), then the instruction and `directive`.
pub fn fork_prompt(parent_messages: &[Message], directive: &str) -> Message {
    let mut blocks: Vec<ContentBlock> = parent_messages
        .last()
        .filter(|m| m.role == Role::Assistant)
        .map(|reply| {
            reply
                .tool_uses()
                .map(|call| ContentBlock::tool_result(call.id, PLACEHOLDER_RESULT, false))
                .collect()
        })
        .unwrap_or_default();
    if let Some(slot) = blocks.last_mut().and_then(ContentBlock::cache_control_mut) {
        *slot = Some(CacheControl::ephemeral());
    }
    blocks.push(ContentBlock::text(instruction(directive)));
    Message::with_blocks(Role::User, blocks)
}

/// The instruction and directive, in one text block.
pub fn instruction(directive: &str) -> String {
    format!(
        "{FORK_TAG}\nYou are a fork: a background copy of the agent whose conversation is \
         above, started to carry out the directive below. The tool calls in the last assistant \
         message belong to that agent; do not wait for them or repeat them.\n\
         - Do the directive and nothing else, directly with your tools. You cannot fork again.\n\
         - Do not ask questions; decide sensibly and say what you assumed.\n\
         - End with one message that stands on its own: what you did or found, with file \
         paths and key lines. The agent that forked you receives only that message.\n\
         </fork-boilerplate>\n\nDirective: {directive}"
    )
}

/// Whether `messages` are a fork's: a user turn carries the fork instruction. The fallback
/// for when how the agent was started is not known.
pub fn is_fork_conversation(messages: &[Message]) -> bool {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .any(|m| match &m.content {
            MessageContent::Text(text) => text.contains(FORK_TAG),
            MessageContent::Blocks(blocks) => blocks
                .iter()
                .any(|b| matches!(b, ContentBlock::Text { text, .. } if text.contains(FORK_TAG))),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parent() -> Vec<Message> {
        vec![
            Message::user_text("refactor auth"),
            Message::with_blocks(
                Role::Assistant,
                vec![
                    ContentBlock::text("forking"),
                    ContentBlock::tool_use("t1", "Agent", json!({"prompt": "a"})),
                    ContentBlock::tool_use("t2", "Agent", json!({"prompt": "b"})),
                ],
            ),
        ]
    }

    #[test]
    fn every_call_gets_the_same_placeholder_and_the_last_is_a_breakpoint() {
        let prompt = fork_prompt(&parent(), "look at tokens");
        let blocks = prompt.blocks();
        assert_eq!(blocks.len(), 3);
        for (block, id) in blocks.iter().zip(["t1", "t2"]) {
            let ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } = block
            else {
                panic!("expected a tool result, got {block:?}");
            };
            assert_eq!(tool_use_id, id);
            assert_eq!(
                serde_json::to_value(content).expect("serialises"),
                json!(PLACEHOLDER_RESULT)
            );
        }
        assert!(blocks[0].cache_control().is_none());
        assert!(blocks[1].cache_control().is_some());
        assert!(matches!(&blocks[2], ContentBlock::Text { text, .. }
            if text.starts_with(FORK_TAG) && text.ends_with("Directive: look at tokens")));
    }

    #[test]
    fn siblings_differ_only_in_the_directive() {
        let a = serde_json::to_string(&fork_prompt(&parent(), "AAA")).expect("serialises");
        let b = serde_json::to_string(&fork_prompt(&parent(), "BBB")).expect("serialises");
        let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        assert_eq!(&a[common..common + 3], "AAA");
        assert_eq!(&a[common + 3..], &b[common + 3..]);
    }

    #[test]
    fn the_history_marks_where_the_parents_request_ended() {
        let history = fork_history(&parent());
        assert_eq!(history.len(), 2);
        assert_eq!(
            serde_json::to_value(&history[0]).expect("serialises"),
            json!({"role": "user", "content": [
                {"type": "text", "text": "refactor auth", "cache_control": {"type": "ephemeral"}}
            ]})
        );
        assert_eq!(history[1], parent()[1], "the reply itself is unchanged");
    }

    #[test]
    fn a_fork_conversation_is_recognised_by_its_instruction() {
        let mut messages = parent();
        assert!(!is_fork_conversation(&messages));
        messages.push(fork_prompt(&parent(), "x"));
        assert!(is_fork_conversation(&messages));
    }
}
