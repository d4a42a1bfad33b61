//! fleet's settings files: provider, model and permission rules.
//!
//! Read lowest precedence first, later files winning for single values (provider, model,
//! `permissions.defaultMode`) while permission rules from every file add up (a deny anywhere
//! wins when they are evaluated):
//!
//! 1. user: `$FLEET_HOME/settings.json` (default `~/.fleet/settings.json`), then
//!    `~/.claude/settings.json`;
//! 2. project: `.claude/settings.json`, `.claude/settings.local.json`, `.fleet/settings.json`,
//!    `.fleet/settings.local.json` in the project folder — the nearest folder from the working
//!    directory up to the repository root that holds a `.fleet/` or `.claude/` folder (the home
//!    folder itself never counts as a project).
//!
//! 3. the `--settings` layer (a file or inline JSON), above every file, as Claude Code's flag
//!    settings. `--setting-sources` picks which of the files in 1 and 2 load (see
//!    `settings_flags`); the `--settings` layer always does.
//!
//! `openai.toolChoice` (`omit`, `auto` or `required`) is the `tool_choice` sent to
//! OpenAI-compatible servers with the tools; `FLEET_OPENAI_TOOL_CHOICE` beats it.
//!
//! `hooks` from every file run, in this order (Claude Code's shape; see `fleet_runtime::hooks`).
//! `sandbox` (see `fleet_tools::sandbox::settings`) and `shellEnvironmentPolicy` (see
//! `fleet_tools::sandbox::env`) configure the OS sandbox and the environment of tool
//! processes.
//!
//! Keys this version does not know are ignored, so newer files still load; a file that is not
//! valid JSON is an error naming the file, line and column.

use crate::trust::TrustReport;
use anyhow::{bail, Context};
use fleet_model::{Provider, ToolChoiceMode};
use fleet_tools::permissions::PermissionSettings;
use fleet_tools::sandbox::{EnvPolicy, SandboxSettings};
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub use crate::settings_flags::{SettingSource, SettingsFlags};

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
    pub effort: Option<fleet_runtime::definitions::Effort>,
    /// The `hooks` object of each file, lowest precedence first, with the file it came from;
    /// every file's hooks run (see `headless/hooks.rs`).
    pub hooks: Vec<(serde_json::Value, PathBuf)>,
    /// `teammateMode`: where teammates run (`auto`, `in-process`, `tmux`, `iterm2`).
    pub teammate_mode: Option<fleet_runtime::backends::detect::TeammateMode>,
    /// `remote.natsUrl`: the NATS server remote workers take jobs from (FLEET_NATS_URL and
    /// `--nats` win over it).
    pub nats_url: Option<String>,
    /// `maxOutputTokens`: the longest reply any agent asks for (`FLEET_MAX_OUTPUT_TOKENS`,
    /// `CLAUDE_CODE_MAX_OUTPUT_TOKENS` and `--max-output-tokens` win over it).
    pub max_output_tokens: Option<u32>,
    /// `openai.toolChoice`: the `tool_choice` sent with tools to OpenAI-compatible servers
    /// (`FLEET_OPENAI_TOOL_CHOICE` wins over it).
    pub openai_tool_choice: Option<ToolChoiceMode>,
    /// How the repository stands with the user: what its files ask for that needs trust,
    /// and whether it applies (see `crate::trust`).
    pub trust: TrustReport,
}

/// The `sandbox` object of one settings file, with the folder its paths are relative to.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSource {
    pub settings: SandboxSettings,
    pub base: PathBuf,
    pub file: PathBuf,
}

/// The `permissions` object of one settings file, with the folder its `/x` path rules are
/// relative to (the folder that holds `.claude/` or `.fleet/`).
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionSource {
    pub settings: PermissionSettings,
    pub base: PathBuf,
    pub file: PathBuf,
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

/// `$FLEET_HOME`, else `~/.fleet`.
pub fn fleet_home() -> Option<PathBuf> {
    match std::env::var_os("FLEET_HOME").filter(|v| !v.is_empty()) {
        Some(home) => Some(PathBuf::from(home)),
        None => home_dir().map(|h| h.join(".fleet")),
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The repository root above `cwd` (the first folder with a `.git`), if any.
pub fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The project folder: the nearest folder from `cwd` up to the repository root holding a
/// `.fleet/` or `.claude/` folder.
fn project_dir(cwd: &Path) -> Option<PathBuf> {
    let home = home_dir();
    for dir in cwd.ancestors() {
        let is_home = home.as_deref() == Some(dir);
        if !is_home && (dir.join(".fleet").is_dir() || dir.join(".claude").is_dir()) {
            return Some(dir.to_path_buf());
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// Every settings file that may apply in `cwd`, lowest precedence first, with the folder its
/// path rules are relative to and the source (`--setting-sources`) it belongs to.
fn candidate_files(cwd: &Path) -> Vec<(PathBuf, PathBuf, SettingSource)> {
    let mut files = Vec::new();
    if let Some(home) = fleet_home() {
        let base = home
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.clone());
        files.push((home.join("settings.json"), base, SettingSource::User));
    }
    if let Some(home) = home_dir() {
        files.push((
            home.join(".claude").join("settings.json"),
            home,
            SettingSource::User,
        ));
    }
    if let Some(project) = project_dir(cwd) {
        for (rel, source) in [
            (".claude/settings.json", SettingSource::Project),
            (".claude/settings.local.json", SettingSource::Local),
            (".fleet/settings.json", SettingSource::Project),
            (".fleet/settings.local.json", SettingSource::Local),
        ] {
            files.push((project.join(rel), project.clone(), source));
        }
    }
    files
}

/// Every settings file of `cwd`.
pub fn load(cwd: &Path) -> anyhow::Result<Settings> {
    load_with(cwd, &SettingsFlags::default())
}

/// The settings files `flags` lets in, then the `--settings` layer above them — each file the
/// repository wrote passed through the trust gate (see `crate::trust`).
pub fn load_with(cwd: &Path, flags: &SettingsFlags) -> anyhow::Result<Settings> {
    let mut settings = Settings::default();
    let root = crate::trust::repository_of(cwd);
    let mut report = TrustReport {
        root: Some(root.clone()),
        ..TrustReport::default()
    };
    let mut files = Vec::new();
    for (path, base, source) in candidate_files(cwd) {
        if files.iter().any(|f: &GatedFile| f.path == path) || !flags.loads(source) {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        files.push(GatedFile::read(
            path,
            base,
            source,
            text,
            &root,
            &mut report,
        )?);
    }
    report
        .items
        .extend(crate::trust::repository_items(cwd, &root));
    report.hash = crate::trust::hash(&report.items);
    report.trusted = report.items.is_empty()
        || flags
            .trust
            .unwrap_or_else(|| crate::trust::stored_trust(&root, &report.hash));
    for file in files {
        let text = file.text_to_use(report.trusted);
        settings.add(&text, file.path, file.base)?;
    }
    // The user's own approvals for this repository, kept where the repository cannot write.
    let approved = crate::trust::stored_allow_rules(&root);
    if !approved.is_empty() && flags.loads(SettingSource::Local) {
        let text = serde_json::json!({"permissions": {"allow": approved}}).to_string();
        let label = crate::trust::store_label(&root);
        settings.add(&text, label, root.clone())?;
    }
    if let Some(layer) = flags.layer(cwd)? {
        let base = project_dir(cwd).unwrap_or_else(|| cwd.to_path_buf());
        settings.add(&layer.text, layer.label, base)?;
    }
    settings.trust = report;
    Ok(settings)
}

/// One settings file on its way through the trust gate: as written, and without what needs
/// trust.
struct GatedFile {
    path: PathBuf,
    base: PathBuf,
    text: String,
    /// The file without user-only keys (when it is not the user's), if that changed it.
    own: Option<serde_json::Map<String, serde_json::Value>>,
    /// The file without what needs trust, if the repository wrote it and asked for any.
    untrusted: Option<serde_json::Map<String, serde_json::Value>>,
}

impl GatedFile {
    fn read(
        path: PathBuf,
        base: PathBuf,
        source: SettingSource,
        text: String,
        root: &Path,
        report: &mut TrustReport,
    ) -> anyhow::Result<Self> {
        let mut file = Self {
            path,
            base,
            text,
            own: None,
            untrusted: None,
        };
        // Not an object (or not JSON): `Settings::add` reports it with line and column.
        let Ok(serde_json::Value::Object(mut doc)) = serde_json::from_str(&file.text) else {
            return Ok(file);
        };
        if source != SettingSource::User {
            let removed = crate::trust::widening::strip_user_only(&mut doc);
            if !removed.is_empty() {
                report.user_only_ignored.extend(removed);
                file.own = Some(doc.clone());
            }
        }
        let repository_wrote = match source {
            SettingSource::User => false,
            SettingSource::Project => true,
            SettingSource::Local => {
                let tracked = fleet_runtime::tracked::tracked_by_git(&file.path);
                if tracked {
                    report.tracked_local.push(file.path.clone());
                }
                tracked
            }
        };
        if repository_wrote {
            let shown = file
                .path
                .strip_prefix(root)
                .unwrap_or(&file.path)
                .display()
                .to_string();
            let items = crate::trust::widening::strip(&mut doc, &shown);
            if !items.is_empty() {
                report.items.extend(items);
                file.untrusted = Some(doc);
            }
        }
        Ok(file)
    }

    /// The text the settings are read from: as written (less user-only keys), or without
    /// what needs trust.
    fn text_to_use(&self, trusted: bool) -> String {
        let chosen = match (&self.untrusted, &self.own) {
            (Some(doc), _) if !trusted => Some(doc),
            (_, Some(doc)) => Some(doc),
            _ => None,
        };
        match chosen {
            Some(doc) => serde_json::Value::Object(doc.clone()).to_string(),
            None => self.text.clone(),
        }
    }
}

impl Settings {
    /// Reads one settings file's `text` over what earlier (lower) files set. `path` names the
    /// file in errors and in the rules and hooks it brings.
    fn add(&mut self, text: &str, path: PathBuf, base: PathBuf) -> anyhow::Result<()> {
        let settings = self;
        let file: File = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}:{}: not valid settings JSON: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if let Some(name) = file.provider {
            match name.parse() {
                Ok(provider) => settings.provider = Some(provider),
                Err(_) => bail!(
                    "{}: `provider` is {name:?}; use \"anthropic\" or \"openai\"",
                    path.display()
                ),
            }
        }
        if let Some(model) = file.model.filter(|m| !m.trim().is_empty()) {
            settings.model = Some(model);
        }
        if let Some(effort) = &file.effort {
            let text = effort
                .as_str()
                .map_or_else(|| effort.to_string(), str::to_string);
            settings.effort = Some(
                fleet_runtime::effort::parse_effort(&text)
                    .map_err(|e| anyhow::anyhow!("{}: `effort`: {e}", path.display()))?,
            );
        }
        if let Some(url) = file
            .remote
            .and_then(|r| r.nats_url)
            .filter(|u| !u.trim().is_empty())
        {
            settings.nats_url = Some(url.trim().to_string());
        }
        if let Some(value) = &file.max_output_tokens {
            let tokens = value
                .as_u64()
                .filter(|n| *n >= 1)
                .and_then(|n| u32::try_from(n).ok());
            settings.max_output_tokens = Some(tokens.ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: `maxOutputTokens` is {value}; use a whole number of tokens, at least 1",
                    path.display()
                )
            })?);
        }
        if let Some(choice) = file.openai.and_then(|o| o.tool_choice) {
            settings.openai_tool_choice = Some(choice.parse().map_err(|_| {
                anyhow::anyhow!(
                    "{}: `openai.toolChoice` is {choice:?}; use \"omit\", \"auto\" or \"required\"",
                    path.display()
                )
            })?);
        }
        if file.fork_subagent.is_some() {
            settings.fork_subagent = file.fork_subagent;
        }
        if let Some(mode) = &file.teammate_mode {
            settings.teammate_mode = Some(
                mode.parse()
                    .map_err(|e| anyhow::anyhow!("{}: `teammateMode`: {e}", path.display()))?,
            );
        }
        if let Some(sandbox) = file.sandbox {
            settings.sandbox.push(SandboxSource {
                settings: sandbox,
                base: base.clone(),
                file: path.clone(),
            });
        }
        if let Some(policy) = file.shell_environment_policy {
            settings.env_policy.merge(policy);
        }
        if let Some(hooks) = file.hooks {
            settings.hooks.push((hooks, path.clone()));
        }
        if let Some(permissions) = file.permissions {
            settings.permissions.push(PermissionSource {
                settings: permissions,
                base,
                file: path.clone(),
            });
        }
        settings.sources.push(path);
        Ok(())
    }
}
