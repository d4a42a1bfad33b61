//! Teams: a flat group of long-lived agents that talk through mailboxes, coordinated by the
//! session's main agent as lead.
//!
//! Subagents are a hierarchy (a parent delegates and waits); a team is the other dimension. A
//! teammate is an `Agent` call with `name`: it runs in this process, in the background, and
//! lives until it is shut down. After each turn it tells the lead it is idle and sleeps until
//! mail arrives (woken by the mailbox, never by a timer). Everything a member says to another
//! goes through the recipient's durable inbox under `$FLEET_HOME/teams/<team>/inboxes/`, so
//! nothing acknowledged is lost to a crash and another process (`fleet team send`, a session
//! on a `uds:` socket) can write to it too.
//!
//! - [`roster`]: the team of a session: its files, members, mailboxes and events.
//! - [`mate`]: one teammate's life: turns, idle notifications, waiting for mail, shutdown.
//! - [`spawn`]: the Agent tool's teammate mode, and bringing a stopped member back.
//! - [`send`]: SendMessage inside a team (names, `name@team`, the lead, `*`, `uds:`, frames).
//! - [`lead`]: the lead's side of the mailbox: mail into the main agent's conversation.
//! - [`tools`]: TeamCreate, TeamDelete, the shared task list's tools, and a teammate's
//!   ExitPlanMode.
//! - [`uds`]: the Unix socket each session listens on, for messages from other sessions
//!   ([`accept`]: its accept loop, which backs off on errors and ends with the session).
//! - [`pane`]: pane teammates, the lead's side: each its own `fleet` process in a terminal
//!   pane, watched, restarted on the next message, closed with the lead (`pane_mail`: their
//!   frames in the lead's inbox).
//! - [`member`]: pane teammates, their own side: a session that is a member of a team another
//!   session leads.
//! - [`signing`]: the lead's Ed25519 signatures on what it writes to pane teammates, and the
//!   user's own key that signs `fleet team send`.
//! - [`receipts`]: a teammate's word to `fleet team send` on whether it took or refused a
//!   message.
//! - `enlist`: what every new teammate goes through, wherever it runs.
//! - `service`: [`Teams`] as the spawner's `TeamPort` (teams/ builds on subagent/, never the
//!   other way), and the session's entry points: [`restore_team`], [`listen_uds`],
//!   [`join_team`], [`membership`].

pub mod accept;
pub mod clock;
mod enlist;
mod handed;
pub mod lead;
pub mod mate;
pub mod member;
pub mod pane;
mod pane_error;
mod pane_mail;
pub mod receipts;
pub mod roster;
mod roster_error;
pub mod send;
mod service;
mod setup_error;
pub mod signing;
pub mod spawn;
pub mod tools;
pub mod uds;
mod uds_error;

pub use pane_error::{PaneError, RevivalError, RevivalProblem};
pub use roster::{Team, Teams};
pub use roster_error::RosterError;
pub use service::{join_team, listen_uds, membership, restore_team};
pub use setup_error::{SecretEnvError, TeamSetupError};
pub use uds_error::{ListenError, TargetError, UdsSendError};

use fleet_store::FleetHome;

/// The lead's member name, as in Claude Code's team files.
pub const LEAD_NAME: &str = "team-lead";

/// The tools only a team has. Plain subagents get none of them.
pub const TEAM_TOOLS: [&str; 6] = [
    "TeamCreate",
    "TeamDelete",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
];

/// How a session's team behaves.
#[derive(Debug, Clone)]
pub struct TeamSettings {
    /// Where team files, inboxes and task lists live.
    pub home: FleetHome,
    /// The lead's session id: the implicit team is `session-<first 8 of it>`.
    pub session_id: String,
    /// Approve a plan-mode teammate's plan as soon as it is submitted (off by default: the lead
    /// decides, with `SendMessage` `plan_approval_response`).
    pub auto_approve_plans: bool,
    /// Listen on `$FLEET_HOME/sockets/<session>.sock` for `uds:` messages.
    pub listen: bool,
    /// Where teammates run when not in this process: `None` keeps them in-process.
    pub panes: Option<PaneSettings>,
}

/// How pane teammates are started: the terminal that hosts them and the `fleet` command
/// line they run.
#[derive(Debug, Clone)]
pub struct PaneSettings {
    pub backend: std::sync::Arc<dyn crate::backends::PaneBackend>,
    /// The `fleet` program (this binary, or `FLEET_TEAMMATE_COMMAND`).
    pub program: std::path::PathBuf,
    /// Arguments every teammate gets before its identity (settings layers, MCP configs, …).
    pub args: Vec<String>,
    /// Variables for its process (where the API is, `FLEET_HOME`, …).
    pub env: Vec<(String, String)>,
    /// Variables too secret for a command line or the terminal's environment (API keys):
    /// handed over in an owner-only file the teammate reads once.
    pub secret_env: Vec<(String, String)>,
}

/// The colors teammates get in spawn order (the lead is red).
pub const COLORS: [&str; 8] = [
    "blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red",
];
