//! The flags of a headless run (`fleet -p`), spelled as Claude Code spells them so that
//! existing scripts work unchanged.

use crate::model_choice::parse_provider;
use fleet_model::Provider;
use fleet_tools::permissions::PermissionMode;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct PrintArgs {
    /// Run one prompt without a terminal UI and print the result (the prompt is the argument,
    /// or stdin).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// The prompt; read from stdin when it is absent.
    pub prompt: Option<String>,
    /// `text` (the final answer), `json` (one result object) or `stream-json` (one event per
    /// line).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json", "stream-json"])]
    pub output_format: String,
    /// `text` (stdin is one prompt) or `stream-json` (stdin holds one user message per line).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "stream-json"])]
    pub input_format: String,
    /// With stream-json output, also print partial messages as they stream.
    #[arg(long)]
    pub include_partial_messages: bool,
    /// A JSON Schema (as JSON text) for the final answer: the model gives it through a
    /// StructuredOutput tool, and the result's `structured_output` holds it, validated.
    #[arg(long, value_name = "SCHEMA")]
    pub json_schema: Option<String>,
    /// With stream-json output, also print a `hook_started` and a `hook_response` line for
    /// each hook that runs.
    #[arg(long)]
    pub include_hook_events: bool,
    /// Model id or alias (`opus`, `sonnet`, `haiku`).
    #[arg(long)]
    pub model: Option<String>,
    /// How hard the model thinks: low, medium, high, xhigh, max, or a thinking budget in tokens
    /// (sent only to models that take extended thinking).
    #[arg(long, value_name = "LEVEL", value_parser = fleet_runtime::effort::parse_effort)]
    pub effort: Option<fleet_runtime::definitions::Effort>,
    /// `anthropic` or `openai` (an OpenAI-compatible server).
    #[arg(long, value_parser = parse_provider)]
    pub provider: Option<Provider>,
    /// Stop after this many model replies.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// The longest reply, in tokens, any agent asks for (default: the model's own limit; for a
    /// model fleet does not know, what its server says, at most a quarter of its window).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_output_tokens: Option<u32>,
    /// Stop once the run has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub permission_mode: Option<PermissionMode>,
    /// The same as `--permission-mode bypassPermissions`.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// The built-in tools the model is offered: names separated by commas or spaces
    /// ("Bash,Edit,Read"), "" for none, "default" for all.
    #[arg(long, value_name = "TOOLS")]
    pub tools: Option<String>,
    /// Rules to allow without asking, e.g. "Bash(git *)" Edit (comma or space separated).
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", value_name = "RULES", num_args = 1..)]
    pub allowed_tools: Vec<String>,
    /// Rules to deny; a bare tool name also removes the tool.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", value_name = "RULES", num_args = 1..)]
    pub disallowed_tools: Vec<String>,
    /// Replace fleet's own prompt (the environment and project instructions are still added).
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Replace fleet's own prompt with the text of this file (as `--system-prompt`).
    #[arg(long, value_name = "FILE", conflicts_with = "system_prompt")]
    pub system_prompt_file: Option<PathBuf>,
    /// Add text at the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Add the text of this file at the end of the system prompt (after
    /// `--append-system-prompt`).
    #[arg(long, value_name = "FILE")]
    pub append_system_prompt_file: Option<PathBuf>,
    /// Who answers "ask" decisions: `stdio` (the SDK, over the control protocol) or an MCP
    /// tool (`mcp__server__tool`) that gets `{tool_name, input}` and answers with
    /// `{"behavior": "allow" | "deny", …}`.
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// Set by the TypeScript Agent SDK when `initialize` carries MCP servers or settings.
    /// fleet always reads `initialize` before it builds a stream-json session, so this only
    /// checks that the input is stream-json.
    #[arg(long, hide = true)]
    pub await_initialize: bool,
    /// One more settings layer above the settings files: a JSON file or inline JSON.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Option<String>,
    /// Which settings files load: `user`, `project`, `local`, comma separated ("" for none).
    /// `--settings` always loads.
    #[arg(long, value_name = "SOURCES")]
    pub setting_sources: Option<String>,
    /// When the model is overloaded (after the retries), switch to this model for the rest of
    /// the run.
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,
    /// Beta features sent as the `anthropic-beta` header (comma separated; Anthropic only).
    #[arg(long, value_name = "BETAS")]
    pub betas: Vec<String>,
    /// With `--resume` or `--continue`: carry the history on in a new session id, leaving the
    /// old session as it was.
    #[arg(long)]
    pub fork_session: bool,
    /// Extended thinking with this budget in tokens (`0` turns it off); wins over `--effort`.
    #[arg(long, value_name = "N")]
    pub max_thinking_tokens: Option<u32>,
    /// `adaptive` (the model decides; newer models only), `enabled` (a fixed budget) or
    /// `disabled`.
    #[arg(long, value_name = "MODE", value_parser = ["adaptive", "enabled", "disabled"])]
    pub thinking: Option<String>,
    /// How the thinking is returned: `summarized` or `omitted`.
    #[arg(long, value_name = "DISPLAY", value_parser = ["summarized", "omitted"])]
    pub thinking_display: Option<String>,
    /// Do not write the session to disk (as FLEET_NO_SESSION_PERSISTENCE=1).
    #[arg(long)]
    pub no_session_persistence: bool,
    /// Lets a later `set_permission_mode` switch to bypassPermissions (without it, only
    /// `--permission-mode bypassPermissions` or `--dangerously-skip-permissions` at start).
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,
    /// More folders the agent may change, besides the project.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,
    /// With text output: show tool calls and progress on the way. With json output: print every
    /// event as one JSON array.
    #[arg(long)]
    pub verbose: bool,
    /// Continue the most recent session of this folder.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,
    /// Continue the session with this id.
    #[arg(short = 'r', long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
    /// Use this id (a UUID) for a new session.
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// Work in this folder instead of the current one.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Agent definitions as JSON (an object keyed by name), taking precedence over files.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,
    /// Coordinator mode: the main agent only directs background workers (Agent, SendMessage,
    /// TaskStop). Also FLEET_COORDINATOR_MODE=1.
    #[arg(long)]
    pub coordinator: bool,
    /// MCP servers: a JSON file or inline JSON (`{"mcpServers": {…}}`); repeatable.
    #[arg(long = "mcp-config", value_name = "CONFIG", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the servers of --mcp-config, none from `.mcp.json` or settings.
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// Trust this repository for this run only: its hooks, allow rules, default mode, MCP
    /// servers and the rest apply (for CI; `fleet trust` remembers it). Also
    /// FLEET_TRUST_PROJECT=1.
    #[arg(long)]
    pub trust_project: bool,
    /// Run every agent's Bash commands in the OS sandbox (as `"sandbox": {"enabled": true}`).
    #[arg(long, conflicts_with = "no_sandbox")]
    pub sandbox: bool,
    /// Do not sandbox ordinary agents' Bash commands, whatever the settings say. Read-only
    /// agents, plan mode, the verification agent and read-only commands stay sandboxed.
    #[arg(long)]
    pub no_sandbox: bool,
    /// Where teammates run: `auto` (panes when fleet runs inside tmux or iTerm2), `in-process`,
    /// `tmux` or `iterm2`. Also the `teammateMode` setting. `-p` keeps them in-process unless
    /// a mode is given.
    #[arg(long, value_name = "MODE", value_parser = parse_teammate_mode)]
    pub teammate_mode: Option<fleet_runtime::backends::detect::TeammateMode>,
    /// Serve the live web dashboard of this session while it runs (a free loopback port; the
    /// URL, with its token, on stderr): its agents, teams and transcripts, and stopping tasks
    /// and answering permission questions from the page.
    #[arg(long)]
    pub dashboard: bool,
    /// Who this process is, when a lead started it as a pane teammate.
    #[command(flatten)]
    pub member: MemberArgs,
    /// Claude Code flags fleet does not honour yet: each is refused by name.
    #[command(flatten)]
    pub unsupported: crate::unsupported_flags::UnsupportedFlags,
}

/// The identity a lead gives a pane teammate on its command line (Claude Code's flags).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MemberArgs {
    /// `name@team`.
    #[arg(long, hide = true, requires_all = ["agent_name", "team_name", "lead_verify_key"])]
    pub agent_id: Option<String>,
    #[arg(long, hide = true, requires = "agent_id")]
    pub agent_name: Option<String>,
    #[arg(long, hide = true, requires = "agent_id")]
    pub team_name: Option<String>,
    #[arg(long, hide = true, requires = "agent_id")]
    pub agent_color: Option<String>,
    /// The agent definition the teammate runs.
    #[arg(long, hide = true, requires = "agent_id")]
    pub agent_type: Option<String>,
    #[arg(long, hide = true, requires = "agent_id")]
    pub parent_session_id: Option<String>,
    /// `<epoch-ms>.<base64url SPKI>`: the lead's public key for this teammate.
    #[arg(long, hide = true, requires = "agent_id")]
    pub lead_verify_key: Option<String>,
}

impl MemberArgs {
    /// The identity, when this process is a pane teammate.
    pub fn identity(&self) -> Option<fleet_runtime::teams::member::Identity> {
        let agent_id = self.agent_id.clone()?;
        Some(fleet_runtime::teams::member::Identity {
            name: self.agent_name.clone()?,
            team: self.team_name.clone()?,
            lead_verify_key: self.lead_verify_key.clone()?,
            color: self.agent_color.clone().unwrap_or_else(|| "blue".into()),
            agent_type: self
                .agent_type
                .clone()
                .unwrap_or_else(|| "general-purpose".into()),
            parent_session_id: self.parent_session_id.clone().unwrap_or_default(),
            agent_id,
        })
    }
}

fn parse_teammate_mode(s: &str) -> Result<fleet_runtime::backends::detect::TeammateMode, String> {
    s.parse()
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
}

impl PrintArgs {
    /// `--sandbox` / `--no-sandbox`, if either was given.
    pub fn sandbox(&self) -> Option<bool> {
        match (self.sandbox, self.no_sandbox) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }

    pub fn mode(&self) -> Option<PermissionMode> {
        if self.dangerously_skip_permissions {
            Some(PermissionMode::BypassPermissions)
        } else {
            self.permission_mode
        }
    }
}
