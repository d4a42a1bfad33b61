//! Where to put prompt-cache breakpoints.
//!
//! The API caches the request prefix (tools, then system, then messages) up to each block
//! marked with `cache_control`, and allows four marks per request. Marking the last message,
//! the last system block and the last tool means the next turn of the same conversation — which
//! only appends messages — finds everything before its new tail already cached.

use fleet_protocol::{
    CacheControl, ContentBlock, Message, MessageContent, MessagesRequest, SystemBlock, SystemPrompt,
};

/// The API's limit on `cache_control` marks in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Where a request's breakpoints go, without changing it: the request shares its
/// conversation and tools with the agent (see [`fleet_protocol::Shared`]), so marking them in
/// place would copy every message and tool to change one block.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Marked {
    /// Mark the last message (see [`marked_message`]). Only a flag: the last message is
    /// often a large tool result, so its marked copy is made just while it is written.
    pub last_message: bool,
    /// The system prompt as blocks, the last one marked.
    pub system: Option<SystemPrompt>,
    /// Mark the last tool. Only a flag, like `last_message`: a request waiting for its
    /// turn to be sent would otherwise hold a copy of the tool's schema, and a fan-out of
    /// thousands holds thousands of waiting requests.
    pub last_tool: bool,
}

/// Where breakpoints go: on the last message, the last system block and the last tool, in
/// that order of importance, without going over the API's limit when the caller placed marks
/// of its own (a fork's copy of its parent's conversation carries two). The conversation's
/// tail is the mark that saves the most, and a marked system block already covers the tools
/// before it, so the tool mark is the one left out when slots run short.
pub fn breakpoints(request: &MessagesRequest) -> Marked {
    let mut budget = MAX_BREAKPOINTS.saturating_sub(count_breakpoints(request));
    let mut marked = Marked::default();
    if request.messages.last().is_some_and(markable) && budget > 0 {
        marked.last_message = true;
        budget -= 1;
    }
    let mut mark = |slot: &mut Option<CacheControl>| {
        let marked = slot.is_none() && budget > 0;
        if marked {
            *slot = Some(CacheControl::ephemeral());
            budget -= 1;
        }
        marked
    };
    // An empty text prompt is left alone: the API rejects an empty text block.
    let system_blocks = match &request.system {
        Some(SystemPrompt::Text(text)) if !text.is_empty() => Some(vec![SystemBlock::text(text)]),
        Some(SystemPrompt::Blocks(blocks)) => Some(blocks.clone()),
        _ => None,
    };
    if let Some(mut blocks) = system_blocks {
        if blocks
            .last_mut()
            .is_some_and(|last| mark(&mut last.cache_control))
        {
            marked.system = Some(SystemPrompt::Blocks(blocks));
        }
    }
    if let Some(last) = request.tools.last() {
        let mut slot = last.cache_control.clone();
        marked.last_tool = mark(&mut slot);
    }
    marked
}

/// Whether a message's last cacheable block is still unmarked (a non-empty string content
/// counts: it becomes a text block).
fn markable(message: &Message) -> bool {
    match &message.content {
        MessageContent::Text(text) => !text.is_empty(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .rev()
            .find_map(|block| block.cache_control_slot())
            .is_some_and(|slot| slot.is_none()),
    }
}

/// A copy of `message` with its last cacheable block marked (for a message [`Marked`] says
/// to mark).
pub fn marked_message(message: &Message) -> Message {
    let mut message = message.clone();
    if let MessageContent::Text(text) = &mut message.content {
        message.content = MessageContent::Blocks(vec![ContentBlock::text(std::mem::take(text))]);
    }
    if let MessageContent::Blocks(blocks) = &mut message.content {
        if let Some(slot) = blocks
            .iter_mut()
            .rev()
            .find_map(ContentBlock::cache_control_mut)
        {
            *slot = Some(CacheControl::ephemeral());
        }
    }
    message
}

/// [`breakpoints`], written into the request (which copies its shared lists if they are
/// shared).
pub fn apply_breakpoints(request: &mut MessagesRequest) {
    let marked = breakpoints(request);
    if marked.last_message {
        if let Some(last) = request.messages.last_mut() {
            *last = marked_message(last);
        }
    }
    if let Some(system) = marked.system {
        request.system = Some(system);
    }
    if marked.last_tool {
        if let Some(tool) = request.tools.last_mut() {
            tool.cache_control = Some(CacheControl::ephemeral());
        }
    }
}

/// Marks already present anywhere in the request.
pub fn count_breakpoints(request: &MessagesRequest) -> usize {
    let tools = request
        .tools
        .iter()
        .filter(|t| t.cache_control.is_some())
        .count();
    let system = match &request.system {
        Some(SystemPrompt::Blocks(blocks)) => {
            blocks.iter().filter(|b| b.cache_control.is_some()).count()
        }
        _ => 0,
    };
    let messages: usize = request
        .messages
        .iter()
        .map(|m| match &m.content {
            MessageContent::Blocks(blocks) => blocks
                .iter()
                .filter(|b| b.cache_control().is_some())
                .count(),
            MessageContent::Text(_) => 0,
        })
        .sum();
    tools + system + messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_protocol::{Role, ToolDefinition};
    use serde_json::json;

    fn request() -> MessagesRequest {
        let mut r = MessagesRequest::new(
            "m",
            100,
            vec![
                Message::user_text("first"),
                Message::with_blocks(Role::Assistant, vec![ContentBlock::text("ok")]),
                Message::with_blocks(
                    Role::User,
                    vec![
                        ContentBlock::tool_result("t1", "out", false),
                        ContentBlock::text("and?"),
                    ],
                ),
            ],
        );
        r.system = Some(SystemPrompt::Text("be brief".into()));
        r.tools = ["Read", "Bash"]
            .iter()
            .map(|n| ToolDefinition {
                name: (*n).into(),
                description: None,
                input_schema: json!({"type":"object"}),
                cache_control: None,
            })
            .collect();
        r
    }

    #[test]
    fn marks_last_tool_system_and_message() {
        let mut r = request();
        apply_breakpoints(&mut r);
        assert_eq!(count_breakpoints(&r), 3);
        assert!(r.tools[1].cache_control.is_some() && r.tools[0].cache_control.is_none());
        let Some(SystemPrompt::Blocks(system)) = &r.system else {
            panic!("system should become blocks")
        };
        assert!(system[0].cache_control.is_some());
        let wire = serde_json::to_value(&r.messages[2]).expect("serialises");
        assert_eq!(
            wire["content"][1]["cache_control"],
            json!({"type":"ephemeral"})
        );
        assert!(wire["content"][0].get("cache_control").is_none());
        assert_eq!(
            serde_json::to_value(&r.messages[0]).expect("serialises")["content"],
            json!("first")
        );
    }

    #[test]
    fn never_exceeds_four_marks() {
        let mut r = request();
        for m in &mut r.messages[..2] {
            let mut blocks = m.blocks();
            for b in &mut blocks {
                if let Some(slot) = b.cache_control_mut() {
                    *slot = Some(CacheControl::ephemeral());
                }
            }
            m.content = MessageContent::Blocks(blocks);
        }
        apply_breakpoints(&mut r);
        assert_eq!(count_breakpoints(&r), MAX_BREAKPOINTS);
    }

    #[test]
    fn with_two_slots_left_the_tail_and_the_system_are_marked() {
        let mut r = request();
        for m in &mut r.messages[..2] {
            let mut blocks = m.blocks();
            if let Some(slot) = blocks.last_mut().and_then(ContentBlock::cache_control_mut) {
                *slot = Some(CacheControl::ephemeral());
            }
            m.content = MessageContent::Blocks(blocks);
        }
        apply_breakpoints(&mut r);
        assert_eq!(count_breakpoints(&r), MAX_BREAKPOINTS);
        assert!(r.messages[2].blocks()[1].cache_control().is_some());
        let Some(SystemPrompt::Blocks(system)) = &r.system else {
            panic!("system should become blocks")
        };
        assert!(system[0].cache_control.is_some());
        assert!(r.tools.iter().all(|t| t.cache_control.is_none()));
    }

    #[test]
    fn string_last_message_becomes_a_marked_block() {
        let mut r = MessagesRequest::new("m", 1, vec![Message::user_text("hi")]);
        apply_breakpoints(&mut r);
        assert_eq!(
            serde_json::to_value(&r.messages[0]).expect("serialises"),
            json!({"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]})
        );
    }
}
