//! Translating fleet's request (Messages API shape) into a Chat Completions request.
//!
//! The two protocols disagree on where things live: the system prompt is a message, a tool
//! result is a message of its own (role `tool`) rather than a block of a user turn, tool input
//! travels as a JSON string, and images are `data:` URLs. What the other side cannot express
//! is dropped on purpose: thinking blocks (their signatures mean nothing to another server) and
//! `cache_control` (compatible servers cache prefixes on their own, if at all).

use super::wire::{
    ChatMessage, ChatRequest, ChatTool, ChatToolCall, FunctionCall, FunctionDefinition, ImageUrl,
    StreamOptions, UserContent, UserPart,
};
use super::ToolChoiceMode;
use fleet_protocol::{
    ContentBlock, ImageSource, MessageContent, MessagesRequest, Role, ToolDefinition,
    ToolResultContent,
};
use serde_json::{json, Value};

/// Put in front of a failed tool's output: the `tool` role has no error flag, so the model
/// would otherwise read an error message as a successful result.
pub(crate) const TOOL_ERROR_PREFIX: &str = "Error: ";

/// Stands in a tool result's text for an image that is sent in the following user turn (a
/// `tool` message can only hold text).
const IMAGE_MOVED: &str = "[image attached in the next message]";

/// Builds the streaming request body. `include_usage` asks for the final usage chunk;
/// `default_choice` is the `tool_choice` for a request with tools and no choice of its own.
pub(crate) fn chat_request(
    request: &MessagesRequest,
    include_usage: bool,
    default_choice: ToolChoiceMode,
) -> ChatRequest {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let system = request.system_text();
    if !system.is_empty() {
        messages.push(ChatMessage::System { content: system });
    }
    for message in &request.messages {
        match message.role {
            Role::User => push_user(&message.content, &mut messages),
            Role::Assistant => push_assistant(&message.content, &mut messages),
        }
    }
    let messages = merge_user_turns(messages);
    let tools: Vec<ChatTool> = request.tools.iter().map(tool).collect();
    // OpenAI rejects a tool_choice (or parallel_tool_calls) that comes without tools.
    let (tool_choice, parallel_tool_calls) = match &request.tool_choice {
        _ if tools.is_empty() => (None, None),
        Some(choice) => map_tool_choice(choice),
        None => (default_tool_choice(default_choice), None),
    };
    ChatRequest {
        model: request.model.clone(),
        messages,
        tools,
        tool_choice,
        parallel_tool_calls,
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        stop: request.stop_sequences.clone(),
        stream: true,
        stream_options: include_usage.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

/// A user turn: its tool results first, one `tool` message each and in order (the protocol
/// wants them right after the assistant turn that made the calls), then whatever else it says.
fn push_user(content: &MessageContent, messages: &mut Vec<ChatMessage>) {
    let blocks = match content {
        MessageContent::Text(text) => {
            messages.push(ChatMessage::User {
                content: UserContent::Text(text.clone()),
            });
            return;
        }
        MessageContent::Blocks(blocks) => blocks,
    };
    let mut moved_images = Vec::new();
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } => {
                let mut text = tool_result_text(content.as_ref(), &mut moved_images);
                if *is_error == Some(true) {
                    text.insert_str(0, TOOL_ERROR_PREFIX);
                }
                messages.push(ChatMessage::Tool {
                    tool_call_id: tool_use_id.clone(),
                    content: text,
                });
            }
            ContentBlock::Text { text, .. } => parts.push(UserPart::Text { text: text.clone() }),
            ContentBlock::Image { source, .. } => parts.push(image_part(source)),
            // Not meaningful in a user turn; the Messages API would reject them too.
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    moved_images.extend(parts);
    if !moved_images.is_empty() {
        messages.push(ChatMessage::User {
            content: user_content(moved_images),
        });
    }
}

/// Makes the roles alternate: between two assistant turns, first the `tool` messages (they
/// answer the calls of the turn before and must follow it directly), then at most one `user`
/// message holding everything else the user side said, in order. A conversation can hold user
/// turns in a row — task notifications and then the prompt in a resumed session, a prompt
/// whose run failed before any reply — and many servers' chat templates (llama.cpp, vLLM with
/// Mistral or Gemma templates) refuse those with "roles must alternate". The Messages API
/// joins such turns itself, so the Anthropic encoder sends them as they are.
fn merge_user_turns(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut merged = Vec::with_capacity(messages.len());
    let mut user: Option<UserContent> = None;
    for message in messages {
        match message {
            ChatMessage::User { content } => {
                user = Some(match user.take() {
                    None => content,
                    Some(before) => join_user_content(before, content),
                });
            }
            ChatMessage::Tool { .. } => merged.push(message),
            ChatMessage::System { .. } | ChatMessage::Assistant { .. } => {
                if let Some(content) = user.take() {
                    merged.push(ChatMessage::User { content });
                }
                merged.push(message);
            }
        }
    }
    if let Some(content) = user {
        merged.push(ChatMessage::User { content });
    }
    merged
}

/// Two user turns as one: texts joined by a blank line (as the turns were apart), parts
/// one after the other when either holds an image.
fn join_user_content(first: UserContent, second: UserContent) -> UserContent {
    match (first, second) {
        (UserContent::Text(mut a), UserContent::Text(b)) => {
            a.push_str("\n\n");
            a.push_str(&b);
            UserContent::Text(a)
        }
        (a, b) => {
            let mut parts = into_parts(a);
            parts.extend(into_parts(b));
            UserContent::Parts(parts)
        }
    }
}

fn into_parts(content: UserContent) -> Vec<UserPart> {
    match content {
        UserContent::Text(text) => vec![UserPart::Text { text }],
        UserContent::Parts(parts) => parts,
    }
}

/// Plain text when there is no image, parts otherwise.
fn user_content(parts: Vec<UserPart>) -> UserContent {
    if parts.iter().all(|p| matches!(p, UserPart::Text { .. })) {
        let texts: Vec<String> = parts
            .into_iter()
            .filter_map(|p| match p {
                UserPart::Text { text } => Some(text),
                UserPart::ImageUrl { .. } => None,
            })
            .collect();
        UserContent::Text(texts.join("\n"))
    } else {
        UserContent::Parts(parts)
    }
}

/// A tool result as text; images inside it are moved to `images` for the next user turn.
fn tool_result_text(content: Option<&ToolResultContent>, images: &mut Vec<UserPart>) -> String {
    match content {
        None => String::new(),
        Some(ToolResultContent::Text(text)) => text.clone(),
        Some(ToolResultContent::Blocks(blocks)) => {
            let mut texts = Vec::new();
            for block in blocks {
                match block {
                    ContentBlock::Text { text, .. } => texts.push(text.as_str()),
                    ContentBlock::Image { source, .. } => {
                        images.push(image_part(source));
                        texts.push(IMAGE_MOVED);
                    }
                    _ => {}
                }
            }
            texts.join("\n")
        }
    }
}

fn image_part(source: &ImageSource) -> UserPart {
    let url = match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    };
    UserPart::ImageUrl {
        image_url: ImageUrl { url },
    }
}

/// An assistant turn: its text as `content`, its tool calls as `tool_calls`. A turn left empty
/// (it only thought) is not sent at all.
fn push_assistant(content: &MessageContent, messages: &mut Vec<ChatMessage>) {
    let blocks = match content {
        MessageContent::Text(text) => {
            messages.push(ChatMessage::Assistant {
                content: Some(text.clone()),
                tool_calls: Vec::new(),
            });
            return;
        }
        MessageContent::Blocks(blocks) => blocks,
    };
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text, .. } => texts.push(text.as_str()),
            ContentBlock::ToolUse {
                id, name, input, ..
            } => tool_calls.push(ChatToolCall {
                id: id.clone(),
                kind: "function",
                function: FunctionCall {
                    name: name.clone(),
                    arguments: input.to_string(),
                },
            }),
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolResult { .. }
            | ContentBlock::Image { .. } => {}
        }
    }
    let content = (!texts.is_empty()).then(|| texts.join("\n\n"));
    if content.is_some() || !tool_calls.is_empty() {
        messages.push(ChatMessage::Assistant {
            content,
            tool_calls,
        });
    }
}

fn tool(definition: &ToolDefinition) -> ChatTool {
    ChatTool {
        kind: "function",
        function: FunctionDefinition {
            name: definition.name.clone(),
            description: definition.description.clone(),
            parameters: definition.input_schema.clone(),
        },
    }
}

/// The configured choice, for a request that names none.
fn default_tool_choice(mode: ToolChoiceMode) -> Option<Value> {
    match mode {
        ToolChoiceMode::Omit => None,
        ToolChoiceMode::Auto => Some(json!("auto")),
        ToolChoiceMode::Required => Some(json!("required")),
    }
}

/// Messages API `tool_choice` → Chat Completions `tool_choice` and `parallel_tool_calls`:
/// `auto` → `"auto"`, `any` → `"required"`, `none` → `"none"`, `tool` → that function;
/// `disable_parallel_tool_use: true` → `parallel_tool_calls: false`. Anything unknown is left
/// out, so the server's default (auto) applies.
fn map_tool_choice(choice: &Value) -> (Option<Value>, Option<bool>) {
    let parallel = choice
        .get("disable_parallel_tool_use")
        .and_then(Value::as_bool)
        .filter(|disabled| *disabled)
        .map(|_| false);
    let mapped = match choice.get("type").and_then(Value::as_str) {
        Some("auto") => Some(json!("auto")),
        Some("any") => Some(json!("required")),
        Some("none") => Some(json!("none")),
        Some("tool") => choice
            .get("name")
            .and_then(Value::as_str)
            .map(|name| json!({"type": "function", "function": {"name": name}})),
        _ => None,
    };
    (mapped, parallel)
}

#[cfg(test)]
mod tests;
