//! The assistant's reply: the Messages API "message" object, whole or as it is announced by
//! `message_start` (empty content, provisional usage).

use crate::message::{ContentBlock, Message, MessageContent, Role};
use crate::usage::Usage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub id: String,
    /// Always `"message"` on the wire.
    #[serde(rename = "type", default = "message_type")]
    pub kind: String,
    #[serde(default = "assistant_role")]
    pub role: Role,
    pub model: String,
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

fn message_type() -> String {
    "message".into()
}

fn assistant_role() -> Role {
    Role::Assistant
}

impl AssistantMessage {
    /// An empty reply shell, as `message_start` announces it.
    pub fn empty(id: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            kind: message_type(),
            role: Role::Assistant,
            model: model.into(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Usage::default(),
        }
    }

    /// The reply as a conversation turn, ready to be appended to the history.
    pub fn to_message(&self) -> Message {
        Message {
            role: Role::Assistant,
            content: MessageContent::Blocks(self.content.clone()),
        }
    }

    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Why the model stopped. Unknown reasons from newer API versions are kept, not rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    StopSequence,
    ToolUse,
    PauseTurn,
    Refusal,
    /// The reply filled the model's context window before it reached `max_tokens` (the
    /// Messages API's own name; fleet also infers it from a server that stopped short).
    ModelContextWindowExceeded,
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::ToolUse => "tool_use",
            Self::PauseTurn => "pause_turn",
            Self::Refusal => "refusal",
            Self::ModelContextWindowExceeded => "model_context_window_exceeded",
            Self::Other(s) => s,
        }
    }
}
