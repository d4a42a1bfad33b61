//! The boundary between the UI and the driver that owns the session (`fleet-cli`'s
//! `interactive` module). The driver sends [`UiEvent`]s: every `AgentEvent` of the session,
//! and the few things only a person is asked or told. The UI answers with [`UiCommand`]s.
//! Both travel on tokio channels, so the UI can be tested with no session at all, and the
//! driver with no terminal.

use fleet_protocol::{AgentEvent, AgentRef, Message, PermissionMode, ProposedChange};
use serde_json::Value;

/// What the driver tells the UI. Agent events dominate and are moved, never stored in
/// bulk here (the channel is bounded), so boxing them would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum UiEvent {
    /// One event of the session, any agent's.
    Agent(AgentEvent),
    /// A tool call waits for the person's yes or no.
    Permission(PermissionAsk),
    /// A permission question was answered elsewhere or withdrawn (the agent was cancelled).
    PermissionWithdrawn { id: u64 },
    /// The conversation so far, when a session is resumed (`-c`, `-r`, `/resume`); the
    /// transcript is replaced by it.
    History(Vec<Message>),
    /// A line for the person: a command's answer, a warning, an error.
    Notice { level: NoticeLevel, text: String },
    /// A `!command` ran.
    ShellDone {
        command: String,
        output: String,
        exit_code: Option<i32>,
    },
    /// The session's settings changed (model, permission mode, context use).
    Status(StatusUpdate),
    /// Choices for a picker the person asked for (`/resume`, `/model`).
    Choices {
        kind: PickerKind,
        items: Vec<Choice>,
    },
    /// `/clear` took effect: a new, empty conversation.
    Cleared,
    /// This session is a teammate in its own pane: the header names it and its team, and
    /// mail from the lead and peers is shown as mail.
    Identity(TeammateIdentity),
    /// The Ultraplan session's phase for its footer pill; `None` when there is none.
    Ultraplan(Option<crate::panes::ultraplan::UltraplanPill>),
    /// A submitted prompt the session will not take up (it launched Ultraplan instead): it
    /// leaves the queue of prompts waiting.
    PromptTaken(String),
}

/// Who a pane teammate is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeammateIdentity {
    /// Its member name (`alpha`).
    pub name: String,
    pub team: String,
    /// Its color (`blue`, …), also its pane border's.
    pub color: String,
    /// The agent definition it runs (`general-purpose`, …).
    pub agent_type: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// Only what changed is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusUpdate {
    pub model: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    /// Share of the context window in use, 0–100.
    pub context_percent: Option<u8>,
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    /// This folder's sessions; `Choice::id` is the session id.
    Sessions,
    /// Models; `Choice::id` is the model name.
    Models,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub id: String,
    /// One line: what the person recognises it by.
    pub label: String,
    /// Dimmed after the label (a date, a size).
    pub detail: String,
}

/// One call waiting for an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionAsk {
    /// The driver's id for this question; answers name it.
    pub id: u64,
    /// Who asks: the main agent, or a subagent / background agent (labelled with its type
    /// and description).
    pub agent: AgentRef,
    pub tool: String,
    pub input: Value,
    /// The check's description of the call ("Bash command `rm -rf build`").
    pub description: String,
    /// The rule "allow always" would write to `.claude/settings.local.json`, when one covers
    /// the call.
    pub suggested_rule: Option<String>,
    /// A pane teammate can hand the question to its lead ([`PermissionAnswer::AskLead`]).
    pub forwardable: bool,
    /// What a Write or Edit would change, worked out by the tool before asking: the box
    /// shows it as a diff with the file's line numbers.
    pub change: Option<ProposedChange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    AllowOnce,
    /// Allow, and write the suggested rule to `.claude/settings.local.json`.
    AllowAlways,
    Deny,
    /// Deny, and tell the model why or what to do instead.
    DenyWithFeedback(String),
    /// Hand the question to the team's lead and its person; their answer comes back by mail.
    AskLead,
}

/// What the UI asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum UiCommand {
    /// A prompt for the main agent (custom commands already expanded, pastes inlined).
    Submit(String),
    /// `!command`: run it in the session's folder, not through the model.
    Shell(String),
    /// Esc: stop the current turn (its tools are killed; background agents keep running).
    Interrupt,
    /// Ctrl+B: the running foreground subagent or Bash command becomes a background task.
    Background,
    Answer {
        id: u64,
        answer: PermissionAnswer,
    },
    /// `/model <name>`; `None` asks for the choices.
    SetModel(Option<String>),
    /// Shift+Tab or `/permissions mode …`.
    SetPermissionMode(PermissionMode),
    /// `/permissions allow|deny|ask <rule>`; `None` lists the rules.
    EditRule(Option<RuleEdit>),
    StopTask(String),
    /// SendMessage from the task panel.
    MessageTask {
        task_id: String,
        text: String,
    },
    /// `/clear`: start a new conversation.
    Clear,
    /// `/compact [instructions]`.
    Compact(Option<String>),
    /// `/resume [id]`; `None` asks for this folder's sessions.
    Resume(Option<String>),
    /// `/mcp`: the servers and their state.
    McpStatus,
    /// `/agents`: the agent types the session knows.
    ListAgents,
    /// `/agents new`: write `.claude/agents/<name>.md`.
    CreateAgent(NewAgent),
    /// Leave; `stop_background` says whether running tasks are stopped or left to finish.
    Quit {
        stop_background: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEdit {
    /// `allow`, `deny` or `ask`.
    pub kind: String,
    pub rule: String,
    /// Remove it instead of adding it.
    pub remove: bool,
}

/// The short form `/agents new` fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAgent {
    pub name: String,
    pub description: String,
    /// Comma-separated tool names; empty for all tools.
    pub tools: String,
    pub prompt: String,
    /// `project` (.claude/agents) or `user` (~/.claude/agents).
    pub scope: String,
}
