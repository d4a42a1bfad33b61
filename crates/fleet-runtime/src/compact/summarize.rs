//! The summarisation request and the conversation that comes out of it.
//!
//! The request is the agent's own request with one more instruction at the end: the same
//! model, system prompt and tools, byte for byte, so the prompt cache that holds them serves
//! the summary request and every request after it. Only the messages differ.

use super::clear::clear_all_results;
use super::prompt::{compaction_request, omitted_note, summary_message};
use super::window::{estimate_messages, estimate_tokens, Window};
use super::CompactError;
use fleet_model::{ModelClient, ModelRequest, ModelResponse};
use fleet_protocol::{ContentBlock, Message, MessageContent, MessagesRequest, Role};
use tokio_util::sync::CancellationToken;

/// Attempts at the summary request when the API finds even it too long; each keeps half as
/// much of the conversation, the last one with every tool result emptied.
const SUMMARY_ATTEMPTS: u32 = 3;

/// Where a suffix of `messages` that fits `budget` tokens can start: the earliest start that
/// fits, else the latest start there is. A start is a message the API accepts first in a
/// conversation continued after a summary: an assistant message, or a user message that
/// answers no tool call. `None` when no message after the first is a start.
pub fn suffix_start(messages: &[Message], budget: u64) -> Option<usize> {
    let mut size = 0u64;
    let mut fitting = None;
    let mut latest = None;
    for index in (1..messages.len()).rev() {
        size += estimate_tokens(&messages[index]);
        if !can_start(&messages[index]) {
            continue;
        }
        latest.get_or_insert(index);
        if size <= budget {
            fitting = Some(index);
        }
    }
    fitting.or(latest)
}

fn can_start(message: &Message) -> bool {
    match message.role {
        Role::Assistant => true,
        Role::User => !message
            .blocks()
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. })),
    }
}

/// Asks the model for a summary of `messages`, leaving out the oldest turns when the whole
/// conversation would not fit in the window.
pub async fn request_summary(
    client: &dyn ModelClient,
    frame: &MessagesRequest,
    window: Window,
    messages: &[Message],
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<ModelResponse, CompactError> {
    let instruction = compaction_request(focus);
    let mut budget = window
        .threshold
        .saturating_sub(estimate_tokens(frame) + estimate_tokens(&instruction));
    let mut attempt = 1;
    loop {
        let mut body = frame.clone();
        body.messages =
            summary_messages(messages, budget, &instruction, attempt == SUMMARY_ATTEMPTS).into();
        let reply = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CompactError::Interrupted),
            reply = client.complete(ModelRequest::from(body)) => reply,
        };
        match reply {
            Ok(response) => return Ok(response),
            Err(err) if err.is_prompt_too_long() && attempt < SUMMARY_ATTEMPTS => {
                attempt += 1;
                budget /= 2;
            }
            Err(err) => return Err(CompactError::Model(err)),
        }
    }
}

/// The messages of a summary request: as much of the conversation as fits `budget`, then
/// the instruction, added to the last user message so the roles still alternate.
fn summary_messages(
    messages: &[Message],
    budget: u64,
    instruction: &str,
    clear_results: bool,
) -> Vec<Message> {
    let start = if estimate_messages(messages) <= budget {
        0
    } else {
        suffix_start(messages, budget).unwrap_or(0)
    };
    let mut out = Vec::with_capacity(messages.len() - start + 2);
    if start > 0 {
        out.push(Message::user_text(omitted_note(start)));
    }
    out.extend_from_slice(&messages[start..]);
    if clear_results {
        clear_all_results(&mut out);
    }
    let ask = ContentBlock::text(instruction);
    match out.last_mut() {
        Some(last) if last.role == Role::User => {
            let mut blocks = last.blocks();
            blocks.push(ask);
            last.content = MessageContent::Blocks(blocks);
        }
        _ => out.push(Message::with_blocks(Role::User, vec![ask])),
    }
    out
}

/// The conversation after a compaction: the summary, then the turns from `start` on.
pub fn compacted(summary: &str, messages: &[Message], start: usize) -> Vec<Message> {
    let mut next = Vec::with_capacity(messages.len() - start + 1);
    next.push(Message::user_text(summary_message(summary)));
    next.extend_from_slice(&messages[start..]);
    next
}

/// The summary's text: the reply's text blocks (a model that calls a tool anyway has its
/// calls ignored), or `None` when it wrote nothing.
pub fn summary_text(response: &ModelResponse) -> Option<String> {
    let text = response.message.text();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn conversation() -> Vec<Message> {
        let mut messages = vec![Message::user_text("start")];
        for id in ["a", "b", "c"] {
            messages.push(Message::with_blocks(
                Role::Assistant,
                vec![ContentBlock::tool_use(id, "Read", json!({}))],
            ));
            messages.push(Message::with_blocks(
                Role::User,
                vec![ContentBlock::tool_result(id, "z".repeat(400), false)],
            ));
        }
        messages
    }

    #[test]
    fn a_kept_tail_never_starts_with_an_orphaned_tool_result() {
        let messages = conversation();
        // Room for about one turn: the tail starts at the last call, not its result.
        assert_eq!(suffix_start(&messages, 150), Some(5));
        // Room for everything after the prompt.
        assert_eq!(suffix_start(&messages, 10_000), Some(1));
        // No room at all: still the smallest valid tail.
        assert_eq!(suffix_start(&messages, 0), Some(5));
        assert_eq!(suffix_start(&messages[..1], 10_000), None);
    }

    #[test]
    fn the_instruction_joins_the_last_user_message_and_omissions_are_said() {
        let messages = conversation();
        let all = summary_messages(&messages, 10_000, "SUMMARISE", false);
        assert_eq!(all.len(), messages.len());
        assert!(all.last().unwrap().text().contains("SUMMARISE"));
        let short = summary_messages(&messages, 150, "SUMMARISE", false);
        assert!(short[0].text().contains("first 5 messages"));
        assert_eq!(short.len(), 3);
    }
}
