//! The cheap way to make room: emptying old tool results.
//!
//! A file read forty turns ago is usually the biggest and least useful thing in a long
//! conversation. Its `tool_result` block stays where it is (the API insists every `tool_use`
//! is answered), but its content becomes a one-line placeholder that says what was there and
//! how to get it back. The most recent results are kept, the ones the model has not answered
//! yet always.

use super::window::estimate_tokens;
use fleet_protocol::{ContentBlock, Message, MessageContent, Role, ToolResultContent};
use std::collections::HashMap;

/// How every placeholder starts, so a result is never cleared twice.
pub const CLEARED_PREFIX: &str = "[Tool result cleared to save context";

/// What one clearing pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    pub results: usize,
    /// Tokens the cleared contents held, estimated.
    pub tokens: u64,
}

/// Clears every tool result older than the most recent `keep_tokens` worth of them. The
/// results of the last message (not yet seen by the model) are kept besides that budget.
/// Returns what it cleared.
pub fn clear_old_results(messages: &mut [Message], keep_tokens: u64) -> Cleared {
    let names = tool_names(messages);
    let mut kept = 0u64;
    let mut cleared = Cleared::default();
    let last = messages.len().saturating_sub(1);
    for (index, message) in messages.iter_mut().enumerate().rev() {
        if message.role != Role::User {
            continue;
        }
        let MessageContent::Blocks(blocks) = &mut message.content else {
            continue;
        };
        for block in blocks.iter_mut().rev() {
            let Some(size) = live_result_size(block) else {
                continue;
            };
            if index == last {
                continue;
            }
            if kept + size <= keep_tokens {
                kept += size;
                continue;
            }
            if clear(block, &names) {
                cleared.results += 1;
                cleared.tokens += size;
            }
        }
    }
    cleared
}

/// Clears every tool result in `messages`, the last message's included: what a compaction
/// does to the turns it keeps when they alone would not fit.
pub fn clear_all_results(messages: &mut [Message]) -> Cleared {
    let names = tool_names(messages);
    let mut cleared = Cleared::default();
    for message in messages.iter_mut() {
        let MessageContent::Blocks(blocks) = &mut message.content else {
            continue;
        };
        for block in blocks.iter_mut() {
            if let Some(size) = live_result_size(block) {
                if clear(block, &names) {
                    cleared.results += 1;
                    cleared.tokens += size;
                }
            }
        }
    }
    cleared
}

/// The estimated size of a tool result that has not been cleared yet.
fn live_result_size(block: &ContentBlock) -> Option<u64> {
    let ContentBlock::ToolResult { content, .. } = block else {
        return None;
    };
    let content = content.as_ref()?;
    if let ToolResultContent::Text(text) = content {
        if text.starts_with(CLEARED_PREFIX) {
            return None;
        }
    }
    Some(estimate_tokens(content))
}

/// Replaces a result's content with its placeholder; false when there was nothing to clear.
fn clear(block: &mut ContentBlock, names: &HashMap<String, String>) -> bool {
    let ContentBlock::ToolResult {
        tool_use_id,
        content,
        ..
    } = block
    else {
        return false;
    };
    let Some(old) = content.take() else {
        return false;
    };
    let chars = match &old {
        ToolResultContent::Text(text) => text.chars().count(),
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text, .. } => text.chars().count(),
                _ => 0,
            })
            .sum(),
    };
    let tool = names
        .get(tool_use_id.as_str())
        .map_or("the tool", String::as_str);
    *content = Some(ToolResultContent::Text(format!(
        "{CLEARED_PREFIX}: {chars} characters of {tool} output. Call the tool again if you need it.]"
    )));
    true
}

/// Which tool each call id belongs to, for the placeholders.
fn tool_names(messages: &[Message]) -> HashMap<String, String> {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(Message::tool_uses)
        .map(|call| (call.id.to_string(), call.name.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn turn(id: &str, output: &str) -> [Message; 2] {
        [
            Message::with_blocks(
                Role::Assistant,
                vec![ContentBlock::tool_use(id, "Read", json!({}))],
            ),
            Message::with_blocks(
                Role::User,
                vec![ContentBlock::tool_result(id, output, false)],
            ),
        ]
    }

    fn result_text(message: &Message) -> String {
        match &message.blocks()[0] {
            ContentBlock::ToolResult {
                content: Some(ToolResultContent::Text(text)),
                ..
            } => text.clone(),
            other => panic!("not a text result: {other:?}"),
        }
    }

    #[test]
    fn old_results_become_placeholders_and_the_latest_stay() {
        let mut messages = vec![Message::user_text("go")];
        for (id, size) in [("a", 4_000), ("b", 4_000), ("c", 400), ("d", 4_000)] {
            messages.extend(turn(id, &"x".repeat(size)));
        }
        // Room for one big result besides the last one: c and d stay, a and b go.
        let cleared = clear_old_results(&mut messages, 1_100);
        assert_eq!(cleared.results, 2);
        assert!(cleared.tokens >= 2_000);
        assert!(result_text(&messages[2]).starts_with(CLEARED_PREFIX));
        assert!(result_text(&messages[2]).contains("4000 characters of Read output"));
        assert!(result_text(&messages[4]).starts_with(CLEARED_PREFIX));
        assert_eq!(result_text(&messages[6]).len(), 400);
        assert_eq!(
            result_text(&messages[8]).len(),
            4_000,
            "the unanswered result stays"
        );
        // The pairing is untouched, and a second pass finds nothing more to clear.
        assert_eq!(clear_old_results(&mut messages, 1_100), Cleared::default());
    }

    #[test]
    fn clearing_everything_includes_the_last_result() {
        let mut messages = turn("a", &"y".repeat(1_000)).to_vec();
        assert_eq!(clear_all_results(&mut messages).results, 1);
        assert!(result_text(&messages[1]).starts_with(CLEARED_PREFIX));
    }
}
