//! How one agent is set up: model, prompt, tools, permissions and limits.

use crate::approval::Approver;
use crate::inbox::Inbox;
use crate::ledger::Ledger;
use crate::subagent::ForkSource;
use fleet_protocol::env;
use fleet_protocol::{ThinkingConfig, ToolDefinition};
use fleet_tools::permissions::Permissions;
use fleet_tools::ToolPool;
use std::sync::Arc;

#[derive(Clone)]
pub struct AgentConfig {
    /// The model id sent to the API (aliases already resolved).
    pub model: String,
    /// The longest reply this agent asks for (see [`crate::output_limit`]); each request asks
    /// for no more than the model's window leaves after the prompt.
    pub max_tokens: u32,
    /// The limit the user set (`--max-output-tokens` and its variables), if any: a reply cut
    /// by it is not asked again with more.
    pub max_tokens_asked: Option<u32>,
    /// The whole system prompt, as blocks: stable text first so the prompt cache holds.
    pub system: Vec<String>,
    pub tools: ToolPool,
    pub permissions: Arc<Permissions>,
    /// Stop with `error_max_turns` after this many model replies.
    pub max_turns: Option<u32>,
    /// Stop with `error_max_budget_usd` once the run has cost this much.
    pub max_budget_usd: Option<f64>,
    /// How many read-only tool calls of one reply may run at once.
    pub tool_concurrency: usize,
    pub thinking: Option<ThinkingConfig>,
    /// Who answers "ask" decisions; `None` (headless) makes them refusals.
    pub approver: Option<Arc<dyn Approver>>,
    /// Messages for this agent that arrive while it runs (task notifications); drained into
    /// the conversation before each request.
    pub inbox: Option<Arc<Inbox>>,
    /// The agent tree's ledger: every reply is recorded there, and when it is set
    /// `max_budget_usd` binds the tree's total rather than this agent's own spending.
    pub ledger: Option<Arc<Ledger>>,
    /// The definitions of `tools`, when the caller already has them (deriving schemas is
    /// the costly part of starting an agent, and many subagents share one pool shape).
    pub tool_definitions: Option<Arc<Vec<ToolDefinition>>>,
    /// Where the agent leaves a copy of its conversation when a reply calls a tool that
    /// wants one (the Agent tool, to fork); `None` when forking is off.
    pub fork_source: Option<Arc<ForkSource>>,
    /// Set by a tool (a teammate approving its own shutdown) to end the run once the current
    /// reply's calls are answered, without another request.
    pub end_after_tools: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// The session's MCP servers and their status, reported when the agent starts.
    pub mcp_servers: Vec<fleet_protocol::McpServerStatus>,
    /// The MCP servers whose tools this agent may hold, watched for `list_changed` before
    /// each request. `None` for agents without MCP servers.
    pub mcp_live: Option<crate::mcp::McpLive>,
    /// The hooks this agent runs: the session's, plus its definition's own. `None` when there
    /// are none.
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
    /// How the agent keeps its conversation inside the model's window, and the `PreCompact`
    /// hook slot (see [`crate::compact`]).
    pub compact: crate::compact::CompactSettings,
    /// The session's live controls (interrupt, model, permission mode, context usage), on
    /// the main agent only; see [`crate::controls`].
    pub controls: Option<crate::controls::SessionControls>,
    /// Send each reply's Messages API stream events too (`EventKind::Stream`), for
    /// `--include-partial-messages`; off, the agent keeps no state for them.
    pub stream_events: bool,
    /// `--json-schema`: the StructuredOutput tool's shared state, which ends the run once the
    /// model gave a valid value (see [`crate::structured`]).
    pub structured: Option<Arc<crate::structured::StructuredOutput>>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("model", &self.model)
            .field("tools", &self.tools)
            .field("mode", &self.permissions.mode())
            .field("max_turns", &self.max_turns)
            .field("max_budget_usd", &self.max_budget_usd)
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    pub fn new(model: impl Into<String>, tools: ToolPool, permissions: Arc<Permissions>) -> Self {
        let model = model.into();
        Self {
            max_tokens: crate::output_limit::natural(&builtin_catalog().info(&model)),
            max_tokens_asked: None,
            model,
            system: Vec::new(),
            tools,
            permissions,
            max_turns: None,
            max_budget_usd: None,
            tool_concurrency: default_tool_concurrency(),
            thinking: None,
            approver: None,
            inbox: None,
            ledger: None,
            tool_definitions: None,
            fork_source: None,
            end_after_tools: None,
            mcp_servers: Vec::new(),
            mcp_live: None,
            hooks: None,
            compact: crate::compact::CompactSettings::from_env(),
            controls: None,
            stream_events: false,
            structured: None,
        }
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
