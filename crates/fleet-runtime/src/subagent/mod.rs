//! Subagents: the Agent tool and what it shares across a session.
//!
//! A [`Spawner`] is made once per session. It keeps the delegation logic — what a child runs
//! as, admitting it under the limits, building it, running it in the foreground or as a task,
//! resuming it — with its own settings ([`Delegation`]: the model client, the agent
//! definitions, the tools, the limits), and holds the session's [`Services`], which own their
//! state: the task registry, the ledger, isolation, the MCP pool, the remote launcher and the
//! team service (seen only through [`TeamPort`]: this module does not import `teams/`). It
//! hands out tool pools in which the Agent, TaskStop and TaskOutput tools are bound to the
//! agent that holds them ([`ParentView`]), so a spawn always knows who its parent is without
//! any global state.

mod admission;
mod build;
mod delegation;
mod directory;
mod equip;
mod fork;
mod input;
mod isolate;
mod lifecycle;
pub(crate) mod mcp;
pub use mcp::{McpPool, McpSession};
mod message;
mod message_from_lead;
mod plan_exit;
mod pool;
mod remote;
mod report;
mod run;
mod scoped;
mod shells;
mod tap;
mod team_port;
mod tool;
mod waiting;

pub(crate) use build::{Blueprint, Kind, MemberSpec, Start};
pub use delegation::Delegation;
pub use fork::{
    fork_history, fork_prompt, instruction as fork_instruction, is_fork_conversation, ForkBase,
    ForkPoint, ForkSource, FORK_TAG, FORK_TYPE, PLACEHOLDER_RESULT,
};
pub use input::{AgentInput, Features, InputProblem, Orchestration};
pub(crate) use lifecycle::Run;
pub use message::{MessageBody, SendMessageInput, SendMessageTool, Structured};
pub use message_from_lead::LeadMessageError;
pub use plan_exit::{MainExitPlanMode, APPROVED as PLAN_APPROVED};
pub(crate) use shells::SessionShells;
pub use team_port::TeamPort;
pub use tool::AgentTool;

/// The tools that direct other agents. Coordinator workers get none of them: only the
/// coordinator starts, messages and stops workers.
pub const ORCHESTRATION_TOOLS: [&str; 4] = ["Agent", "SendMessage", "TaskStop", "TaskOutput"];

use crate::approval::Approver;
use crate::config::AgentConfig;
use crate::definitions::{AgentCatalog, Restriction};
use crate::inbox::Inbox;
use crate::isolation::Isolator;
use crate::ledger::Ledger;
use crate::limits::Slots;
use crate::remote::RemoteLauncher;
use crate::sink::EventSink;
use crate::tasks::TaskRegistry;
use fleet_protocol::ToolDefinition;
use fleet_store::FleetHome;
use fleet_tools::permissions::{PermissionMode, Permissions};
use fleet_tools::ToolPool;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Where subagent transcripts go: `projects/<project>/<session>/subagents/`.
#[derive(Debug, Clone)]
pub struct TranscriptTarget {
    pub home: FleetHome,
    /// The project folder the session belongs to (its cwd).
    pub project: PathBuf,
    pub session_id: String,
}

/// The session's services the spawner delegates to; each owns its state, and the session
/// holds them too.
pub struct Services {
    /// Background tasks: registered, followed, stopped, reported.
    pub tasks: Arc<TaskRegistry>,
    /// The tree's figures: who runs, at what depth, for what cost.
    pub ledger: Arc<Ledger>,
    /// Worktrees and verifier snapshots for isolated children.
    pub isolation: Arc<Isolator>,
    /// Remote workers for `isolation: "remote"`; `None` refuses it, naming how to set one up.
    pub remote: Option<Arc<dyn RemoteLauncher>>,
    /// The session's MCP servers, and those children start for themselves.
    pub mcp: Arc<McpPool>,
    /// The team service, when teams are on: `Agent` with `name` starts a teammate. `None`
    /// keeps names for plain subagents.
    pub team: Option<Arc<dyn TeamPort>>,
}

/// What a child needs to know about the agent that starts it.
pub struct ParentView {
    pub agent_id: String,
    pub depth: u32,
    pub model: String,
    pub permissions: Arc<Permissions>,
    /// The tools the agent holds.
    tool_names: OnceLock<Vec<String>>,
    /// The tools its children may be given: those it holds, except for a coordinator, which
    /// holds none of the tools its workers need.
    grantable: OnceLock<Vec<String>>,
    /// Where notifications of the agent's background tasks are delivered.
    pub inbox: Arc<Inbox>,
    /// Who answers "ask" decisions for the agent; a foreground child asks the same person.
    pub approver: Option<Arc<dyn Approver>>,
    pub cwd: PathBuf,
    /// The agent's latest conversation, for forking it.
    pub fork_source: Arc<ForkSource>,
    /// Where a scratch-only agent may write, when not the system temp folder (a verifier's
    /// snapshot worktree).
    pub scratch: Option<PathBuf>,
}

impl std::fmt::Debug for ParentView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParentView")
            .field("agent_id", &self.agent_id)
            .field("depth", &self.depth)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ParentView {
    pub fn tool_names(&self) -> &[String] {
        self.tool_names.get().map(Vec::as_slice).unwrap_or_default()
    }

    /// A child never gets a tool that is not here.
    pub fn grantable(&self) -> &[String] {
        self.grantable
            .get()
            .or(self.tool_names.get())
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// The main agent's side of [`Spawner::main_tools`].
pub struct MainAgent {
    pub model: String,
    pub permissions: Arc<Permissions>,
    pub approver: Option<Arc<dyn Approver>>,
    pub cwd: PathBuf,
}

#[derive(Debug)]
pub struct Spawner {
    config: Delegation,
    sink: EventSink,
    tasks: Arc<TaskRegistry>,
    ledger: Arc<Ledger>,
    slots: Slots,
    main_inbox: Arc<Inbox>,
    /// Team mail for the lead: read only between the lead's runs, as a teammate reads its
    /// own, so a batch of messages is one turn rather than a break in the middle of one.
    team_inbox: Arc<Inbox>,
    main_fork_source: Arc<ForkSource>,
    directory: directory::Directory,
    /// Tool definitions by pool shape: most subagents share a handful of shapes, and deriving
    /// schemas is the costly part of starting one.
    definitions: Mutex<HashMap<String, Arc<Vec<ToolDefinition>>>>,
    /// The session's team service, when teams are on.
    team: Option<Arc<dyn TeamPort>>,
    isolation: Arc<Isolator>,
    remote: Option<Arc<dyn RemoteLauncher>>,
    mcp: Arc<McpPool>,
    /// The main agent as a parent (teammates are its members).
    main_view: OnceLock<Arc<ParentView>>,
}

impl Spawner {
    /// A spawner that builds children as `config` says and delegates to `services`. `sink`
    /// is the session's event stream (stamped as the main agent); subagents and tasks report
    /// into it.
    pub fn with_services(config: Delegation, services: Services, sink: EventSink) -> Arc<Self> {
        let Services {
            tasks,
            ledger,
            isolation,
            remote,
            mcp,
            team,
        } = services;
        Arc::new(Self {
            team,
            isolation,
            remote,
            mcp,
            main_view: OnceLock::new(),
            slots: Slots::new(config.limits.spawn.max_concurrent),
            config,
            sink,
            tasks,
            ledger,
            main_inbox: Arc::new(Inbox::new()),
            team_inbox: Arc::new(Inbox::new()),
            main_fork_source: Arc::default(),
            directory: directory::Directory::default(),
            definitions: Mutex::new(HashMap::new()),
        })
    }

    /// The session's team service, when teams are on.
    pub fn team_port(&self) -> Option<&Arc<dyn TeamPort>> {
        self.team.as_ref()
    }

    /// The spawner's own settings.
    pub fn settings(&self) -> &Delegation {
        &self.config
    }

    /// The session's MCP pool.
    pub(crate) fn mcp(&self) -> &Arc<McpPool> {
        &self.mcp
    }

    /// The session's isolation service.
    pub(crate) fn isolation(&self) -> &Arc<Isolator> {
        &self.isolation
    }

    pub(crate) fn main_view(&self) -> Option<Arc<ParentView>> {
        self.main_view.get().cloned()
    }

    /// Whether the session's team has work going on (see [`TeamPort::busy`]).
    pub fn team_busy(&self) -> bool {
        self.team.as_ref().is_some_and(|team| team.busy())
    }

    /// Stops every teammate (the session is ending); returns how many were running.
    pub async fn stop_team(&self) -> usize {
        match &self.team {
            Some(team) => team.stop_all().await,
            None => 0,
        }
    }

    /// The team's change count (see [`TeamPort::version`]); 0 without a team.
    pub fn team_version(&self) -> u64 {
        self.team.as_ref().map_or(0, |team| team.version())
    }

    /// Wakes once the team has changed since `seen` (or a team appears).
    pub async fn team_changed_since(&self, seen: u64) {
        match &self.team {
            Some(team) => team.changed_since(seen).await,
            None => std::future::pending().await,
        }
    }

    pub fn tasks(&self) -> &Arc<TaskRegistry> {
        &self.tasks
    }

    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    pub fn main_inbox(&self) -> &Arc<Inbox> {
        &self.main_inbox
    }

    /// Where the lead's team mail waits for its next run.
    pub fn team_inbox(&self) -> &Arc<Inbox> {
        &self.team_inbox
    }

    pub fn agents(&self) -> &AgentCatalog {
        &self.config.children.agents
    }

    pub fn max_budget_usd(&self) -> Option<f64> {
        self.config.limits.max_budget_usd
    }

    /// The main agent's tools: the base tools plus Agent, SendMessage, TaskStop and
    /// TaskOutput, keeping those `keep` accepts (the `--tools` / `--disallowedTools` choice).
    /// In coordinator mode only Agent, SendMessage and TaskStop; the base tools `keep`
    /// accepts are then what workers may be given. Registers the main agent in the ledger.
    pub fn main_tools(self: &Arc<Self>, main: MainAgent, keep: impl Fn(&str) -> bool) -> ToolPool {
        self.ledger.register("main", "main", None, 0, &main.model);
        let view = Arc::new(ParentView {
            agent_id: "main".into(),
            depth: 0,
            model: main.model,
            permissions: main.permissions,
            tool_names: OnceLock::new(),
            grantable: OnceLock::new(),
            inbox: self.main_inbox.clone(),
            approver: main.approver,
            cwd: main.cwd,
            fork_source: self.main_fork_source.clone(),
            scratch: None,
        });
        let _ = self.main_view.set(view.clone());
        if !self.config.children.features.coordinator() {
            // A teammate's ExitPlanMode goes to its lead; the main agent has none above it,
            // and presents its plan to the person instead when the session starts in plan mode.
            let mut pool = self.assemble(
                &view,
                |name| keep(name) && name != "ExitPlanMode",
                Restriction::None,
            );
            if view.permissions.mode() == PermissionMode::Plan && keep("ExitPlanMode") {
                pool.insert(Arc::new(MainExitPlanMode::new(view.permissions.clone())));
            }
            return pool;
        }
        let _ = view.grantable.set(self.worker_tools(&keep));
        self.assemble(
            &view,
            |name| matches!(name, "Agent" | "SendMessage" | "TaskStop"),
            Restriction::None,
        )
    }

    /// The tools a coordinator's workers may have: the base tools `keep` accepts.
    pub fn worker_tools(&self, keep: &impl Fn(&str) -> bool) -> Vec<String> {
        self.config
            .children
            .base_tools
            .names()
            .into_iter()
            .filter(|name| keep(name) && !ORCHESTRATION_TOOLS.contains(name))
            .map(str::to_string)
            .collect()
    }

    /// Connects the main agent's config to the tree: its inbox, the ledger, and (in fork
    /// mode) the copy of its conversation that forks start from.
    pub fn attach_main(&self, config: &mut AgentConfig) {
        let forks = self.config.children.features.fork();
        config.tree = Some(crate::config::TreeLink {
            inbox: self.main_inbox.clone(),
            ledger: self.ledger.clone(),
            fork_source: forks.then(|| self.main_fork_source.clone()),
        });
        config.hooks = self.config.children.hooks.clone();
    }

    pub fn features(&self) -> Features {
        let mut features = self.config.children.features;
        features.teams = self.team.is_some();
        features.isolation = self.isolation.has_worktrees() || self.remote.is_some();
        features
    }

    /// The definitions for `pool`, derived once per pool shape.
    pub(crate) fn definitions_for(&self, pool: &ToolPool, shape: &str) -> Arc<Vec<ToolDefinition>> {
        let mut cache = self
            .definitions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .entry(shape.to_string())
            .or_insert_with(|| Arc::new(pool.definitions()))
            .clone()
    }
}

/// A fresh subagent id: `a` and 16 hex digits, like Claude Code's, safe in file names.
pub(crate) fn new_agent_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("a{}", &uuid[..16])
}
