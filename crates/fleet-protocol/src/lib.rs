//! fleet's vocabulary: the data every other crate speaks, with serde and without I/O.
//!
//! The message model mirrors the Anthropic Messages API exactly (field names, optional fields
//! left out rather than nulled), because transcripts are replayed to that API unchanged and
//! users' scripts parse what fleet prints.

pub mod agent_message;
pub mod change;
pub mod compact;
pub mod control;
pub mod env;
pub mod error;
pub mod event;
pub mod hook;
mod json_kind;
mod markup;
pub mod message;
pub mod model_usage;
pub mod notification;
pub mod request;
pub mod response;
pub mod shared;
pub mod stream;
pub mod task;
pub mod team;
pub mod tree;
pub mod usage;
pub mod vocab;
pub mod wire;

pub use agent_message::AgentMessage;
pub use change::{
    ChangeKind, DiffHunk, DiffLine, DiffRow, DiffTag, ProposedChange, ShownRow, Unshown, FOLD_HEAD,
    FOLD_TAIL,
};
pub use compact::{CompactBoundary, CompactTrigger};
pub use error::{ApiErrorBody, ApiErrorDetail};
pub use event::{
    AgentEvent, AgentRef, CommittedMessage, DeniedCall, EventKind, McpServerStatus,
    PermissionDenial, PermissionNote, ReplyMeta, ResultSubtype, RetryScope, RunOrigin, RunResult,
    SessionInfo, SessionState, SubagentLabel, ToolResultEvent, WaitReport,
};
pub use hook::HookNote;
pub use json_kind::json_kind;
pub use message::{
    CacheControl, CacheControlKind, ContentBlock, ImageSource, Message, MessageContent, Role,
    ToolResultContent, ToolUse,
};
pub use model_usage::ModelUsage;
pub use notification::{TaskNotification, TaskUsage};
pub use request::{MessagesRequest, SystemBlock, SystemPrompt, ThinkingConfig, ToolDefinition};
pub use response::{AssistantMessage, StopReason};
pub use shared::Shared;
pub use stream::{BlockDelta, MessageDeltaBody, StreamEvent};
pub use task::{
    BackgroundTask, IllegalTransition, KilledBy, TaskProgress, TaskStarted, TaskStatus,
};
pub use team::{MailEntry, TeamEvent, MAIL_VERSION};
pub use tree::{
    AgentUsage, KilledCounts, RefusedCounts, RequestedModes, SubagentStats, TreeReport,
};
pub use usage::{Usage, UsageDelta};
pub use vocab::{
    BackendType, HookDecision, HookPermissionDecision, McpServerState, PermissionDecision,
    PermissionMode, PermissionReasonType, TerminalReason, UnknownValue,
};

#[cfg(test)]
mod tests;
