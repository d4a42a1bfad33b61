//! Making a replayed conversation acceptable to the Messages API after a crash.
//!
//! The API requires every `tool_use` to be answered by a `tool_result` in the user turn that
//! follows it, and every `tool_result` to answer a `tool_use` of the assistant turn just before.
//! A crash while a tool ran leaves a call unanswered; a corrupt line that was skipped can leave
//! a result without its call. Either would make every later request of the resumed session
//! fail, so the conversation is repaired when it is read (the file itself is left as written).

use std::collections::HashSet;

use fleet_protocol::{ContentBlock, Message, MessageContent, Role};

/// What the model is told about a call whose result was never recorded.
pub const INTERRUPTED_TOOL_RESULT: &str = "The session was interrupted before this tool finished, \
so its result is unknown. Check the current state before relying on it or running it again.";

/// Answers dangling `tool_use` blocks with error results and drops `tool_result` blocks that
/// answer nothing. A synthetic answer is its own user message, placed right after the results
/// that did arrive; the API merges consecutive user turns, so the results still come first.
pub(crate) fn repair(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    // Calls of the latest assistant turn still waiting for a result, in call order.
    let mut pending: Vec<String> = Vec::new();
    for mut message in messages {
        match message.role {
            Role::Assistant => {
                answer_interrupted(&mut pending, &mut out);
                pending = message.tool_uses().map(|t| t.id.to_owned()).collect();
                out.push(message);
            }
            Role::User => {
                if let MessageContent::Blocks(blocks) = &mut message.content {
                    let before = blocks.len();
                    blocks.retain(|b| keep_result(b, &mut pending));
                    if blocks.is_empty() && before > 0 {
                        continue;
                    }
                }
                if has_non_result(&message) {
                    answer_interrupted(&mut pending, &mut out);
                }
                out.push(message);
            }
        }
    }
    answer_interrupted(&mut pending, &mut out);
    out
}

/// Keeps non-result blocks, and results that answer a pending call (each call once).
fn keep_result(block: &ContentBlock, pending: &mut Vec<String>) -> bool {
    let ContentBlock::ToolResult { tool_use_id, .. } = block else {
        return true;
    };
    match pending.iter().position(|id| id == tool_use_id) {
        Some(i) => {
            pending.remove(i);
            true
        }
        None => false,
    }
}

/// Whether the message says something besides tool results, i.e. the tool round is over.
fn has_non_result(message: &Message) -> bool {
    match &message.content {
        MessageContent::Text(_) => true,
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .any(|b| !matches!(b, ContentBlock::ToolResult { .. })),
    }
}

/// Closes the tool round: every call still pending gets an error result, in call order.
fn answer_interrupted(pending: &mut Vec<String>, out: &mut Vec<Message>) {
    if pending.is_empty() {
        return;
    }
    let mut seen = HashSet::new();
    let results = pending
        .drain(..)
        .filter(|id| seen.insert(id.clone()))
        .map(|id| ContentBlock::tool_result(id, INTERRUPTED_TOOL_RESULT, true))
        .collect();
    out.push(Message::with_blocks(Role::User, results));
}
