//! Wiring a session's spawner: from the [`SpawnerConfig`] a front end fills in, the
//! services that own the session's state (the task registry, the ledger, isolation, the team
//! service) and the spawner that delegates to them.
//!
//! This is the only place that knows both `subagent/` and `teams/`: `teams/` builds on
//! `subagent/`, and `subagent/` sees the team service only through its
//! [`TeamPort`].

use crate::definitions::AgentCatalog;
use crate::isolation::{Isolator, WorktreeManager};
use crate::ledger::Ledger;
use crate::limits::SpawnLimits;
use crate::remote::RemoteLauncher;
use crate::sink::EventSink;
use crate::subagent::{
    Delegation, Features, McpPool, McpSession, Services, Spawner, TeamPort, TranscriptTarget,
};
use crate::tasks::TaskRegistry;
use crate::teams::{TeamSettings, Teams};
use fleet_model::{Catalog, ModelClient};
use fleet_tools::sandbox::SandboxConfig;
use fleet_tools::{ToolPool, Workspace};
use std::sync::Arc;

/// What a session's spawner and its services are made from, in parts that change for
/// different reasons: how children's models are chosen and asked ([`ChildModels`]), what
/// children are built from ([`ChildKit`]), what bounds the tree ([`TreeLimits`]), where the
/// work and the records are ([`SpawnPlaces`]), and the services a session may go without
/// ([`OptionalServices`]).
///
/// [`SpawnerConfig::new`] fills every part with its default, so a caller sets only what
/// differs (`config.children.features = …`).
pub struct SpawnerConfig {
    pub models: ChildModels,
    pub children: ChildKit,
    pub limits: TreeLimits,
    pub places: SpawnPlaces,
    pub services: OptionalServices,
}

/// Which model a child runs and how it is asked: the provider's settings, which change with
/// the session's model choice and flags, not with what children are made of.
pub struct ChildModels {
    pub client: Arc<dyn ModelClient>,
    pub catalog: Arc<Catalog>,
    /// `FLEET_SUBAGENT_MODEL`: every subagent's model, whatever else says.
    pub model_override: Option<String>,
    /// Whether `sonnet`/`opus`/`haiku` name models of this provider (Anthropic). Elsewhere
    /// (a local server) a definition asking for one of them gets its parent's model.
    pub resolve_aliases: bool,
    /// The output limit the user set for every agent (`--max-output-tokens`); `None` gives
    /// each child its model's own (see [`crate::output_limit`]).
    pub max_tokens: Option<u32>,
    /// The session's effort, for children whose definition sets none.
    pub effort: Option<crate::definitions::Effort>,
}

impl ChildModels {
    /// `client` with `catalog`'s aliases resolved, no override, no output limit, no effort.
    pub fn new(client: Arc<dyn ModelClient>, catalog: Arc<Catalog>) -> Self {
        Self {
            client,
            catalog,
            model_override: None,
            resolve_aliases: true,
            max_tokens: None,
            effort: None,
        }
    }
}

/// What children are built from: the agent types, their tools and prompts, and the rules they
/// run under. These come from the project's files and settings.
pub struct ChildKit {
    pub agents: Arc<AgentCatalog>,
    /// The tools subagents are built from (the built-ins): a child gets the ones its
    /// definition names and its parent holds.
    pub base_tools: ToolPool,
    /// System prompt blocks every subagent gets after its own prompt (environment,
    /// instruction files).
    pub shared_system: Vec<String>,
    /// The session's skills: listed to agents holding the Skill tool, preloaded by `skills`.
    pub skills: Arc<crate::skills::SkillSet>,
    /// The session's hooks (from settings files); every agent runs them, and an agent started
    /// from a definition adds its own.
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
    /// The session's sandbox settings; each child gets an [`AgentSandbox`] of its kind from
    /// them.
    ///
    /// [`AgentSandbox`]: fleet_tools::sandbox::AgentSandbox
    pub sandbox: Arc<SandboxConfig>,
    pub features: Features,
}

impl ChildKit {
    /// `agents` with the built-in tools, no shared prompt, skills or hooks, the default
    /// sandbox and features.
    pub fn new(agents: Arc<AgentCatalog>) -> Self {
        Self {
            agents,
            base_tools: ToolPool::builtin(),
            shared_system: Vec::new(),
            skills: Arc::default(),
            hooks: None,
            sandbox: Arc::default(),
            features: Features::default(),
        }
    }
}

/// What bounds the whole tree of agents: its shape and its spending.
#[derive(Clone, Debug, Default)]
pub struct TreeLimits {
    /// How deep and how wide the tree may grow.
    pub spawn: SpawnLimits,
    /// `--max-budget-usd`, binding the whole tree.
    pub max_budget_usd: Option<f64>,
}

/// Where children work and where their conversations are kept.
pub struct SpawnPlaces {
    pub workspace: Arc<Workspace>,
    /// Where children's transcripts are written; `None` keeps none (and so nothing to resume).
    pub transcripts: Option<TranscriptTarget>,
}

/// The services a session may run without; each `None` refuses what it would serve, with a
/// message naming how to turn it on.
#[derive(Default)]
pub struct OptionalServices {
    /// Teams: `Agent` with `name` starts a teammate. `None` keeps names for plain subagents.
    pub teams: Option<TeamSettings>,
    /// Where isolated agents' worktrees are made; `None` refuses `isolation: worktree`.
    pub worktrees: Option<Arc<WorktreeManager>>,
    /// The session's MCP configuration and started servers, for agents that name servers.
    pub mcp: Option<Arc<McpSession>>,
    /// Remote workers for `isolation: "remote"`; `None` refuses it, naming how to set one up.
    pub remote: Option<Arc<dyn RemoteLauncher>>,
}

impl SpawnerConfig {
    /// The built-in tools, default limits, no budget, no transcripts and none of the optional
    /// services; set the rest on the parts.
    pub fn new(
        client: Arc<dyn ModelClient>,
        catalog: Arc<Catalog>,
        agents: Arc<AgentCatalog>,
        workspace: Arc<Workspace>,
    ) -> Self {
        Self {
            models: ChildModels::new(client, catalog),
            children: ChildKit::new(agents),
            limits: TreeLimits::default(),
            places: SpawnPlaces {
                workspace,
                transcripts: None,
            },
            services: OptionalServices::default(),
        }
    }
}

impl std::fmt::Debug for SpawnerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnerConfig")
            .field("agents", &self.children.agents.names())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Spawner {
    /// Makes the session's services from `config` and the spawner that delegates to them.
    /// `sink` is the session's event stream (stamped as the main agent); subagents, tasks and
    /// the team report into it.
    pub fn new(config: SpawnerConfig, sink: EventSink) -> Arc<Self> {
        let SpawnerConfig {
            models,
            children,
            limits,
            places,
            services:
                OptionalServices {
                    teams,
                    worktrees,
                    mcp,
                    remote,
                },
        } = config;
        let ledger = Arc::new(Ledger::new());
        let tasks = Arc::new(TaskRegistry::new(sink.clone(), ledger.clone()));
        let team = teams.map(|settings| {
            Arc::new(Teams::new(settings, sink.clone(), ledger.clone())) as Arc<dyn TeamPort>
        });
        let workspace_root = places.workspace.root.clone();
        let isolation = Arc::new(Isolator::new(
            worktrees,
            children.hooks.clone(),
            places
                .transcripts
                .as_ref()
                .map(|t| t.session_id.clone())
                .unwrap_or_default(),
            sink.clone(),
        ));
        let delegation = Delegation {
            models,
            children,
            limits,
            places,
        };
        let services = Services {
            tasks,
            ledger,
            isolation,
            remote,
            mcp: Arc::new(McpPool::new(mcp, workspace_root)),
            team,
        };
        Spawner::with_services(delegation, services, sink)
    }
}
