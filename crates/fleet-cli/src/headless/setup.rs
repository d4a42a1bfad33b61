//! The headless run's flags and settings, as the session library takes them: `PrintArgs` and
//! `Settings` become [`SessionOptions`], the SDK host's parts become a
//! [`fleet_session::Host`], and [`fleet_session::build::agent`] builds the session.

use super::flags;
use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::{repo_root, SettingSource, Settings};
use fleet_session::build::hooks::HostHooks;
use fleet_session::{Conversation, SessionOptions, Thinking};
use fleet_tools::permissions::SettingsSource;
use fleet_tools::sandbox::SandboxConfig;
use std::path::Path;
use std::sync::Arc;

pub use fleet_session::mcp::McpTools;
pub use fleet_session::Built;

/// What the process driving fleet adds to the session.
#[derive(Default)]
pub struct Host {
    /// Who answers "ask" decisions (a person at the terminal, or an SDK host); none makes
    /// them refusals.
    pub approver: Option<Arc<dyn fleet_runtime::Approver>>,
    /// Hooks an SDK host registered in `initialize`.
    pub hooks: Option<crate::control::host::SdkHooks>,
    /// The handle an SDK host steers the main agent by (interrupt, model, mode).
    pub controls: Option<fleet_runtime::controls::SessionControls>,
}

/// Builds the session's main agent from the command line and the settings (see
/// [`fleet_session::build::agent`]).
// One call builds the whole session; its parts are independent inputs, not a bundle.
#[allow(clippy::too_many_arguments)]
pub fn agent(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    choice: Choice,
    session_id: &str,
    host: Host,
    persist: bool,
    mcp: &McpTools,
) -> anyhow::Result<Built> {
    let choice = flags::client(args, choice)?;
    let options = options(args, cwd, settings, persist)?;
    let host = fleet_session::Host {
        approver: host.approver,
        hooks: host.hooks.map(|hooks| HostHooks {
            set: hooks.set,
            runner: hooks.runner,
        }),
        controls: host.controls,
    };
    Ok(fleet_session::build::agent(
        &options,
        choice,
        session_id,
        host,
        mcp,
        &super::report::Stderr,
    )?)
}

/// What the flags and settings say the session is.
pub fn options(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    persist: bool,
) -> anyhow::Result<SessionOptions> {
    let sources = flags::settings_flags(args)?;
    let mut append_system_prompt: Vec<String> = args.append_system_prompt.iter().cloned().collect();
    append_system_prompt.extend(flags::appended_prompt_file(args)?);
    let panes = {
        let args = args.clone();
        let settings = settings.clone();
        Arc::new(move |team: &str| {
            super::panes::settings(&args, &settings, team).map_err(Into::into)
        }) as fleet_session::options::PaneFactory
    };
    Ok(SessionOptions {
        cwd: cwd.to_path_buf(),
        repo_root: repo_root(cwd),
        persist,
        trusted: settings.trust.trusted,
        max_output_tokens: crate::model_choice::asked_output_limit(
            args.max_output_tokens,
            settings,
        )?,
        thinking: Thinking::new(
            args.effort.clone().or_else(|| settings.effort.clone()),
            args.thinking.as_deref(),
            args.max_thinking_tokens,
            args.thinking_display.clone(),
        ),
        tools: args.tools.clone(),
        allowed_tools: args.allowed_tools.clone(),
        disallowed_tools: args.disallowed_tools.clone(),
        permission_mode: args.mode(),
        add_dirs: args.add_dir.clone(),
        permission_sources: permission_sources(settings),
        sandbox: sandbox_from_settings(settings, args.sandbox())?,
        system_prompt: flags::system_prompt(args)?,
        append_system_prompt,
        project_instructions: sources.loads(SettingSource::Project),
        user_instructions: sources.loads(SettingSource::User),
        max_turns: args.max_turns,
        max_budget_usd: args.max_budget_usd,
        include_partial_messages: args.include_partial_messages,
        json_schema: args.json_schema.clone(),
        agents: args.agents.clone(),
        coordinator: args.coordinator,
        fork_subagent: settings.fork_subagent,
        hooks: settings.hooks.clone(),
        panes: Some(panes),
        // Connected on the first `isolation: "remote"` call, not before.
        remote: crate::remote_cmd::configured_url(None, Some(settings)).map(|url| {
            Arc::new(fleet_remote::launcher::NatsLauncher::new(url))
                as Arc<dyn fleet_runtime::remote::RemoteLauncher>
        }),
    })
}

/// Which conversation the flags say to carry on.
pub fn conversation(args: &PrintArgs) -> Conversation {
    Conversation {
        continue_latest: args.continue_session,
        resume: args.resume.clone(),
        session_id: args.session_id.clone(),
        fork: args.fork_session,
    }
}

/// The sandbox the settings files describe, switched on or off by `enabled` when given
/// (`--sandbox` / `--no-sandbox`). Shared with `fleet mcp serve`.
pub(crate) fn sandbox_from_settings(
    settings: &Settings,
    enabled: Option<bool>,
) -> anyhow::Result<SandboxConfig> {
    Ok(fleet_session::options::sandbox(settings, enabled)?)
}

/// Every settings file's `permissions` object, lowest precedence first, as the rules want them.
/// Shared with `fleet mcp serve`.
pub(crate) fn permission_sources(settings: &Settings) -> Vec<SettingsSource> {
    fleet_session::options::permission_sources(settings)
}
