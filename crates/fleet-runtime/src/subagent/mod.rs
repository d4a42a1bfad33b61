//! Subagents: the Agent tool and what it shares across a session.
//!
//! A [`Spawner`] is made once per session. It holds what every subagent needs — the model
//! client, the agent definitions, the tools, the task registry, the ledger and the limits —
//! and hands out tool pools in which the Agent, TaskStop and TaskOutput tools are bound to the
//! agent that holds them ([`ParentView`]), so a spawn always knows who its parent is without
//! any global state.

mod build;
mod directory;
mod equip;
mod fork;
mod input;
mod isolate;
mod lifecycle;
pub(crate) mod mcp;
mod message;
mod message_from_lead;
mod plan_exit;
mod pool;
mod remote;
mod report;
mod run;
mod scoped;
mod tap;
mod tool;
mod waiting;

pub(crate) use build::{Blueprint, Kind, MemberSpec, Start};
pub use fork::{
    fork_history, fork_prompt, instruction as fork_instruction, is_fork_conversation, ForkBase,
    ForkPoint, ForkSource, FORK_TAG, FORK_TYPE, PLACEHOLDER_RESULT,
};
pub use input::{AgentInput, Features, Orchestration};
pub(crate) use lifecycle::Run;
pub use message::{MessageBody, SendMessageInput, SendMessageTool, Structured};
pub use plan_exit::{MainExitPlanMode, APPROVED as PLAN_APPROVED};
pub use tool::AgentTool;

/// The tools that direct other agents. Coordinator workers get none of them: only the
/// coordinator starts, messages and stops workers.
pub const ORCHESTRATION_TOOLS: [&str; 4] = ["Agent", "SendMessage", "TaskStop", "TaskOutput"];

use crate::approval::Approver;
use crate::config::AgentConfig;
use crate::definitions::{AgentCatalog, AgentDefinition, ModelSetting, Restriction};
use crate::inbox::Inbox;
use crate::ledger::Ledger;
use crate::limits::{Slots, SpawnLimits};
use crate::sink::EventSink;
use crate::tasks::TaskRegistry;
use fleet_model::{Catalog, ModelClient};
use fleet_protocol::ToolDefinition;
use fleet_store::FleetHome;
use fleet_tools::permissions::{PermissionMode, Permissions};
use fleet_tools::sandbox::SandboxConfig;
use fleet_tools::{ToolPool, Workspace};
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

/// What a session's spawner is made from.
pub struct SpawnerConfig {
    pub client: Arc<dyn ModelClient>,
    pub catalog: Arc<Catalog>,
    pub agents: Arc<AgentCatalog>,
    /// The tools subagents are built from (the built-ins): a child gets the ones its
    /// definition names and its parent holds.
    pub base_tools: ToolPool,
    /// System prompt blocks every subagent gets after its own prompt (environment,
    /// instruction files).
    pub shared_system: Vec<String>,
    pub workspace: Arc<Workspace>,
    pub limits: SpawnLimits,
    /// `--max-budget-usd`, binding the whole tree.
    pub max_budget_usd: Option<f64>,
    /// `FLEET_SUBAGENT_MODEL`: every subagent's model, whatever else says.
    pub model_override: Option<String>,
    /// Whether `sonnet`/`opus`/`haiku` name models of this provider (Anthropic). Elsewhere
    /// (a local server) a definition asking for one of them gets its parent's model.
    pub resolve_aliases: bool,
    pub features: Features,
    /// The output limit the user set for every agent (`--max-output-tokens`); `None` gives
    /// each child its model's own (see [`crate::output_limit`]).
    pub max_tokens: Option<u32>,
    pub transcripts: Option<TranscriptTarget>,
    /// The session's sandbox settings; each child gets an [`AgentSandbox`] of its kind from
    /// them.
    ///
    /// [`AgentSandbox`]: fleet_tools::sandbox::AgentSandbox
    pub sandbox: Arc<SandboxConfig>,
    /// Teams: `Agent` with `name` starts a teammate. `None` keeps names for plain subagents.
    pub teams: Option<crate::teams::TeamSettings>,
    /// Where isolated agents' worktrees are made; `None` refuses `isolation: worktree`.
    pub worktrees: Option<Arc<crate::isolation::WorktreeManager>>,
    /// The session's MCP configuration and started servers, for agents that name servers.
    pub mcp: Option<Arc<McpSession>>,
    /// The session's skills: listed to agents holding the Skill tool, preloaded by `skills`.
    pub skills: Arc<crate::skills::SkillSet>,
    /// The session's effort, for children whose definition sets none.
    pub effort: Option<crate::definitions::Effort>,
    /// The session's hooks (from settings files); every agent runs them, and an agent started
    /// from a definition adds its own.
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
    /// Remote workers for `isolation: "remote"`; `None` refuses it, naming how to set one up.
    pub remote: Option<Arc<dyn crate::remote::RemoteLauncher>>,
}

/// The session's MCP servers as children need them: what is configured, and what started.
#[derive(Debug)]
pub struct McpSession {
    pub config: crate::mcp::config::McpConfig,
    pub servers: crate::mcp::McpServers,
}

impl SpawnerConfig {
    /// The built-in tools, default limits, no budget and no transcripts; set the rest with
    /// struct update syntax.
    pub fn new(
        client: Arc<dyn ModelClient>,
        catalog: Arc<Catalog>,
        agents: Arc<AgentCatalog>,
        workspace: Arc<Workspace>,
    ) -> Self {
        Self {
            client,
            catalog,
            agents,
            base_tools: ToolPool::builtin(),
            shared_system: Vec::new(),
            workspace,
            limits: SpawnLimits::default(),
            max_budget_usd: None,
            model_override: None,
            resolve_aliases: true,
            features: Features::default(),
            max_tokens: None,
            transcripts: None,
            sandbox: Arc::default(),
            teams: None,
            worktrees: None,
            mcp: None,
            skills: Arc::default(),
            effort: None,
            hooks: None,
            remote: None,
        }
    }
}

impl std::fmt::Debug for SpawnerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnerConfig")
            .field("agents", &self.agents.names())
            .field("limits", &self.limits)
            .field("max_budget_usd", &self.max_budget_usd)
            .finish_non_exhaustive()
    }
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
    config: SpawnerConfig,
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
    /// The session's team, when teams are on.
    teams: Option<Arc<crate::teams::Teams>>,
    /// The main agent as a parent (teammates are its members).
    main_view: OnceLock<Arc<ParentView>>,
    /// Team mail the lead's transcript says it read (a resumed session).
    lead_delivered: Mutex<Arc<std::collections::HashSet<String>>>,
    /// Set when this session is a pane teammate of a team another session leads.
    membership: OnceLock<Arc<crate::teams::member::Membership>>,
}

impl Spawner {
    /// `sink` is the session's event stream (stamped as the main agent); subagents and tasks
    /// report into it.
    pub fn new(config: SpawnerConfig, sink: EventSink) -> Arc<Self> {
        let ledger = Arc::new(Ledger::new());
        let tasks = Arc::new(TaskRegistry::new(sink.clone(), ledger.clone()));
        let teams = config.teams.clone().map(|settings| {
            Arc::new(crate::teams::Teams::new(
                settings,
                sink.clone(),
                ledger.clone(),
            ))
        });
        Arc::new(Self {
            teams,
            main_view: OnceLock::new(),
            lead_delivered: Mutex::default(),
            membership: OnceLock::new(),
            slots: Slots::new(config.limits.max_concurrent),
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

    /// The session's teams, when they are on.
    pub fn teams(&self) -> Option<&Arc<crate::teams::Teams>> {
        self.teams.as_ref()
    }

    /// The team this session is a pane teammate of, if it is one.
    pub fn membership(&self) -> Option<&Arc<crate::teams::member::Membership>> {
        self.membership.get()
    }

    pub(crate) fn set_membership(
        &self,
        member: Arc<crate::teams::member::Membership>,
    ) -> Result<(), String> {
        self.membership
            .set(member)
            .map_err(|_| "this session already joined a team".to_string())
    }

    pub(crate) fn set_lead_delivered(&self, ids: std::collections::HashSet<String>) {
        *self
            .lead_delivered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(ids);
    }

    pub(crate) fn lead_delivered(&self) -> Arc<std::collections::HashSet<String>> {
        self.lead_delivered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn main_view(&self) -> Option<Arc<ParentView>> {
        self.main_view.get().cloned()
    }

    /// Whether the session's team has work going on (see [`crate::teams::Team::busy`]).
    pub fn team_busy(&self) -> bool {
        self.teams
            .as_ref()
            .and_then(|t| t.current())
            .is_some_and(|team| team.busy())
    }

    /// Stops every teammate (the session is ending); returns how many were running.
    pub async fn stop_team(&self) -> usize {
        match self.teams.as_ref().and_then(|t| t.current()) {
            Some(team) => self.shutdown_team(&team).await,
            None => 0,
        }
    }

    /// The team's change count (see [`crate::teams::Team::version`]); 0 without a team.
    pub fn team_version(&self) -> u64 {
        self.teams
            .as_ref()
            .and_then(|t| t.current())
            .map_or(0, |team| team.version())
    }

    /// Wakes once the team has changed since `seen` (or a team appears).
    pub async fn team_changed_since(&self, seen: u64) {
        match self.teams.as_ref().and_then(|t| t.current()) {
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
        &self.config.agents
    }

    pub fn max_budget_usd(&self) -> Option<f64> {
        self.config.max_budget_usd
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
        if !self.config.features.coordinator() {
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
        config.inbox = Some(self.main_inbox.clone());
        config.ledger = Some(self.ledger.clone());
        config.hooks = self.config.hooks.clone();
        if self.config.features.fork() {
            config.fork_source = Some(self.main_fork_source.clone());
        }
    }

    pub fn features(&self) -> Features {
        let mut features = self.config.features;
        features.teams = self.teams.is_some();
        features.isolation = self.config.worktrees.is_some() || self.config.remote.is_some();
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

    /// The model a child runs: `FLEET_SUBAGENT_MODEL`, else the call's `model`, else the
    /// definition's, else the parent's.
    pub(crate) fn child_model(
        &self,
        parent: &ParentView,
        def: &AgentDefinition,
        requested: Option<&str>,
    ) -> String {
        let named = self
            .config
            .model_override
            .clone()
            .or_else(|| requested.map(str::to_string))
            .or_else(|| match &def.model {
                Some(ModelSetting::Named(name)) => Some(name.clone()),
                Some(ModelSetting::Inherit) | None => None,
            });
        match named {
            None => parent.model.clone(),
            Some(name) if self.config.resolve_aliases => self.config.catalog.resolve_id(&name),
            Some(name) if is_claude_alias(&name) => parent.model.clone(),
            Some(name) => name,
        }
    }
}

fn is_claude_alias(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "sonnet" | "opus" | "haiku" | "inherit"
    )
}

/// A fresh subagent id: `a` and 16 hex digits, like Claude Code's, safe in file names.
pub(crate) fn new_agent_id() -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("a{}", &uuid[..16])
}
