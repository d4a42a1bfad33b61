//! The parts of a request that rules look at, taken alike from both wire protocols so that one
//! scenario can answer an Anthropic client and an OpenAI-compatible one.

use fleet_protocol::{ContentBlock, MessageContent, MessagesRequest, Role, ToolResultContent};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which wire protocol a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Protocol {
    /// `POST /v1/messages`
    #[serde(rename = "anthropic")]
    Anthropic,
    /// `POST /v1/chat/completions`
    #[serde(rename = "openai")]
    OpenAi,
}

/// What rule conditions are evaluated against.
#[derive(Debug, Clone)]
pub(crate) struct RequestView {
    pub protocol: Protocol,
    pub model: String,
    pub system: String,
    pub first_user: String,
    pub last_user: String,
    pub has_tool_result: bool,
    pub tool_result_text: String,
    pub stream: bool,
}

impl RequestView {
    pub fn from_anthropic(req: &MessagesRequest) -> Self {
        let users = || req.messages.iter().filter(|m| m.role == Role::User);
        let last = users().next_back();
        let mut has_tool_result = false;
        let mut tool_result_text = String::new();
        if let Some(MessageContent::Blocks(blocks)) = last.map(|m| &m.content) {
            for block in blocks {
                if let ContentBlock::ToolResult { content, .. } = block {
                    has_tool_result = true;
                    tool_result_text.push_str(&tool_result_text_of(content.as_ref()));
                }
            }
        }
        Self {
            protocol: Protocol::Anthropic,
            model: req.model.clone(),
            system: req.system_text(),
            first_user: users().next().map(|m| m.text()).unwrap_or_default(),
            last_user: last.map(|m| m.text()).unwrap_or_default(),
            has_tool_result,
            tool_result_text,
            stream: req.stream,
        }
    }

    /// From a Chat Completions body already checked to hold a `messages` array.
    pub fn from_openai(body: &Value) -> Self {
        let messages: &[Value] = body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let role = |m: &Value| {
            m.get("role")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let system = messages
            .iter()
            .filter(|m| matches!(role(m).as_str(), "system" | "developer"))
            .map(openai_text)
            .collect::<Vec<_>>()
            .join("\n");
        let first_user = messages
            .iter()
            .find(|m| role(m) == "user")
            .map(openai_text)
            .unwrap_or_default();
        let tail_start = messages
            .iter()
            .rposition(|m| role(m) == "assistant")
            .map_or(0, |i| i + 1);
        let tail = &messages[tail_start..];
        let last_user = tail
            .iter()
            .filter(|m| role(m) == "user")
            .map(openai_text)
            .collect::<Vec<_>>()
            .join("\n");
        let tools: Vec<&Value> = tail.iter().filter(|m| role(m) == "tool").collect();
        Self {
            protocol: Protocol::OpenAi,
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            system,
            first_user,
            last_user,
            has_tool_result: !tools.is_empty(),
            tool_result_text: tools.into_iter().map(openai_text).collect(),
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        }
    }
}

/// The text of a tool result, whichever form its content took.
pub(crate) fn tool_result_text_of(content: Option<&ToolResultContent>) -> String {
    match content {
        None => String::new(),
        Some(ToolResultContent::Text(t)) => t.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

/// The text of a Chat Completions message: string content, or its `text` parts.
pub(crate) fn openai_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}
