//! How one agent is set up, in parts that change for different reasons: the model and how it
//! is asked ([`ModelSettings`]), what the agent may do ([`ToolSettings`]), what its
//! conversation starts from and how it stays in the window ([`ContextSettings`]), what ends a
//! run ([`StopRules`]), and its place in a tree of agents ([`TreeLink`]).
//!
//! [`AgentConfig::new`] fills every part with its default, so a caller sets only what differs.

use crate::approval::Approver;
use crate::inbox::Inbox;
use crate::ledger::Ledger;
use crate::subagent::ForkSource;
use fleet_protocol::env;
use fleet_protocol::{ThinkingConfig, ToolDefinition};
use fleet_tools::permissions::Permissions;
use fleet_tools::ToolPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Clone)]
pub struct AgentConfig {
    pub model: ModelSettings,
    pub tools: ToolSettings,
    pub context: ContextSettings,
    pub stop: StopRules,
    /// The hooks this agent runs: the session's, plus its definition's own. `None` when there
    /// are none.
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
    /// The tree of agents this one delegates in (set by `Spawner::attach_main` and for each
    /// child); `None` for an agent alone: no notifications to receive, no tree to count.
    pub tree: Option<TreeLink>,
    /// The session's live controls (interrupt, model, permission mode, context usage), on
    /// the main agent only; see [`crate::controls`].
    pub controls: Option<crate::controls::SessionControls>,
}

/// Which model answers, and how each request asks it.
#[derive(Clone, Debug)]
pub struct ModelSettings {
    /// The model id sent to the API (aliases already resolved).
    pub id: String,
    /// The longest reply this agent asks for (see [`crate::output_limit`]); each request asks
    /// for no more than the model's window leaves after the prompt.
    pub max_tokens: u32,
    /// The limit the user set (`--max-output-tokens` and its variables), if any: a reply cut
    /// by it is not asked again with more.
    pub max_tokens_asked: Option<u32>,
    pub thinking: Option<ThinkingConfig>,
    /// Send each reply's Messages API stream events too (`EventKind::Stream`), for
    /// `--include-partial-messages`; off, the agent keeps no state for them.
    pub stream_events: bool,
}

impl ModelSettings {
    /// `id` with its natural output limit from the built-in catalogue (the session sets the
    /// real one from its own), no thinking, no stream events.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        Self {
            max_tokens: crate::output_limit::natural(&builtin_catalog().info(&id)),
            max_tokens_asked: None,
            thinking: None,
            stream_events: false,
            id,
        }
    }
}

/// What the agent may do: its tools, the rules they run under, and who answers "ask".
#[derive(Clone)]
pub struct ToolSettings {
    pub pool: ToolPool,
    /// The definitions of `pool`, when the caller already has them (deriving schemas is
    /// the costly part of starting an agent, and many subagents share one pool shape).
    pub definitions: Option<Arc<Vec<ToolDefinition>>>,
    pub permissions: Arc<Permissions>,
    /// Who answers "ask" decisions; `None` (headless) makes them refusals.
    pub approver: Option<Arc<dyn Approver>>,
    /// How many read-only tool calls of one reply may run at once.
    pub concurrency: usize,
    /// The session's MCP servers and their status, reported when the agent starts.
    pub mcp_servers: Vec<fleet_protocol::McpServerStatus>,
    /// The MCP servers whose tools this agent may hold, watched for `list_changed` before
    /// each request. `None` for agents without MCP servers.
    pub mcp_live: Option<crate::mcp::McpLive>,
}

impl ToolSettings {
    /// `pool` under `permissions`, with no approver, no MCP servers, and the concurrency of
    /// `FLEET_MAX_TOOL_USE_CONCURRENCY`.
    pub fn new(pool: ToolPool, permissions: Arc<Permissions>) -> Self {
        Self {
            pool,
            definitions: None,
            permissions,
            approver: None,
            concurrency: default_tool_concurrency(),
            mcp_servers: Vec::new(),
            mcp_live: None,
        }
    }
}

/// What the conversation starts from, and how it is kept inside the model's window.
#[derive(Clone)]
pub struct ContextSettings {
    /// The whole system prompt, as blocks: stable text first so the prompt cache holds.
    pub system: Vec<String>,
    /// How the agent keeps its conversation inside the model's window, and the `PreCompact`
    /// hook slot (see [`crate::compact`]).
    pub compact: crate::compact::CompactSettings,
}

impl ContextSettings {
    /// No system prompt; compaction as the environment sets it.
    pub fn from_env() -> Self {
        Self {
            system: Vec::new(),
            compact: crate::compact::CompactSettings::from_env(),
        }
    }
}

/// What ends a run besides a reply that calls no tool.
#[derive(Clone, Default)]
pub struct StopRules {
    /// Stop with `error_max_turns` after this many model replies.
    pub max_turns: Option<u32>,
    /// Stop with `error_max_budget_usd` once the run has cost this much (the tree's total
    /// when the agent has a [`TreeLink`]).
    pub max_budget_usd: Option<f64>,
    /// Set by a tool (a teammate approving its own shutdown) to end the run once the current
    /// reply's calls are answered, without another request. Nobody holds the default one.
    pub end_after_tools: Arc<AtomicBool>,
    /// `--json-schema`: the StructuredOutput tool's shared state, which ends the run once the
    /// model gave a valid value (see [`crate::structured`]).
    pub structured: Option<Arc<crate::structured::StructuredOutput>>,
}

impl StopRules {
    /// Whether a tool asked to end the run.
    pub fn ended_by_tool(&self) -> bool {
        self.end_after_tools.load(Ordering::Acquire)
    }
}

/// An agent's place in a tree of agents that delegate through the Agent tool.
#[derive(Clone)]
pub struct TreeLink {
    /// Messages for this agent that arrive while it runs (task notifications); drained into
    /// the conversation before each request.
    pub inbox: Arc<Inbox>,
    /// The tree's ledger: every reply is recorded there, and `max_budget_usd` binds the
    /// tree's total rather than this agent's own spending.
    pub ledger: Arc<Ledger>,
    /// Where the agent leaves a copy of its conversation when a reply calls a tool that
    /// wants one (the Agent tool, to fork); `None` when forking is off.
    pub fork_source: Option<Arc<ForkSource>>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("model", &self.model.id)
            .field("tools", &self.tools.pool)
            .field("mode", &self.tools.permissions.mode())
            .field("max_turns", &self.stop.max_turns)
            .field("max_budget_usd", &self.stop.max_budget_usd)
            .field("approver", &self.tools.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    pub fn new(model: impl Into<String>, tools: ToolPool, permissions: Arc<Permissions>) -> Self {
        Self {
            model: ModelSettings::new(model),
            tools: ToolSettings::new(tools, permissions),
            context: ContextSettings::from_env(),
            stop: StopRules::default(),
            hooks: None,
            tree: None,
            controls: None,
        }
    }

    /// The tree's ledger, when the agent is part of one.
    pub fn ledger(&self) -> Option<&Arc<Ledger>> {
        self.tree.as_ref().map(|tree| &tree.ledger)
    }

    /// Where the agent leaves copies of its conversation for forks, when forking is on.
    pub fn fork_source(&self) -> Option<&Arc<ForkSource>> {
        self.tree.as_ref()?.fork_source.as_ref()
    }
}

/// `FLEET_MAX_TOOL_USE_CONCURRENCY`, else 10. The binary checks the variable before anything
/// runs (see `fleet_protocol::env::check_all`); a bad value met here is logged and ignored.
fn default_tool_concurrency() -> usize {
    match env::FLEET_MAX_TOOL_USE_CONCURRENCY.get() {
        Ok(value) => value.and_then(|n| usize::try_from(n).ok()).unwrap_or(10),
        Err(err) => {
            tracing::warn!("{err}; using 10");
            10
        }
    }
}

/// The built-in catalogue, made once: a new agent's default output limit comes from it (the
/// session sets the real one from its own catalogue).
fn builtin_catalog() -> &'static fleet_model::Catalog {
    static CATALOG: std::sync::OnceLock<fleet_model::Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(fleet_model::Catalog::builtin)
}
