//! What a session is built from, already resolved: the front end has read its flags and the
//! configuration, and hands the builder typed values — no command-line text, no settings
//! files. Each field says which flag or setting it stands for, so a reader can follow a value
//! from `fleet -p --…` to the agent.

use crate::thinking::Thinking;
use fleet_model::{Catalog, ModelClient};
use fleet_runtime::remote::RemoteLauncher;
use fleet_runtime::teams::PaneSettings;
use fleet_tools::permissions::{PermissionMode, SettingsSource};
use fleet_tools::sandbox::SandboxConfig;
use std::path::PathBuf;
use std::sync::Arc;

/// The model client, its catalogue and the model the main agent starts with.
#[derive(Clone)]
pub struct Choice {
    pub client: Arc<dyn ModelClient>,
    pub catalog: Catalog,
    /// The model id to send (aliases resolved on Anthropic).
    pub model: String,
}

/// Where a team's pane teammates run, asked for once teams are on: the pane backend and the
/// `fleet` command line a teammate starts with belong to the front end that knows its flags.
/// Given the team's name; `Ok(None)` keeps teammates in-process.
pub type PaneFactory =
    Arc<dyn Fn(&str) -> Result<Option<PaneSettings>, crate::error::BoxError> + Send + Sync>;

/// Everything the session builder takes from flags and configuration.
#[derive(Clone)]
pub struct SessionOptions {
    /// The folder the session works in (resolved).
    pub cwd: PathBuf,
    /// The repository root above `cwd`, if any: the workspace, hooks' project folder and
    /// where agent files are looked for.
    pub repo_root: Option<PathBuf>,
    /// Whether the session is written under `$FLEET_HOME` (transcripts, teams, worktrees).
    pub persist: bool,
    /// Whether the repository's own settings, agents and skills are trusted.
    pub trusted: bool,
    /// `--max-output-tokens`, the environment or `maxOutputTokens`: the longest reply asked.
    pub max_output_tokens: Option<u32>,
    /// `--thinking`, `--max-thinking-tokens`, `--thinking-display`, `--effort`, `effort`.
    pub thinking: Thinking,
    /// `--tools`: which tools the main agent gets (`None` or `default`: all).
    pub tools: Option<String>,
    /// `--allowedTools`.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`; a bare tool name also removes the tool.
    pub disallowed_tools: Vec<String>,
    /// `--permission-mode` / `--dangerously-skip-permissions`.
    pub permission_mode: Option<PermissionMode>,
    /// `--add-dir`.
    pub add_dirs: Vec<PathBuf>,
    /// Every settings file's `permissions` object, lowest precedence first.
    pub permission_sources: Vec<SettingsSource>,
    /// The OS sandbox: the settings' `sandbox` objects, `--sandbox` / `--no-sandbox`.
    pub sandbox: SandboxConfig,
    /// `--system-prompt` or the text of `--system-prompt-file`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`, then the text of `--append-system-prompt-file`.
    pub append_system_prompt: Vec<String>,
    /// Whether the project's instruction files (`CLAUDE.md`, `AGENTS.md`) are read
    /// (`--setting-sources` naming `project`).
    pub project_instructions: bool,
    /// Whether `~/.claude/CLAUDE.md` is read (`--setting-sources` naming `user`).
    pub user_instructions: bool,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-budget-usd`.
    pub max_budget_usd: Option<f64>,
    /// `--include-partial-messages`: stream events for every delta.
    pub include_partial_messages: bool,
    /// `--json-schema`: the main agent answers through StructuredOutput.
    pub json_schema: Option<String>,
    /// `--agents`: agent definitions given as JSON on the command line.
    pub agents: Option<String>,
    /// `--coordinator` (or `FLEET_COORDINATOR_MODE`).
    pub coordinator: bool,
    /// `forkSubagent` of the settings (`FLEET_FORK_SUBAGENT` wins over it).
    pub fork_subagent: Option<bool>,
    /// Every settings file's `hooks` object, lowest precedence first, with its file.
    pub hooks: Vec<(serde_json::Value, PathBuf)>,
    /// Where teammates run in panes (see [`PaneFactory`]); `None` keeps them in-process.
    pub panes: Option<PaneFactory>,
    /// The remote launcher for `isolation: "remote"` (fleet-remote's, above this crate).
    pub remote: Option<Arc<dyn RemoteLauncher>>,
}

impl SessionOptions {
    /// Options for a session in `cwd` with nothing set: every flag absent, no settings.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            repo_root: None,
            persist: false,
            trusted: false,
            max_output_tokens: None,
            thinking: Thinking::default(),
            tools: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            permission_mode: None,
            add_dirs: Vec::new(),
            permission_sources: Vec::new(),
            sandbox: SandboxConfig::default(),
            system_prompt: None,
            append_system_prompt: Vec::new(),
            project_instructions: true,
            user_instructions: true,
            max_turns: None,
            max_budget_usd: None,
            include_partial_messages: false,
            json_schema: None,
            agents: None,
            coordinator: false,
            fork_subagent: None,
            hooks: Vec::new(),
            panes: None,
            remote: None,
        }
    }

    /// The project folder: the repository root, else the working folder.
    pub fn project(&self) -> PathBuf {
        self.repo_root.clone().unwrap_or_else(|| self.cwd.clone())
    }
}

/// Which conversation the session carries on: `--continue`, `--resume`, `--session-id`,
/// `--fork-session`, or a new one when none is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conversation {
    pub continue_latest: bool,
    pub resume: Option<String>,
    pub session_id: Option<String>,
    pub fork: bool,
}

/// Every settings file's `permissions` object, lowest precedence first, as the rules want
/// them ([`SessionOptions::permission_sources`]).
pub fn permission_sources(settings: &crate::config::Settings) -> Vec<SettingsSource> {
    settings
        .permissions
        .iter()
        .map(|source| SettingsSource {
            settings: source.settings.clone(),
            base: source.base.clone(),
            name: source.file.display().to_string(),
        })
        .collect()
}

/// The sandbox the settings files describe (every file's `sandbox` object and
/// `shellEnvironmentPolicy`), switched on or off by `enabled` when given (`--sandbox` /
/// `--no-sandbox`) ([`SessionOptions::sandbox`]).
pub fn sandbox(
    settings: &crate::config::Settings,
    enabled: Option<bool>,
) -> crate::error::Result<SandboxConfig> {
    let mut config = SandboxConfig::default();
    for source in &settings.sandbox {
        config.add_settings(
            &source.settings,
            &source.base,
            &source.file.display().to_string(),
        )?;
    }
    config.env = settings.env_policy.clone();
    if let Some(enabled) = enabled {
        config.enabled = enabled;
    }
    Ok(config)
}
