//! The JSON the dashboard's HTTP API speaks: the contract between the server (Rust) and the
//! page (`assets/`). Every field name here is what the browser sees (`snake_case`); the page
//! must treat every string as text (never HTML), since it comes from models and repositories.
//!
//! Routes (all need the token: `?token=T` or `Authorization: Bearer T`; 401 otherwise):
//! - `GET /` — the page (HTML with its CSS and JS inlined; no other asset requests).
//! - `GET /api/sessions` — `Vec<SessionSummary>`, newest first.
//! - `GET /api/sessions/events` — server-sent events: `event: sessions` with the whole
//!   `Vec<SessionSummary>` at once, then again whenever the list changes (a session starts
//!   or ends, or its summary moves); `:` keep-alive comments between. The page keeps it open
//!   all the time, so it learns of new sessions without polling.
//! - `GET /api/sessions/{id}` — `Snapshot` of one session.
//! - `GET /api/sessions/{id}/events` — server-sent events: `event: batch`, `data:` one
//!   [`Batch`] (JSON), at most one per 200 ms and one per change; `event: sessions` with a
//!   `Vec<SessionSummary>` when the list changes. A reconnecting client sends `?since=SEQ`
//!   and gets a fresh `Snapshot` first (`event: snapshot`) when it fell too far behind.
//! - `GET /api/sessions/{id}/agents/{agent_id}/transcript?after=N` — [`TranscriptPage`];
//!   `GET …/transcript/events?after=N` streams `event: entries` with a `TranscriptPage`.
//! - `POST /api/sessions/{id}/tasks/{task_id}/stop` — stop a background agent or teammate.
//! - `POST /api/teams/{team}/members/{member}/messages` with [`SendMessage`] — signed mail,
//!   as `fleet team send` sends it; answers [`ActionResult`].
//! - `POST /api/sessions/{id}/permissions/{request_id}` with [`PermissionAnswer`] — only for
//!   a session started with `--dashboard`.
//!
//! POSTs also need an `Origin` header equal to the page's own origin (`http://HOST:PORT`);
//! 403 otherwise. Errors are `{"error": "…"}` with a 4xx/5xx status.

use serde::{Deserialize, Serialize};

/// One row of the session list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    /// The folder the session ran in.
    pub folder: String,
    /// Unix milliseconds.
    pub started_ms: u64,
    /// Unix milliseconds of the last thing written or seen.
    pub updated_ms: u64,
    pub state: SessionState,
    pub model: Option<String>,
    /// Agents in the session's tree, the main agent included.
    pub agents: u64,
    pub cost_usd: f64,
    /// The first prompt, cut to 120 characters.
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Events are arriving (or the session was started with `--dashboard` and runs).
    Live,
    Ended,
}

/// Everything the page needs to draw a session at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub session: SessionSummary,
    /// The sequence number of the last change included; batches continue from it.
    pub seq: u64,
    pub agents: Vec<AgentNode>,
    pub teams: Vec<Team>,
    pub worktrees: Vec<Worktree>,
    pub remote_jobs: Vec<RemoteJob>,
    /// Cost and tokens over time, oldest first.
    pub usage: Vec<UsagePoint>,
    /// Tool calls as marks on the timeline, oldest first (at most 20,000 kept; older ones
    /// are dropped first).
    pub marks: Vec<ToolMark>,
    /// Permission questions waiting for an answer (only with `--dashboard`).
    pub pending_permissions: Vec<PermissionRequest>,
    /// Whether actions that need the live session (stop, answer) are available.
    pub actions: Actions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Actions {
    pub stop_task: bool,
    pub answer_permission: bool,
    pub message_member: bool,
}

/// One agent of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentNode {
    /// `main` for the main agent.
    pub id: String,
    /// `None` for the main agent.
    pub parent_id: Option<String>,
    pub kind: AgentKind,
    /// `general-purpose`, `Explore`, a definition's name, … (`main` for the main agent).
    pub agent_type: String,
    pub description: Option<String>,
    pub state: AgentState,
    /// The tool running now, with `state == running_tool`.
    pub tool: Option<String>,
    /// The task id that stops it (background agents, teammates), if it can be stopped.
    pub task_id: Option<String>,
    /// `name@team` for teammates.
    pub team_member: Option<String>,
    pub turns: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
    /// Why it failed or was killed, when it did.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    Main,
    Subagent,
    Background,
    Fork,
    Teammate,
    Remote,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Running,
    WaitingForModel,
    RunningTool,
    WaitingForApproval,
    Idle,
    Done,
    Failed,
    Killed,
}

/// A change since the last batch: agents whose fields changed are sent whole.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Batch {
    pub seq: u64,
    /// Unix ms when the newest change in this batch happened in the session (for measuring
    /// event-to-page latency; the page records when it drew the batch).
    pub newest_event_ms: Option<u64>,
    pub session: Option<SessionSummary>,
    pub agents: Vec<AgentNode>,
    pub teams: Vec<Team>,
    pub worktrees: Vec<Worktree>,
    pub remote_jobs: Vec<RemoteJob>,
    pub usage: Vec<UsagePoint>,
    pub marks: Vec<ToolMark>,
    /// Replaces the whole list when `Some`.
    pub pending_permissions: Option<Vec<PermissionRequest>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsagePoint {
    pub t_ms: u64,
    /// Running totals of the whole session.
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMark {
    pub agent_id: String,
    pub t_ms: u64,
    pub tool: String,
    pub is_error: bool,
}

/// A team: sent whole when anything in it changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Team {
    pub name: String,
    pub members: Vec<TeamMember>,
    /// The newest 500 messages, oldest first.
    pub messages: Vec<TeamMessage>,
    pub tasks: Vec<TeamTask>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamMember {
    pub name: String,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// `active`, `idle`, `stopped`, … as the team file says.
    pub status: String,
    pub color: Option<String>,
    /// `in-process`, `tmux`, `iterm2` or `remote`.
    pub backend: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamMessage {
    pub id: String,
    pub from: String,
    pub to: String,
    /// `message`, `broadcast`, `shutdown_request`, `shutdown_approved`,
    /// `plan_approval_request`, `plan_approval_response`, `idle_notification`, …
    pub kind: String,
    pub summary: String,
    pub t_ms: u64,
    pub read: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamTask {
    pub id: String,
    pub subject: String,
    /// `pending`, `in_progress`, `completed`.
    pub status: String,
    pub owner: Option<String>,
    pub blocked_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worktree {
    pub path: String,
    pub branch: Option<String>,
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteJob {
    pub id: String,
    pub agent_id: Option<String>,
    pub worker: Option<String>,
    pub attempt: u32,
    pub state: String,
    /// What the job was asked to do, as the broker's record says (`None` until a broker
    /// record is seen).
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub id: String,
    pub agent_id: String,
    pub tool: String,
    /// What the prompt shows (command, path, diff as text).
    pub summary: String,
}

/// A page of an agent's conversation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TranscriptPage {
    pub entries: Vec<TranscriptEntry>,
    /// Pass as `after` to get what follows.
    pub next: u64,
    /// The agent has ended and nothing more will come.
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TranscriptEntry {
    User {
        text: String,
        t_ms: Option<u64>,
    },
    Assistant {
        text: String,
        t_ms: Option<u64>,
    },
    Thinking {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        /// The input as pretty JSON text.
        input: String,
        /// For Edit/Write/MultiEdit: the change as unified-diff lines (`+`, `-`, ` `).
        diff: Option<Vec<String>>,
    },
    ToolResult {
        tool_use_id: String,
        /// Cut to 20,000 characters (`truncated` says so).
        text: String,
        is_error: bool,
        truncated: bool,
    },
    System {
        text: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessage {
    pub text: String,
    pub summary: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionAnswer {
    pub decision: Decision,
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResult {
    pub ok: bool,
    pub message: String,
}
