//! The `system` lines that are not about tasks: `init`, `api_retry`, `status`, the SDK
//! lines (`permission_denied`, `session_state_changed`), fleet's own (`model_fallback`,
//! `waiting`), `compact_boundary`, and the hook and team lines.

use super::SubagentKeys;
use crate::{
    CompactTrigger, HookNote, McpServerStatus, PermissionMode, PermissionReasonType, RetryScope,
    SessionState, TeamEvent,
};
use serde::{Deserialize, Serialize};

/// `system/init`: the session as it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitLine {
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub session_id: String,
    /// The tools offered to the model, by the names Claude Code lists (the Agent tool is
    /// `Task` here, as in Claude Code, although requests to the API name it `Agent`).
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub mcp_servers: Vec<McpServerStatus>,
    #[serde(default)]
    pub model: String,
    #[serde(rename = "permissionMode", default)]
    pub permission_mode: PermissionMode,
    #[serde(default)]
    pub additional_directories: Vec<String>,
    #[serde(default)]
    pub agents: Vec<String>,
    #[serde(default)]
    pub skills: Vec<String>,
    /// fleet's version; absent from Claude Code's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet_version: Option<String>,
    /// The protocol version the Agent SDKs check (they warn when there is none).
    #[serde(default)]
    pub claude_code_version: String,
    #[serde(default)]
    pub uuid: String,
}

/// `system/api_retry`: a failed request is about to be sent again. Claude Code counts
/// retries, not attempts: `attempt` is 1 for the first retry, `max_retries` leaves out the
/// first try.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiRetryLine {
    pub attempt: u32,
    pub max_retries: u32,
    pub retry_delay_ms: u64,
    /// The HTTP status of the failure; `null` when there was none (a connection fault).
    #[serde(default)]
    pub error_status: Option<u16>,
    /// What kind of failure, in Claude Code's words.
    pub error: ApiErrorCategory,
    /// fleet's: what went wrong, in words (the message the API or the network gave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// fleet's: `request` when the same request is sent again (nothing of the reply was
    /// shown), `turn` when the whole turn is asked for again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_scope: Option<RetryScope>,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// The category of an API failure (`api_retry.error`, the synthetic error message's
/// `error`). Unknown categories from a newer writer are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiErrorCategory {
    /// 429.
    RateLimit,
    /// 529: the API is overloaded.
    Overloaded,
    /// 401 and 403: the key was refused.
    AuthenticationFailed,
    /// 402: the account cannot pay.
    BillingError,
    /// Other 4xx: the request itself was wrong.
    InvalidRequest,
    /// 5xx but 529.
    ServerError,
    /// No HTTP status: the connection failed or the stream broke off.
    Unknown,
    #[serde(untagged)]
    Other(String),
}

impl ApiErrorCategory {
    /// The category of a failure with this HTTP status (`None`: no response).
    pub fn from_status(status: Option<u16>) -> Self {
        match status {
            Some(429) => Self::RateLimit,
            Some(529) => Self::Overloaded,
            Some(401 | 403) => Self::AuthenticationFailed,
            Some(402) => Self::BillingError,
            Some(400..=499) => Self::InvalidRequest,
            Some(500..=599) => Self::ServerError,
            _ => Self::Unknown,
        }
    }
}

/// `system/status`: what the session is doing; `requesting` just before each model request
/// (partial-message mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusLine {
    pub status: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// `system/permission_denied`: a call was refused; `agent_id` names a subagent that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDeniedLine {
    pub tool_name: String,
    pub tool_use_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    pub decision_reason_type: PermissionReasonType,
    pub message: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
}

/// `system/session_state_changed`, for the Agent SDKs that ask for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStateLine {
    pub state: SessionStateName,
    #[serde(default)]
    pub sdk_host_only: bool,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
}

/// The session's state as the SDKs see it: `running` while a prompt is worked on,
/// `requires_action` while a call waits for an approver, `idle` once nothing is left.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStateName {
    Running,
    RequiresAction,
    Idle,
    #[serde(untagged)]
    Other(String),
}

impl From<SessionState> for SessionStateName {
    fn from(state: SessionState) -> Self {
        match state {
            SessionState::Running => Self::Running,
            SessionState::Idle => Self::Idle,
        }
    }
}

/// `system/model_fallback` (fleet's): the run moved to its fallback model, shaped as the
/// SDKs' `model_refusal_fallback` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelFallbackLine {
    pub trigger: String,
    pub original_model: String,
    pub fallback_model: String,
    pub error: String,
    pub content: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// `system/waiting` (fleet's): a wait went past its bound; who waits, on what, how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingLine {
    pub kind: String,
    pub waiting_for: String,
    pub waited_ms: u64,
    pub bound_ms: u64,
    /// The waiting agent (`main` for the main agent).
    pub agent_id: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
}

/// `system/compact_boundary`: the conversation was compacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactBoundaryLine {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub uuid: String,
    pub compact_metadata: CompactMetadata,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactMetadata {
    pub trigger: CompactTrigger,
    /// The conversation's size before, in tokens.
    pub pre_tokens: u64,
}

/// A hook's run (`hook_started`, `hook_response`, `informational`): the note's own fields
/// with the line's stamps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookLine {
    #[serde(flatten)]
    pub note: HookNote,
    pub uuid: String,
    pub session_id: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// A team event (`teammate_spawned`, `team_summary`, …): the event's own fields, then the
/// agent that caused it when it is not the main agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamLine {
    #[serde(flatten)]
    pub event: TeamEvent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    pub session_id: String,
    pub uuid: String,
}
