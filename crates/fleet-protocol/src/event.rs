//! `AgentEvent`: everything an agent does, as one stream. Printers (text, json, stream-json),
//! the transcript writer and a parent agent are all consumers of it, so every fact a consumer
//! needs is in the event itself — who emitted it included.

use crate::message::{ContentBlock, Message};
use crate::model_usage::ModelUsage;
use crate::notification::TaskNotification;
use crate::task::{BackgroundTask, TaskStarted, TaskStatus};
use crate::tree::TreeReport;
use crate::usage::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which agent emitted an event. The main agent of a session has no parent tool use; a
/// subagent's events carry the id of the Agent tool call that started it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRef {
    pub agent_id: String,
    pub parent_tool_use_id: Option<String>,
    /// For a subagent: its type and the task description it was given, which stream-json
    /// prints on each of its messages. Shared, since every event carries a copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<std::sync::Arc<SubagentLabel>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentLabel {
    pub subagent_type: String,
    pub description: String,
}

impl AgentRef {
    pub fn main() -> Self {
        Self {
            agent_id: "main".into(),
            parent_tool_use_id: None,
            subagent: None,
        }
    }

    pub fn subagent(
        agent_id: impl Into<String>,
        parent_tool_use_id: impl Into<String>,
        subagent_type: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            agent_id: agent_id.into(),
            parent_tool_use_id: Some(parent_tool_use_id.into()),
            subagent: Some(std::sync::Arc::new(SubagentLabel {
                subagent_type: subagent_type.into(),
                description: description.into(),
            })),
        }
    }

    pub fn is_main(&self) -> bool {
        self.parent_tool_use_id.is_none()
    }
}

/// Which kind of retry an [`EventKind::Retry`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryScope {
    /// The same HTTP request again: the connection failed or the server refused before any
    /// of the reply reached the caller.
    Request,
    /// The whole turn again: a reply broke off after it began, or came back unusable (tool
    /// input that is not JSON). Anything streamed of it is discarded first.
    Turn,
}

impl RetryScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Turn => "turn",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AgentEvent {
    pub agent: AgentRef,
    pub kind: EventKind,
}

// `Finished` (with the tree report) is much larger than the rest; it comes once per run and
// events are moved, not stored in bulk (the channel is bounded), so boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The agent is configured and about to send its first request.
    Started(SessionInfo),
    /// A model request failed and will be tried again after `delay_ms`; `scope` says whether
    /// the same request is sent again or the whole turn is asked for again.
    Retry {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        scope: RetryScope,
        /// The HTTP status of the failure (`error_status` in `api_retry`), if it had one.
        error_status: Option<u16>,
    },
    /// What was streamed of the reply in progress (`message_id` when its start was seen) is
    /// thrown away: the turn is asked for again, and a consumer that shows partial messages
    /// must drop what it showed of this one.
    ReplyDiscarded {
        message_id: Option<String>,
        reason: String,
    },
    /// The model was overloaded and the run moved to its fallback model (`--fallback-model`)
    /// for good; said once, by the agent whose request found out.
    ModelFallback {
        from: String,
        to: String,
        reason: String,
    },
    TextDelta(String),
    ThinkingDelta(String),
    /// One content block of an assistant reply is complete. `usage` is the reply's usage as
    /// known so far; the final figures come with `MessageCommitted`.
    AssistantBlock {
        message_id: String,
        model: String,
        block: ContentBlock,
        usage: Usage,
    },
    /// A tool call finished (or was refused); one per tool_use, in call order.
    ToolResult(ToolResultEvent),
    /// A message was appended to the conversation: the prompt, an assistant reply (with its
    /// id, model and final usage), or the user message holding a turn's tool results. The
    /// transcript writer records exactly these.
    MessageCommitted(CommittedMessage),
    /// The run ended; always the last event of a run.
    Finished(RunResult),
    /// A background task was registered and is about to run.
    TaskStarted(TaskStarted),
    /// A task changed state; `end_time_ms` (Unix ms) is set once it is final.
    TaskUpdated {
        task_id: String,
        status: TaskStatus,
        end_time_ms: Option<u64>,
    },
    /// A finished task's notification was queued for the agent that started it.
    TaskNotified(TaskNotification),
    /// The set of background tasks still running changed; this is the whole new set.
    BackgroundTasksChanged(Vec<BackgroundTask>),
    /// Something happened in the session's team (a member joined, went idle, left; mail; the
    /// task list changed).
    Team(crate::team::TeamEvent),
    /// The agent tree's final totals, sent once by a session with subagents as it ends, after
    /// anything that could still change them (tasks killed on the way out).
    TreeTotals(TreeReport),
    /// A hook started or ended (see `hook.rs`).
    Hook(crate::hook::HookNote),
    /// The conversation was compacted to stay inside the model's context window.
    CompactBoundary(crate::compact::CompactBoundary),
    /// A tool call was refused — by the permission check, a person, an approver or a hook —
    /// just before its (error) result; one per entry of the result's `permission_denials`.
    PermissionDenied(DeniedCall),
    /// A tool call waits for an approver's answer (`waiting`), or has just had it.
    Approval {
        tool_use_id: String,
        tool_name: String,
        waiting: bool,
    },
    /// The session took up a prompt (`Running`), or has nothing left to do (`Idle`): its run
    /// ended and every background task it was waiting on has reported.
    SessionState(SessionState),
    /// One Messages API stream event of the reply being received, for readers that replay
    /// the stream (`--include-partial-messages`). Only agents asked for them send these, and
    /// text and thinking deltas keep coming as `TextDelta` / `ThinkingDelta`.
    Stream(crate::stream::StreamEvent),
    /// The agent has waited past the watchdog's bound (`FLEET_WATCHDOG_MS`) for something
    /// outside itself; said at the bound and at each doubling while the wait lasts.
    Waiting(WaitReport),
}

/// What an agent has been waiting for, and how long (`system`/`waiting` in stream-json).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitReport {
    /// `model`, `tool`, `child`, `tasks` or `output`.
    pub kind: String,
    /// What it waits for, in words: "the reply of the model …", "the tool Bash (…)".
    pub waiting_for: String,
    pub waited_ms: u64,
    /// The watchdog's bound, past which waits are reported.
    pub bound_ms: u64,
}

/// A refused tool call, as `system/permission_denied` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeniedCall {
    pub tool_name: String,
    pub tool_use_id: String,
    /// The refusal the model was given as the call's result.
    pub message: String,
    /// What refused it: `rule`, `mode`, `workspace`, `user`, `hook`…
    pub reason_type: crate::PermissionReasonType,
}

/// Whether the session is busy, as `system/session_state_changed` reports it (an approver's
/// wait, `requires_action`, comes from [`EventKind::Approval`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Running,
    Idle,
}

/// What the `system`/`init` event reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session_id: String,
    pub cwd: String,
    pub model: String,
    pub tools: Vec<String>,
    pub permission_mode: crate::PermissionMode,
    pub additional_directories: Vec<String>,
    /// The agent types the Agent tool can start (empty without subagents).
    #[serde(default)]
    pub agents: Vec<String>,
    /// Each MCP server of the session and how its start went (`connected`, `failed`).
    #[serde(default)]
    pub mcp_servers: Vec<McpServerStatus>,
    /// The skills the session's agents can load (empty without skills).
    #[serde(default)]
    pub skills: Vec<String>,
}

/// One MCP server in the `init` line, as Claude Code reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerStatus {
    pub name: String,
    pub status: crate::McpServerState,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultEvent {
    pub tool_use_id: String,
    pub tool_name: String,
    /// The text the model receives.
    pub content: String,
    pub is_error: bool,
    /// Structured detail for printers (`tool_use_result`); the model never sees it. Shared
    /// with the committed message's `tool_results`: it often holds a whole file.
    pub structured: Option<Arc<Value>>,
    pub permission: PermissionNote,
}

/// How the permission check went for one call, as printers report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionNote {
    /// `accept` or `reject`.
    pub decision: crate::PermissionDecision,
    /// `mode`, `rule`, `workspace`, … and the rule text when a rule decided.
    pub reason_type: crate::PermissionReasonType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommittedMessage {
    pub message: Message,
    /// For assistant replies: the API's message id, model and usage.
    pub reply: Option<ReplyMeta>,
    /// Structured tool results of this message, by tool_use id (for transcripts).
    pub tool_results: Vec<(String, Arc<Value>)>,
    /// The `msg_id`s of the team mail this message delivers: kept in the transcript, so that
    /// after a crash the same mail, still unacknowledged in the inbox, is not delivered again.
    pub mail_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyMeta {
    pub id: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: Option<crate::StopReason>,
}

/// How a run ended, in the result event's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSubtype {
    Success,
    ErrorMaxTurns,
    ErrorDuringExecution,
    ErrorMaxBudgetUsd,
    /// `--json-schema`: the model gave no valid structured output within the retries.
    ErrorMaxStructuredOutputRetries,
}

impl ResultSubtype {
    pub fn is_error(self) -> bool {
        self != Self::Success
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::ErrorMaxTurns => "error_max_turns",
            Self::ErrorDuringExecution => "error_during_execution",
            Self::ErrorMaxBudgetUsd => "error_max_budget_usd",
            Self::ErrorMaxStructuredOutputRetries => "error_max_structured_output_retries",
        }
    }
}

/// A call the permission check refused; listed in the result so a headless caller can see
/// what to allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    pub subtype: ResultSubtype,
    /// The final assistant text on success, else what went wrong.
    pub result: String,
    pub num_turns: u32,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    pub total_cost_usd: f64,
    pub usage: Usage,
    pub model_usage: BTreeMap<String, ModelUsage>,
    pub permission_denials: Vec<PermissionDenial>,
    /// The model's last stop reason (`end_turn`, `tool_use`, `max_tokens`…).
    pub stop_reason: Option<crate::StopReason>,
    /// The HTTP status of the API error that ended the run, if one did.
    pub api_error_status: Option<u16>,
    pub session_id: String,
    /// Set when the run was started by background tasks reporting back rather than by a
    /// prompt: the ids of the tasks whose notifications it answered.
    pub origin: Option<RunOrigin>,
    /// Totals over the agent tree (the main agent and every subagent), filled in by the
    /// session for the main agent's results.
    pub tree: Option<TreeReport>,
    /// Why the loop stopped, when the subtype does not say it: `hook_stopped` for a run a
    /// hook's `continue: false` ended (a success, as in Claude Code).
    pub terminal_reason: Option<crate::TerminalReason>,
    /// `--json-schema`: the value the model gave through the StructuredOutput tool, already
    /// checked against the schema.
    pub structured_output: Option<Value>,
}

/// What started a run that no prompt started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOrigin {
    /// `task-notification`.
    pub kind: String,
    pub task_ids: Vec<String>,
}

impl RunResult {
    pub fn is_error(&self) -> bool {
        self.subtype.is_error()
    }

    /// The run's cost, or `None` when it had replies and none of them reported usage: a
    /// cost made of nothing would read as "free".
    pub fn reported_cost_usd(&self) -> Option<f64> {
        self.usage.is_reported().then_some(self.total_cost_usd)
    }

    /// How many of the run's replies reported no usage (they are in none of its counts).
    pub fn unreported_replies(&self) -> u64 {
        self.model_usage
            .values()
            .map(|m| m.unreported_replies)
            .sum()
    }
}
