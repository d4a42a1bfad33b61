//! The flags the Agent SDKs pass that shape a run before it starts: the ones fleet refuses,
//! the combinations that make no sense, the settings layer, the system prompt from a file,
//! and the model client's extras (`--betas`, `--fallback-model`).

use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::SettingsFlags;
use anyhow::{bail, Context};
use std::path::Path;

/// Refuses the flags fleet does not honour yet and the combinations that cannot work, before
/// anything is read or written.
pub fn check(args: &PrintArgs) -> anyhow::Result<()> {
    args.unsupported.check().map_err(anyhow::Error::msg)?;
    if args.fork_session && args.resume.is_none() && !args.continue_session {
        bail!("--fork-session needs --resume or --continue: it copies that session into a new one");
    }
    if args.fork_session && args.session_id.is_some() {
        bail!("--fork-session and --session-id cannot be used together: the fork gets a new id");
    }
    if args.thinking_display.is_some() && args.thinking.as_deref() == Some("disabled") {
        bail!("--thinking-display cannot be used with --thinking disabled");
    }
    Ok(())
}

/// `--setting-sources` and `--settings`, as the settings loader takes them.
pub fn settings_flags(args: &PrintArgs) -> anyhow::Result<SettingsFlags> {
    let mut flags =
        SettingsFlags::parse(args.setting_sources.as_deref(), args.settings.as_deref())?;
    if args.trust_project || fleet_protocol::env::FLEET_TRUST_PROJECT.is_on()? {
        flags.trust = Some(true);
    }
    Ok(flags)
}

/// The custom system prompt: `--system-prompt`, or the text of `--system-prompt-file`.
pub fn system_prompt(args: &PrintArgs) -> anyhow::Result<Option<String>> {
    match &args.system_prompt_file {
        Some(path) => read_prompt_file("--system-prompt-file", path).map(Some),
        None => Ok(args.system_prompt.clone()),
    }
}

/// The text of `--append-system-prompt-file`, if given.
pub fn appended_prompt_file(args: &PrintArgs) -> anyhow::Result<Option<String>> {
    args.append_system_prompt_file
        .as_deref()
        .map(|path| read_prompt_file("--append-system-prompt-file", path))
        .transpose()
}

fn read_prompt_file(flag: &str, path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{flag} {}", path.display()))
}

/// What a run says when it moves to its fallback model (stderr in text mode, `content` of
/// the stream-json line).
pub fn fallback_notice(from: &str, to: &str) -> String {
    format!("{from} is overloaded: switched to the fallback model {to} for the rest of the run")
}

/// The model client with `--betas` and `--fallback-model` applied (see
/// `fleet_session::model::with_extras`).
pub fn client(args: &PrintArgs, choice: Choice) -> anyhow::Result<Choice> {
    Ok(fleet_session::model::with_extras(
        choice,
        &args.betas,
        args.fallback_model.as_deref(),
        &super::report::Stderr,
    )?)
}
