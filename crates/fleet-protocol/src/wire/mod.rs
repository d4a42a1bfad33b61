//! The headless wire format: every line `fleet -p --output-format stream-json` writes, and the
//! one object `--output-format json` writes, as serde types.
//!
//! The printers build these and serialise them; a reader (the remote worker, `fleet remote
//! logs`, a test) parses a line back with `serde_json::from_str::<StreamLine>(line)` and
//! matches on the variant instead of looking keys up in a `Value`. The shapes are Claude
//! Code's (its `type`/`subtype` values and key names, its key order where it has the same
//! concept), so that a script written for `claude -p` reads fleet's output unchanged; keys
//! only fleet has (`fleet_version`, `retry_scope`, `usage_by_agent`, …) are added, never
//! swapped for Claude Code's.
//!
//! Reading never fails on a line this build does not know: a `type` or `subtype` it has no
//! variant for, or a known kind whose fields do not fit (a newer writer's), is kept whole as
//! [`StreamLine::Unknown`] or [`SystemLine::Other`], never mapped to a failure.
//!
//! The control protocol's lines (`control_request`, `control_response`, …) are not here:
//! they live in `crate::control`.

mod message;
mod result;
mod system;
mod task;
#[cfg(test)]
mod tests;

pub use message::{
    AssistantEnvelope, AssistantLine, DiscardedReply, DiscardedTag, StreamEventBody,
    StreamEventLine, TextBlock, TextTag, ToolResultBlock, ToolResultBody, ToolResultMeta,
    ToolResultTag, UserBlock, UserEnvelope, UserLine, WirePermissionDecision,
};
pub use result::{CacheCreation, ResultLine, ResultOrigin, ResultTeam, ResultUsage, ServerToolUse};
pub use system::{
    ApiErrorCategory, ApiRetryLine, CompactBoundaryLine, CompactMetadata, HookLine, InitLine,
    ModelFallbackLine, PermissionDeniedLine, SessionStateLine, SessionStateName, StatusLine,
    TeamLine, WaitingLine,
};
pub use task::{
    BackgroundTasksChangedLine, NotificationStatus, RunningTask, TaskNotificationLine, TaskPatch,
    TaskStartedLine, TaskUpdatedLine, TaskUsageLine,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One line of `stream-json` output, by its `type`.
///
/// ```
/// use fleet_protocol::wire::{ApiErrorCategory, StreamLine, SystemLine};
///
/// let line = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,
///     "retry_delay_ms":5,"error_status":529,"error":"overloaded","session_id":"s","uuid":"u"}"#;
/// match serde_json::from_str::<StreamLine>(line) {
///     Ok(StreamLine::System(SystemLine::ApiRetry(retry))) => {
///         assert_eq!(retry.error, ApiErrorCategory::Overloaded);
///         assert_eq!(retry.error_status, Some(529));
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamLine {
    System(SystemLine),
    Assistant(AssistantLine),
    User(UserLine),
    StreamEvent(StreamEventLine),
    Result(Box<ResultLine>),
    /// A line of a `type` this build does not know, or whose fields do not fit, kept whole.
    #[serde(untagged)]
    Unknown(Value),
}

/// A `type: "system"` line, by its `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemLine {
    Init(Box<InitLine>),
    ApiRetry(ApiRetryLine),
    /// `requesting` before each model request (partial-message mode).
    Status(StatusLine),
    TaskStarted(TaskStartedLine),
    TaskUpdated(TaskUpdatedLine),
    TaskNotification(TaskNotificationLine),
    BackgroundTasksChanged(BackgroundTasksChangedLine),
    PermissionDenied(PermissionDeniedLine),
    SessionStateChanged(SessionStateLine),
    ModelFallback(ModelFallbackLine),
    Waiting(WaitingLine),
    CompactBoundary(CompactBoundaryLine),
    /// `hook_started`, `hook_response`, `informational`: a [`crate::HookNote`] with stamps.
    #[serde(untagged)]
    Hook(HookLine),
    /// A team event (`teammate_spawned`, `team_summary`, …): a [`crate::TeamEvent`].
    #[serde(untagged)]
    Team(TeamLine),
    /// A subtype this build does not know, kept whole (its `subtype` included).
    #[serde(untagged)]
    Other(Map<String, Value>),
}

impl StreamLine {
    /// The line's kind as `type` or `type/subtype` (`system/init`, `assistant`, `result`),
    /// for logs and comparisons; an unknown line gives what its keys say, or `unknown`.
    pub fn kind(&self) -> String {
        match self {
            Self::System(system) => format!("system/{}", system.subtype()),
            Self::Assistant(_) => "assistant".into(),
            Self::User(_) => "user".into(),
            Self::StreamEvent(_) => "stream_event".into(),
            Self::Result(_) => "result".into(),
            Self::Unknown(value) => match (value["type"].as_str(), value["subtype"].as_str()) {
                (Some(ty), Some(sub)) => format!("{ty}/{sub}"),
                (Some(ty), None) => ty.to_string(),
                _ => "unknown".into(),
            },
        }
    }

    /// The session the line belongs to, when it names one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::System(system) => system.session_id(),
            Self::Assistant(line) => Some(&line.session_id),
            Self::User(line) => Some(&line.session_id),
            Self::StreamEvent(line) => Some(&line.session_id),
            Self::Result(line) => Some(&line.session_id),
            Self::Unknown(value) => value["session_id"].as_str(),
        }
    }
}

impl SystemLine {
    /// The `subtype` as written.
    pub fn subtype(&self) -> String {
        let known = match self {
            Self::Init(_) => "init",
            Self::ApiRetry(_) => "api_retry",
            Self::Status(_) => "status",
            Self::TaskStarted(_) => "task_started",
            Self::TaskUpdated(_) => "task_updated",
            Self::TaskNotification(_) => "task_notification",
            Self::BackgroundTasksChanged(_) => "background_tasks_changed",
            Self::PermissionDenied(_) => "permission_denied",
            Self::SessionStateChanged(_) => "session_state_changed",
            Self::ModelFallback(_) => "model_fallback",
            Self::Waiting(_) => "waiting",
            Self::CompactBoundary(_) => "compact_boundary",
            Self::Hook(_) | Self::Team(_) | Self::Other(_) => {
                let value = serde_json::to_value(self).unwrap_or_default();
                return value["subtype"].as_str().unwrap_or("unknown").to_string();
            }
        };
        known.to_string()
    }

    fn session_id(&self) -> Option<&str> {
        match self {
            Self::Init(l) => Some(&l.session_id),
            Self::ApiRetry(l) => Some(&l.session_id),
            Self::Status(l) => Some(&l.session_id),
            Self::TaskStarted(l) => Some(&l.session_id),
            Self::TaskUpdated(l) => Some(&l.session_id),
            Self::TaskNotification(l) => Some(&l.session_id),
            Self::BackgroundTasksChanged(l) => Some(&l.session_id),
            Self::PermissionDenied(l) => Some(&l.session_id),
            Self::SessionStateChanged(l) => Some(&l.session_id),
            Self::ModelFallback(l) => Some(&l.session_id),
            Self::Waiting(l) => Some(&l.session_id),
            Self::CompactBoundary(l) => Some(&l.session_id),
            Self::Hook(l) => Some(&l.session_id),
            Self::Team(l) => Some(&l.session_id),
            Self::Other(map) => map.get("session_id").and_then(Value::as_str),
        }
    }
}

/// The keys a line some subagent caused ends with (a line of the main agent has neither):
/// the Agent call that started the subagent and the subagent's id, so a reader can tell the
/// agents apart without keeping state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentKeys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

macro_rules! into_stream_line {
    ($($variant:ident($ty:ty) => $wrap:expr),+ $(,)?) => {
        $(impl From<$ty> for StreamLine {
            fn from(line: $ty) -> Self {
                let wrap: fn($ty) -> StreamLine = $wrap;
                wrap(line)
            }
        })+
    };
}

into_stream_line! {
    System(SystemLine) => StreamLine::System,
    Assistant(AssistantLine) => StreamLine::Assistant,
    User(UserLine) => StreamLine::User,
    StreamEvent(StreamEventLine) => StreamLine::StreamEvent,
    Result(ResultLine) => |l| StreamLine::Result(Box::new(l)),
    Init(InitLine) => |l| StreamLine::System(SystemLine::Init(Box::new(l))),
    ApiRetry(ApiRetryLine) => |l| StreamLine::System(SystemLine::ApiRetry(l)),
    Status(StatusLine) => |l| StreamLine::System(SystemLine::Status(l)),
    TaskStarted(TaskStartedLine) => |l| StreamLine::System(SystemLine::TaskStarted(l)),
    TaskUpdated(TaskUpdatedLine) => |l| StreamLine::System(SystemLine::TaskUpdated(l)),
    TaskNotification(TaskNotificationLine) => |l| StreamLine::System(SystemLine::TaskNotification(l)),
    BackgroundTasksChanged(BackgroundTasksChangedLine) => |l| StreamLine::System(SystemLine::BackgroundTasksChanged(l)),
    PermissionDenied(PermissionDeniedLine) => |l| StreamLine::System(SystemLine::PermissionDenied(l)),
    SessionStateChanged(SessionStateLine) => |l| StreamLine::System(SystemLine::SessionStateChanged(l)),
    ModelFallback(ModelFallbackLine) => |l| StreamLine::System(SystemLine::ModelFallback(l)),
    Waiting(WaitingLine) => |l| StreamLine::System(SystemLine::Waiting(l)),
    CompactBoundary(CompactBoundaryLine) => |l| StreamLine::System(SystemLine::CompactBoundary(l)),
    Hook(HookLine) => |l| StreamLine::System(SystemLine::Hook(l)),
    Team(TeamLine) => |l| StreamLine::System(SystemLine::Team(l)),
}
