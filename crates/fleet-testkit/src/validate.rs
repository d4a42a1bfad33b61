//! Rejects requests the real APIs would reject, with messages shaped like theirs, so a client
//! bug (an unanswered tool call, an empty text block, a fifth cache breakpoint) fails in tests
//! instead of in production. Turned off with `validate_requests: false`.

use crate::answer::is_generated_signature_valid;
use crate::cache::{count_breakpoints, MAX_BREAKPOINTS};
use fleet_protocol::{
    ContentBlock, MessageContent, MessagesRequest, Role, SystemPrompt, ThinkingConfig,
};
use serde_json::Value;
use std::collections::HashSet;
use thiserror::Error;

/// Why a request is refused, in the words the real API uses for it: the message of the 400
/// `invalid_request_error` the fake server answers with.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub(crate) enum InvalidRequest {
    #[error("messages: at least one message is required")]
    NoMessages,
    #[error("max_tokens: Input should be greater than or equal to 1")]
    NoMaxTokens,
    #[error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")]
    ThinkingBudgetTooSmall,
    #[error("`max_tokens` must be greater than `thinking.budget_tokens`")]
    MaxTokensWithinBudget,
    #[error("tools.{index}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")]
    ToolName { index: usize },
    #[error("tools: Tool names must be unique.")]
    DuplicateToolName,
    #[error("A maximum of {max} blocks with cache_control may be provided. Found {found}.")]
    TooManyBreakpoints { max: usize, found: usize },
    #[error("system: text content blocks must be non-empty")]
    EmptySystemText,
    #[error(
        "messages.{index}: all messages must have non-empty content except for the optional \
         final assistant message"
    )]
    EmptyMessage { index: usize },
    #[error("messages.{message}.content.{block}: text content blocks must be non-empty")]
    EmptyTextBlock { message: usize, block: usize },
    #[error("messages.{message}.content.{block}: Invalid `signature` in `thinking` block")]
    ThinkingSignature { message: usize, block: usize },
    #[error(
        "messages.{index}.content: unexpected `tool_use_id` found in `tool_result` blocks: \
         {id}. Each `tool_result` block must have a corresponding `tool_use` block in the \
         previous message."
    )]
    StrayToolResult { index: usize, id: String },
    #[error(
        "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately \
         after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in \
         the next message."
    )]
    UnansweredToolUse { index: usize, ids: String },
    #[error("you must provide a model parameter")]
    NoModel,
    #[error("Missing required parameter: 'messages'.")]
    MissingMessages,
    #[error(
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an \
         empty array instead."
    )]
    EmptyMessages,
    #[error("Missing required parameter: 'messages[{index}].role'.")]
    MissingRole { index: usize },
    #[error(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding \
         message with 'tool_calls'. (messages[{index}], tool_call_id '{id}')"
    )]
    StrayToolMessage { index: usize, id: String },
    #[error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding \
         to each 'tool_call_id'. The following tool_call_ids did not have response messages: \
         {ids}"
    )]
    UnansweredToolCalls { ids: String },
    #[error(
        "Conversation roles must alternate user/assistant/user/assistant/... (messages[{index}] \
         is a second user message in a row)"
    )]
    RolesNotAlternating { index: usize },
}

/// Checks a Messages API request; the error is the message for a 400 `invalid_request_error`.
pub(crate) fn anthropic(req: &MessagesRequest) -> Result<(), InvalidRequest> {
    if req.messages.is_empty() {
        return Err(InvalidRequest::NoMessages);
    }
    if req.max_tokens == 0 {
        return Err(InvalidRequest::NoMaxTokens);
    }
    if let Some(ThinkingConfig::Enabled { budget_tokens, .. }) = req.thinking {
        if budget_tokens < 1024 {
            return Err(InvalidRequest::ThinkingBudgetTooSmall);
        }
        if req.max_tokens <= budget_tokens {
            return Err(InvalidRequest::MaxTokensWithinBudget);
        }
    }
    let mut names = HashSet::new();
    for (i, tool) in req.tools.iter().enumerate() {
        let valid = (1..=128).contains(&tool.name.len())
            && tool
                .name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        if !valid {
            return Err(InvalidRequest::ToolName { index: i });
        }
        if !names.insert(tool.name.as_str()) {
            return Err(InvalidRequest::DuplicateToolName);
        }
    }
    let breakpoints = count_breakpoints(req);
    if breakpoints > MAX_BREAKPOINTS {
        return Err(InvalidRequest::TooManyBreakpoints {
            max: MAX_BREAKPOINTS,
            found: breakpoints,
        });
    }
    // The API refuses an empty text block in the system prompt as in messages.
    if let Some(SystemPrompt::Blocks(blocks)) = &req.system {
        if blocks.iter().any(|block| block.text.is_empty()) {
            return Err(InvalidRequest::EmptySystemText);
        }
    }
    let last = req.messages.len() - 1;
    for (i, message) in req.messages.iter().enumerate() {
        let empty = match &message.content {
            MessageContent::Text(t) => t.is_empty(),
            MessageContent::Blocks(b) => b.is_empty(),
        };
        if empty && !(i == last && message.role == Role::Assistant) {
            return Err(InvalidRequest::EmptyMessage { index: i });
        }
        if let MessageContent::Blocks(blocks) = &message.content {
            for (j, block) in blocks.iter().enumerate() {
                check_block(block, i, j)?;
            }
        }
    }
    check_tool_pairing(req)
}

/// Block `index` of message `message`.
fn check_block(block: &ContentBlock, message: usize, index: usize) -> Result<(), InvalidRequest> {
    match block {
        ContentBlock::Text { text, .. } if text.is_empty() => Err(InvalidRequest::EmptyTextBlock {
            message,
            block: index,
        }),
        ContentBlock::Thinking {
            thinking,
            signature,
        } if !is_generated_signature_valid(thinking, signature) => {
            Err(InvalidRequest::ThinkingSignature {
                message,
                block: index,
            })
        }
        _ => Ok(()),
    }
}

/// Every `tool_use` must be answered by a `tool_result` in the very next message, and every
/// `tool_result` must answer a `tool_use` of the message just before.
fn check_tool_pairing(req: &MessagesRequest) -> Result<(), InvalidRequest> {
    let mut pending: Vec<String> = Vec::new();
    for (i, message) in req.messages.iter().enumerate() {
        let results: Vec<&str> = match &message.content {
            MessageContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect(),
            MessageContent::Text(_) => Vec::new(),
        };
        if message.role == Role::User {
            if let Some(stray) = results.iter().find(|id| !pending.iter().any(|p| p == *id)) {
                return Err(InvalidRequest::StrayToolResult {
                    index: i,
                    id: (*stray).to_string(),
                });
            }
        }
        let unanswered: Vec<&str> = pending
            .iter()
            .map(String::as_str)
            .filter(|p| message.role != Role::User || !results.contains(p))
            .collect();
        if !unanswered.is_empty() {
            return Err(InvalidRequest::UnansweredToolUse {
                index: i,
                ids: unanswered.join(", "),
            });
        }
        pending = match message.role {
            Role::Assistant => message.tool_uses().map(|t| t.id.to_owned()).collect(),
            Role::User => Vec::new(),
        };
    }
    Ok(())
}

/// Checks a Chat Completions request: a non-empty `messages` array of objects with a role,
/// and tool calls answered by `tool` messages (as OpenAI requires).
pub(crate) fn openai(body: &Value, strict: bool) -> Result<(), InvalidRequest> {
    if !body.get("model").is_some_and(Value::is_string) {
        return Err(InvalidRequest::NoModel);
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(InvalidRequest::MissingMessages);
    };
    if messages.is_empty() {
        return Err(InvalidRequest::EmptyMessages);
    }
    for (i, m) in messages.iter().enumerate() {
        if !m.get("role").is_some_and(Value::is_string) {
            return Err(InvalidRequest::MissingRole { index: i });
        }
    }
    if !strict {
        return Ok(());
    }
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if role == "tool" {
            let id = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Some(pos) = pending.iter().position(|p| p == id) {
                pending.remove(pos);
                continue;
            }
            return Err(InvalidRequest::StrayToolMessage {
                index: i,
                id: id.to_string(),
            });
        }
        if !pending.is_empty() {
            return Err(InvalidRequest::UnansweredToolCalls {
                ids: pending.join(", "),
            });
        }
        if role == "assistant" {
            pending = m
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|calls| {
                    calls
                        .iter()
                        .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    Ok(())
}

/// Two `user` messages in a row, refused in the words of the chat templates that refuse them.
pub(crate) fn roles_alternate(body: &Value) -> Result<(), InvalidRequest> {
    let roles = body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| m.get("role").and_then(Value::as_str).unwrap_or_default());
    let mut previous = "";
    for (i, role) in roles.enumerate() {
        if role == "user" && previous == "user" {
            return Err(InvalidRequest::RolesNotAlternating { index: i });
        }
        previous = role;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{roles_alternate, InvalidRequest};
    use serde_json::json;

    #[test]
    fn two_user_messages_in_a_row_are_refused_and_tools_between_are_not_users() {
        let ok = json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]},
            {"role": "tool", "tool_call_id": "c", "content": "r"},
            {"role": "user", "content": "b"}
        ]});
        assert_eq!(roles_alternate(&ok), Ok(()));
        let twice = json!({"messages": [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"}
        ]});
        let err = roles_alternate(&twice).expect_err("two users in a row");
        assert_eq!(err, InvalidRequest::RolesNotAlternating { index: 1 });
        let shown = err.to_string();
        assert!(
            shown.contains("roles must alternate") && shown.contains("messages[1]"),
            "{shown}"
        );
    }
}
