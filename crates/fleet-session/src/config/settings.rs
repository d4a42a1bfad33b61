//! The resolved settings, and how one settings file is read over the ones below it.
//!
//! Single values (provider, model, effort, …) take the value of the highest layer that sets
//! them, and remember that layer in [`Origins`]. Lists add up, each entry keeping its file:
//! permission rules from every file (a deny anywhere wins when they are evaluated), every
//! file's hooks, every file's `sandbox` object.
//!
//! Keys this version does not know are ignored, so newer files still load.

use super::layer::{Layer, Source, Sourced};
use super::trust::TrustReport;
use super::ConfigError;
use fleet_model::{Provider, ToolChoiceMode};
use fleet_runtime::backends::detect::TeammateMode;
use fleet_runtime::definitions::Effort;
use fleet_tools::permissions::PermissionSettings;
use fleet_tools::sandbox::{EnvPolicy, SandboxSettings};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    /// Permission settings of each file, lowest precedence first.
    pub permissions: Vec<PermissionSource>,
    /// The files that were read, lowest precedence first.
    pub sources: Vec<PathBuf>,
    /// `forkSubagent`: an Agent call without a type forks the caller (as
    /// `FLEET_FORK_SUBAGENT=1` does).
    pub fork_subagent: Option<bool>,
    /// The `sandbox` object of each file, lowest precedence first.
    pub sandbox: Vec<SandboxSource>,
    /// `shellEnvironmentPolicy`, merged over every file.
    pub env_policy: EnvPolicy,
    /// `effort`: `low`, `medium`, `high`, `max` or a number of thinking tokens.
    pub effort: Option<Effort>,
    /// The `hooks` object of each file, lowest precedence first, with the file it came from;
    /// every file's hooks run.
    pub hooks: Vec<(serde_json::Value, PathBuf)>,
    /// `teammateMode`: where teammates run (`auto`, `in-process`, `tmux`, `iterm2`).
    pub teammate_mode: Option<TeammateMode>,
    /// `remote.natsUrl`: the NATS server remote workers take jobs from (FLEET_NATS_URL and
    /// `--nats` win over it).
    pub nats_url: Option<String>,
    /// `maxOutputTokens`: the longest reply any agent asks for (`FLEET_MAX_OUTPUT_TOKENS`,
    /// `CLAUDE_CODE_MAX_OUTPUT_TOKENS` and `--max-output-tokens` win over it).
    pub max_output_tokens: Option<u32>,
    /// `openai.toolChoice`: the `tool_choice` sent with tools to OpenAI-compatible servers
    /// (`FLEET_OPENAI_TOOL_CHOICE` wins over it).
    pub openai_tool_choice: Option<ToolChoiceMode>,
    /// Where each single value above came from.
    pub origins: Origins,
    /// How the repository stands with the user: what its files ask for that needs trust,
    /// and whether it applies (see [`super::trust`]).
    pub trust: TrustReport,
}

/// The layer (and file) each single value of [`Settings`] was taken from; `None` where no
/// layer set it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origins {
    pub provider: Option<Source>,
    pub model: Option<Source>,
    pub fork_subagent: Option<Source>,
    pub effort: Option<Source>,
    pub teammate_mode: Option<Source>,
    pub nats_url: Option<Source>,
    pub max_output_tokens: Option<Source>,
    pub openai_tool_choice: Option<Source>,
}

impl Settings {
    /// The model and where it was set.
    pub fn model_sourced(&self) -> Option<Sourced<&str>> {
        Sourced::of(self.model.as_deref(), self.origins.model.as_ref())
    }

    /// The provider and where it was set.
    pub fn provider_sourced(&self) -> Option<Sourced<Provider>> {
        Sourced::of(self.provider, self.origins.provider.as_ref())
    }

    /// `maxOutputTokens` and where it was set.
    pub fn max_output_tokens_sourced(&self) -> Option<Sourced<u32>> {
        Sourced::of(
            self.max_output_tokens,
            self.origins.max_output_tokens.as_ref(),
        )
    }

    /// `remote.natsUrl` and where it was set.
    pub fn nats_url_sourced(&self) -> Option<Sourced<&str>> {
        Sourced::of(self.nats_url.as_deref(), self.origins.nats_url.as_ref())
    }
}

/// The `sandbox` object of one settings file, with the folder its paths are relative to.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSource {
    pub settings: SandboxSettings,
    pub base: PathBuf,
    pub file: PathBuf,
    pub layer: Layer,
}

/// The `permissions` object of one settings file, with the folder its `/x` path rules are
/// relative to (the folder that holds `.claude/` or `.fleet/`).
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionSource {
    pub settings: PermissionSettings,
    pub base: PathBuf,
    pub file: PathBuf,
    pub layer: Layer,
}

/// One entry of the layer stack as it is applied: the text to read (already through the
/// trust gate), the name it goes by in errors and rules, its file, and the folder its
/// relative paths start from.
#[derive(Debug, Clone, PartialEq)]
pub struct StackEntry {
    pub layer: Layer,
    /// The name in errors and in the rules and hooks it brings (a path, or `--settings`).
    pub label: PathBuf,
    /// The file, when it was read from one.
    pub path: Option<PathBuf>,
    pub base: PathBuf,
    pub text: String,
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    permissions: Option<PermissionSettings>,
    #[serde(default, rename = "forkSubagent")]
    fork_subagent: Option<bool>,
    #[serde(default, rename = "teammateMode")]
    teammate_mode: Option<String>,
    #[serde(default)]
    sandbox: Option<SandboxSettings>,
    #[serde(default, rename = "shellEnvironmentPolicy")]
    shell_environment_policy: Option<EnvPolicy>,
    #[serde(default)]
    effort: Option<serde_json::Value>,
    #[serde(default, rename = "maxOutputTokens")]
    max_output_tokens: Option<serde_json::Value>,
    hooks: Option<serde_json::Value>,
    #[serde(default)]
    remote: Option<RemoteFile>,
    #[serde(default)]
    openai: Option<OpenAiFile>,
}

/// The `openai` object: `{"toolChoice": "auto"}`.
#[derive(Debug, Default, Deserialize)]
struct OpenAiFile {
    #[serde(default, rename = "toolChoice")]
    tool_choice: Option<String>,
}

/// The `remote` object: `{"natsUrl": "nats://host:4222"}`.
#[derive(Debug, Default, Deserialize)]
struct RemoteFile {
    #[serde(default, rename = "natsUrl")]
    nats_url: Option<String>,
}

impl Settings {
    /// Reads one stack entry over what earlier (lower) entries set.
    pub(crate) fn add(&mut self, entry: StackEntry) -> Result<(), ConfigError> {
        let StackEntry {
            layer,
            label,
            path,
            base,
            text,
        } = entry;
        let file: File = serde_json::from_str(&text).map_err(|error| ConfigError::Json {
            file: label.clone(),
            line: error.line(),
            column: error.column(),
            error,
        })?;
        let source = Source::new(layer, path);
        let field = |field: &'static str, problem: String| ConfigError::Field {
            file: label.clone(),
            field,
            problem,
        };
        let origins = &mut self.origins;
        if let Some(name) = file.provider {
            match name.parse() {
                Ok(provider) => {
                    self.provider = Some(provider);
                    origins.provider = Some(source.clone());
                }
                Err(_) => {
                    return Err(field(
                        "provider",
                        format!("`provider` is {name:?}; use \"anthropic\" or \"openai\""),
                    ))
                }
            }
        }
        if let Some(model) = file.model.filter(|m| !m.trim().is_empty()) {
            self.model = Some(model);
            origins.model = Some(source.clone());
        }
        if let Some(effort) = &file.effort {
            let text = effort
                .as_str()
                .map_or_else(|| effort.to_string(), str::to_string);
            let parsed = fleet_runtime::effort::parse_effort(&text)
                .map_err(|e| field("effort", format!("`effort`: {e}")))?;
            self.effort = Some(parsed);
            origins.effort = Some(source.clone());
        }
        if let Some(url) = file
            .remote
            .and_then(|r| r.nats_url)
            .filter(|u| !u.trim().is_empty())
        {
            self.nats_url = Some(url.trim().to_string());
            origins.nats_url = Some(source.clone());
        }
        if let Some(value) = &file.max_output_tokens {
            let tokens = value
                .as_u64()
                .filter(|n| *n >= 1)
                .and_then(|n| u32::try_from(n).ok());
            self.max_output_tokens = Some(tokens.ok_or_else(|| {
                field(
                    "maxOutputTokens",
                    format!(
                        "`maxOutputTokens` is {value}; use a whole number of tokens, at least 1"
                    ),
                )
            })?);
            origins.max_output_tokens = Some(source.clone());
        }
        if let Some(choice) = file.openai.and_then(|o| o.tool_choice) {
            self.openai_tool_choice = Some(choice.parse().map_err(|_| {
                field(
                    "openai.toolChoice",
                    format!(
                        "`openai.toolChoice` is {choice:?}; use \"omit\", \"auto\" or \"required\""
                    ),
                )
            })?);
            origins.openai_tool_choice = Some(source.clone());
        }
        if file.fork_subagent.is_some() {
            self.fork_subagent = file.fork_subagent;
            origins.fork_subagent = Some(source.clone());
        }
        if let Some(mode) = &file.teammate_mode {
            self.teammate_mode = Some(
                mode.parse()
                    .map_err(|e| field("teammateMode", format!("`teammateMode`: {e}")))?,
            );
            origins.teammate_mode = Some(source.clone());
        }
        if let Some(sandbox) = file.sandbox {
            self.sandbox.push(SandboxSource {
                settings: sandbox,
                base: base.clone(),
                file: label.clone(),
                layer,
            });
        }
        if let Some(policy) = file.shell_environment_policy {
            self.env_policy.merge(policy);
        }
        if let Some(hooks) = file.hooks {
            self.hooks.push((hooks, label.clone()));
        }
        if let Some(permissions) = file.permissions {
            self.permissions.push(PermissionSource {
                settings: permissions,
                base,
                file: label.clone(),
                layer,
            });
        }
        self.sources.push(label);
        Ok(())
    }
}
