//! The body of `POST /v1/messages`. Shared by the client that sends it and the fake server
//! that reads it.

use crate::message::{CacheControl, Message};
use crate::shared::Shared;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    pub model: String,
    pub max_tokens: u64,
    /// Shared with the agent that sends it (see [`Shared`]).
    pub messages: Shared<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    #[serde(default, skip_serializing_if = "Shared::is_empty")]
    pub tools: Shared<ToolDefinition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

impl MessagesRequest {
    pub fn new(
        model: impl Into<String>,
        max_tokens: u64,
        messages: impl Into<Shared<Message>>,
    ) -> Self {
        Self {
            model: model.into(),
            max_tokens,
            messages: messages.into(),
            system: None,
            tools: Shared::new(),
            tool_choice: None,
            thinking: None,
            temperature: None,
            stop_sequences: Vec::new(),
            metadata: None,
            stream: false,
        }
    }

    /// The system prompt as plain text, whichever form it was sent in.
    pub fn system_text(&self) -> String {
        match &self.system {
            None => String::new(),
            Some(SystemPrompt::Text(t)) => t.clone(),
            Some(SystemPrompt::Blocks(b)) => b
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// The system prompt: a string, or text blocks (which can carry `cache_control`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    Text(String),
    Blocks(Vec<SystemBlock>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// Always `"text"` on the wire.
    #[serde(rename = "type")]
    pub kind: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl SystemBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            kind: "text".into(),
            text: text.into(),
            cache_control: None,
        }
    }
}

/// A tool offered to the model: its name, what it does, and the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// Extended thinking: `{"type":"enabled","budget_tokens":N}`, `{"type":"adaptive"}` (the
/// model decides how much; newer models only) or `{"type":"disabled"}`. `display`
/// (`summarized` or `omitted`) says how the thinking comes back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingConfig {
    Enabled {
        budget_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    Adaptive {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<String>,
    },
    Disabled,
}
