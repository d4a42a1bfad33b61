//! The flags the Agent SDKs pass that shape a run before it starts: the ones fleet refuses,
//! the combinations that make no sense, the settings layer, the system prompt from a file,
//! and the model client's extras (`--betas`, `--fallback-model`).

use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::{SettingSource, SettingsFlags};
use anyhow::{bail, Context};
use fleet_model::{FallbackClient, ModelClient, ModelRequest, ModelStream, Provider};
use fleet_runtime::SystemPromptBuilder;
use std::path::Path;
use std::sync::Arc;

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

/// `builder` reading only the instruction files of the sources `--setting-sources` names:
/// `user` gates `~/.claude/CLAUDE.md`, `project` the project's instruction files.
pub fn instruction_sources(
    args: &PrintArgs,
    builder: SystemPromptBuilder,
) -> anyhow::Result<SystemPromptBuilder> {
    let flags = settings_flags(args)?;
    let builder = builder.project_instructions(flags.loads(SettingSource::Project));
    Ok(if flags.loads(SettingSource::User) {
        builder
    } else {
        builder.user_instructions(None)
    })
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

/// The model client with `--betas` and `--fallback-model` applied. A fallback equal to the
/// main model is an error; betas on an OpenAI-compatible server are a warning (there is no
/// such header there).
pub fn client(args: &PrintArgs, mut choice: Choice) -> anyhow::Result<Choice> {
    let betas: Vec<String> = args
        .betas
        .iter()
        .flat_map(|list| list.split(','))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .collect();
    let anthropic = choice.client.provider() == Provider::Anthropic;
    if !betas.is_empty() {
        if anthropic {
            choice.client = Arc::new(BetaClient {
                inner: choice.client,
                header: betas.join(","),
            });
        } else {
            eprintln!(
                "fleet: warning: --betas {} ignored: beta headers are for the Anthropic API, \
                 and this run uses an OpenAI-compatible server",
                betas.join(",")
            );
        }
    }
    if let Some(fallback) = args.fallback_model.as_deref().map(str::trim) {
        if fallback.is_empty() {
            bail!("--fallback-model is empty: name a model");
        }
        let fallback = if anthropic {
            choice.catalog.resolve_id(fallback)
        } else {
            fallback.to_string()
        };
        if fallback == choice.model {
            bail!(
                "--fallback-model {fallback} is the main model: name a different model to \
                 fall back to"
            );
        }
        choice.client = Arc::new(FallbackClient::new(
            choice.client,
            choice.model.clone(),
            fallback,
        ));
    }
    Ok(choice)
}

/// Adds the `--betas` header to every request (the Anthropic client folds it into the one
/// `anthropic-beta` header with any from `ANTHROPIC_BETAS`).
struct BetaClient {
    inner: Arc<dyn ModelClient>,
    header: String,
}

impl ModelClient for BetaClient {
    fn provider(&self) -> Provider {
        self.inner.provider()
    }

    fn stream(&self, mut request: ModelRequest) -> ModelStream {
        request
            .headers
            .push(("anthropic-beta".to_string(), self.header.clone()));
        self.inner.stream(request)
    }
}
