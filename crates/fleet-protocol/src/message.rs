//! Conversation messages and their content blocks, shaped exactly as the Messages API writes
//! them, so a transcript written by fleet can be sent back to the API byte for byte.
//!
//! Optional fields are skipped when absent (never written as `null`): the API rejects some
//! explicit nulls, and an exact round trip needs absent to stay absent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who spoke. The Messages API has only two conversational roles; the system prompt travels
/// beside the messages, not among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: MessageContent,
}

impl Message {
    /// A user turn holding one plain string, the way a typed prompt is usually sent.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: MessageContent::Text(text.into()),
        }
    }

    /// A turn made of blocks.
    pub fn with_blocks(role: Role, blocks: Vec<ContentBlock>) -> Self {
        Self {
            role,
            content: MessageContent::Blocks(blocks),
        }
    }

    /// The concatenated text of every text block (or the string content).
    pub fn text(&self) -> String {
        match &self.content {
            MessageContent::Text(t) => t.clone(),
            MessageContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
        }
    }

    /// The blocks of this message; a string content is seen as one text block.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        match &self.content {
            MessageContent::Text(t) => vec![ContentBlock::text(t.clone())],
            MessageContent::Blocks(b) => b.clone(),
        }
    }

    /// The tool calls this message makes, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = ToolUse<'_>> {
        let blocks: &[ContentBlock] = match &self.content {
            MessageContent::Text(_) => &[],
            MessageContent::Blocks(b) => b,
        };
        blocks.iter().filter_map(|b| match b {
            ContentBlock::ToolUse {
                id, name, input, ..
            } => Some(ToolUse { id, name, input }),
            _ => None,
        })
    }
}

/// A borrowed view of one `tool_use` block.
#[derive(Debug, Clone, Copy)]
pub struct ToolUse<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
}

/// Message content is either a bare string or a list of blocks; both forms are kept as they
/// came so that re-serialising gives the same JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// Marks the end of a cacheable prefix. `ttl` is only written when set (`"5m"` or `"1h"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: CacheControlKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// The only kind the API knows today, with the default five-minute lifetime.
    pub fn ephemeral() -> Self {
        Self {
            kind: CacheControlKind::Ephemeral,
            ttl: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheControlKind {
    Ephemeral,
}

/// One block of message content, tagged by `type` as on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        citations: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: String,
        /// Proves to the API that the thinking was its own; must be sent back unchanged.
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<ToolResultContent>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            citations: None,
            cache_control: None,
        }
    }

    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        }
    }

    /// A tool result holding plain text; `is_error` is only written when true, as the API does.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: Some(ToolResultContent::Text(text.into())),
            is_error: is_error.then_some(true),
            cache_control: None,
        }
    }

    /// A tool result holding text followed by images, for tools that return pictures.
    pub fn tool_result_with_images(
        tool_use_id: impl Into<String>,
        text: impl Into<String>,
        images: Vec<ImageSource>,
        is_error: bool,
    ) -> Self {
        let mut blocks = vec![Self::text(text)];
        blocks.extend(images.into_iter().map(|source| Self::Image {
            source,
            cache_control: None,
        }));
        Self::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: Some(ToolResultContent::Blocks(blocks)),
            is_error: is_error.then_some(true),
            cache_control: None,
        }
    }

    /// The block's breakpoint slot, for the block kinds that can carry one.
    pub fn cache_control_mut(&mut self) -> Option<&mut Option<CacheControl>> {
        match self {
            Self::Text { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. }
            | Self::Image { cache_control, .. } => Some(cache_control),
            Self::Thinking { .. } | Self::RedactedThinking { .. } => None,
        }
    }

    /// The block's breakpoint slot, for blocks that can carry one (`Some(&None)`: it can, and
    /// has none yet).
    pub fn cache_control_slot(&self) -> Option<&Option<CacheControl>> {
        match self {
            Self::Text { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. }
            | Self::Image { cache_control, .. } => Some(cache_control),
            Self::Thinking { .. } | Self::RedactedThinking { .. } => None,
        }
    }

    /// The block's breakpoint, if it carries one.
    pub fn cache_control(&self) -> Option<&CacheControl> {
        self.cache_control_slot().and_then(Option::as_ref)
    }

    /// The wire name of this block's type, for messages and logs.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Thinking { .. } => "thinking",
            Self::RedactedThinking { .. } => "redacted_thinking",
            Self::ToolUse { .. } => "tool_use",
            Self::ToolResult { .. } => "tool_result",
            Self::Image { .. } => "image",
        }
    }
}

/// A tool result's content: a string, or blocks (text and images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    Base64 { media_type: String, data: String },
    Url { url: String },
}
