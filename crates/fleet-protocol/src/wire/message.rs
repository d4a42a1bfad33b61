//! The message lines: `assistant` (one content block each, as Claude Code streams them),
//! `user` (tool results, and a subagent's prompt), and `stream_event` (the API's stream events
//! of `--include-partial-messages`).

use crate::{
    ContentBlock, PermissionDecision, PermissionReasonType, StopReason, StreamEvent, Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `type: "assistant"`: one content block of a reply, in the reply's envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantLine {
    pub message: AssistantEnvelope,
    /// The Agent call that started the subagent whose reply this is; `null` for the main
    /// agent (always written, as Claude Code does).
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    /// RFC 3339 in UTC with milliseconds.
    #[serde(default)]
    pub timestamp: String,
    /// A subagent's type and task, so a reader can say which helper wrote the line without
    /// having seen its `task_started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_description: Option<String>,
    /// The synthetic message that reports an API error that ended the run (model
    /// `<synthetic>`): the error's category…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::ApiErrorCategory>,
    /// …`true` on such a message…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_api_error_message: Option<bool>,
    /// …and the HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<u16>,
}

/// The reply's envelope around one block; `stop_reason` is `null` while the reply streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantEnvelope {
    #[serde(default)]
    pub id: String,
    /// Always `message`.
    #[serde(rename = "type", default = "message_type")]
    pub kind: String,
    /// Always `assistant`.
    #[serde(default = "assistant_role")]
    pub role: String,
    #[serde(default)]
    pub model: String,
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(default)]
    pub usage: Usage,
}

fn message_type() -> String {
    "message".into()
}

fn assistant_role() -> String {
    "assistant".into()
}

fn user_role() -> String {
    "user".into()
}

impl AssistantEnvelope {
    /// An envelope for `content` of the reply `id` from `model`, still streaming.
    pub fn new(id: &str, model: &str, content: Vec<ContentBlock>, usage: Usage) -> Self {
        Self {
            id: id.to_string(),
            kind: message_type(),
            role: assistant_role(),
            model: model.to_string(),
            content,
            stop_reason: None,
            stop_sequence: None,
            usage,
        }
    }
}

/// `type: "user"`: a tool's result going back to the model, or the prompt a subagent was
/// started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserLine {
    pub message: UserEnvelope,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_description: Option<String>,
    /// The tool's structured result (a Read's file, a Bash run's streams, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<Value>,
    /// What the permission check decided for each call answered here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_meta: Option<Vec<ToolResultMeta>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserEnvelope {
    /// Always `user`.
    #[serde(default = "user_role")]
    pub role: String,
    pub content: Vec<UserBlock>,
}

impl UserEnvelope {
    pub fn new(content: Vec<UserBlock>) -> Self {
        Self {
            role: user_role(),
            content,
        }
    }
}

/// One block of a `user` line's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserBlock {
    ToolResult(ToolResultBlock),
    Text(TextBlock),
    /// A block of another type, kept whole.
    Other(Value),
}

/// `{"type": "tool_result", …}`, keys in Claude Code's order (`tool_use_id` first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    pub tool_use_id: String,
    #[serde(rename = "type")]
    pub kind: ToolResultTag,
    pub content: ToolResultBody,
    /// Claude Code leaves it out on some successes; fleet always writes it.
    #[serde(default)]
    pub is_error: bool,
}

/// The `type` of a [`ToolResultBlock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolResultTag {
    ToolResult,
}

/// A tool result's content: plain text (most tools) or text blocks (the Agent tool).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultBody {
    Text(String),
    Blocks(Vec<TextBlock>),
    Other(Value),
}

impl ToolResultBody {
    /// The text, blocks joined.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks.iter().map(|b| b.text.as_str()).collect(),
            Self::Other(value) => value.to_string(),
        }
    }
}

/// `{"type": "text", "text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    pub kind: TextTag,
    pub text: String,
}

impl TextBlock {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            kind: TextTag::Text,
            text: text.into(),
        }
    }
}

/// The `type` of a [`TextBlock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextTag {
    Text,
}

/// One entry of `tool_result_meta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultMeta {
    /// The call's id.
    pub id: String,
    pub permission_decision: WirePermissionDecision,
}

/// What the permission check decided for a call, and by what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WirePermissionDecision {
    pub decision: PermissionDecision,
    /// Where the deciding setting came from; `config` for every decision fleet makes.
    pub source: String,
    /// What decided; Claude Code leaves it out for some calls (its Agent tool's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_type: Option<PermissionReasonType>,
    /// The rule's text when a rule decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// `type: "stream_event"`: one event of a reply as the API streamed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEventLine {
    pub event: StreamEventBody,
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
}

/// The event of a `stream_event` line: the API's own, or fleet's `message_discarded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StreamEventBody {
    Api(StreamEvent),
    Discarded(DiscardedReply),
    /// An event this build does not know, kept whole.
    Other(Value),
}

/// fleet's `{"type": "message_discarded"}`: drop what was shown of the reply (`message_id`
/// when its start was seen); the turn is asked for again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscardedReply {
    #[serde(rename = "type")]
    pub kind: DiscardedTag,
    pub message_id: Option<String>,
    pub reason: String,
}

/// The `type` of a [`DiscardedReply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscardedTag {
    MessageDiscarded,
}
