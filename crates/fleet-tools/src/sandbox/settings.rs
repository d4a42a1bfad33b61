//! The `"sandbox"` object of a settings file (Claude Code's shape), and the session-wide
//! [`SandboxConfig`] merged from every file and the command line.
//!
//! ```json
//! "sandbox": {
//!   "enabled": true,
//!   "filesystem": {"allowWrite": ["~/.cache/pip"], "denyWrite": ["./deploy"],
//!                  "denyRead": ["./secrets"], "allowRead": ["~/.aws"]},
//!   "network": false,
//!   "excludedCommands": ["docker *"],
//!   "autoAllowBashIfSandboxed": true,
//!   "failIfUnavailable": false,
//!   "readOnlyNetwork": false,
//!   "allowUnsandboxedReadOnly": false
//! }
//! ```
//!
//! Paths are written as in permission rules: `//abs` from the root, `~/x` from the home folder,
//! `/x`, `./x` or `x` from the folder the settings file belongs to; wildcards are allowed.
//! `allowRead` lifts default credential stores and the read-only sandbox's denial of the home
//! folder's dot-entries (and the Read tool's question about them, through the permission
//! rules). `allowRead`, `readOnlyNetwork` and `allowUnsandboxedReadOnly` widen what a command
//! that runs unasked can reach, so the caller honours them from the user's settings only. `network` is `true`/`false` or an object
//! `{"enabled": bool, "allowAllUnixSockets": bool}`.

use super::env::EnvPolicy;
use crate::permissions::{Rule, RuleError, RuleKind, RuleSet};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxSettings {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub filesystem: FilesystemSettings,
    #[serde(default)]
    pub network: Option<NetworkSetting>,
    #[serde(default)]
    pub excluded_commands: Vec<String>,
    #[serde(default)]
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    #[serde(default)]
    pub fail_if_unavailable: Option<bool>,
    /// `readOnlyNetwork`: whether commands in the read-only sandbox (read-only agents, the
    /// verification agent, commands the read-only classifier accepts) may use the network.
    /// Off by default: a command that runs unasked must not be able to send what it read
    /// anywhere. Honoured from the user's own settings only (the caller filters).
    #[serde(default)]
    pub read_only_network: Option<bool>,
    /// `allowUnsandboxedReadOnly`: whether read-only agents may run Bash where no sandbox can
    /// be had (a kernel without Landlock), keeping only the command classifier. Off by
    /// default. Honoured from the user's own settings only (the caller filters).
    #[serde(default)]
    pub allow_unsandboxed_read_only: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilesystemSettings {
    #[serde(default)]
    pub allow_write: Vec<String>,
    #[serde(default)]
    pub deny_write: Vec<String>,
    #[serde(default)]
    pub deny_read: Vec<String>,
    #[serde(default)]
    pub allow_read: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum NetworkSetting {
    Enabled(bool),
    Detailed(NetworkDetails),
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkDetails {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub allow_all_unix_sockets: Option<bool>,
}

/// How the sandbox works for a whole session: every settings file and flag merged. Shared by
/// every agent's [`AgentSandbox`](super::AgentSandbox).
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Whether agents without an always-on sandbox run their Bash commands sandboxed.
    pub enabled: bool,
    /// `filesystem.allowWrite`, as `Edit(...)` rules (their paths become writable roots).
    pub allow_write: Vec<Arc<Rule>>,
    /// `filesystem.denyWrite`, as `Edit(...)` rules.
    pub deny_write: Vec<Arc<Rule>>,
    /// `filesystem.denyRead`, as `Read(...)` rules.
    pub deny_read: Vec<Arc<Rule>>,
    /// `filesystem.allowRead`: default credential stores these name stay readable.
    pub allow_read: Vec<Arc<Rule>>,
    /// Whether sandboxed commands may use the network.
    pub network: bool,
    /// Whether sandboxed commands may create Unix sockets.
    pub unix_sockets: bool,
    /// `excludedCommands` as allow rules: a command they all cover runs outside the sandbox.
    pub excluded: RuleSet,
    pub auto_allow_bash: bool,
    pub fail_if_unavailable: bool,
    /// Whether the read-only sandbox lets commands use the network (`readOnlyNetwork`).
    pub read_only_network: bool,
    /// Whether read-only agents may run Bash unconfined where there is no sandbox
    /// (`allowUnsandboxedReadOnly`).
    pub allow_unsandboxed_read_only: bool,
    /// The environment tool processes get.
    pub env: EnvPolicy,
    /// The launcher binary; `None` to find it (see [`super::launcher::resolve`]).
    pub launcher: Option<PathBuf>,
}

impl Default for SandboxConfig {
    /// Off for ordinary agents (the always-on cases still apply), network on, secrets scrubbed.
    fn default() -> Self {
        Self {
            enabled: false,
            allow_write: Vec::new(),
            deny_write: Vec::new(),
            deny_read: Vec::new(),
            allow_read: Vec::new(),
            network: true,
            unix_sockets: false,
            excluded: RuleSet::default(),
            auto_allow_bash: false,
            fail_if_unavailable: false,
            read_only_network: false,
            allow_unsandboxed_read_only: false,
            env: EnvPolicy::default(),
            launcher: None,
        }
    }
}

impl SandboxConfig {
    /// `allowRead` as `Read(...)` allow rules, for the permission rules: a path the user lets
    /// commands read, the Read tool reads without asking either (a home dot-file outside the
    /// workspace otherwise asks; see `permissions::private_home`). Only for `allowRead` taken
    /// from the user's own settings.
    pub fn allow_read_rules(&self) -> Result<Vec<Arc<Rule>>, RuleError> {
        self.allow_read
            .iter()
            .map(|rule| {
                Rule::parse(
                    RuleKind::Allow,
                    &rule.to_string(),
                    rule.base().to_path_buf(),
                    rule.source(),
                )
                .map(Arc::new)
            })
            .collect()
    }

    /// Adds one settings file's `sandbox` object: its single values win over earlier files,
    /// its lists add up. `base` is the folder its paths are relative to, `source` names the file.
    pub fn add_settings(
        &mut self,
        settings: &SandboxSettings,
        base: &Path,
        source: &str,
    ) -> Result<(), RuleError> {
        if let Some(enabled) = settings.enabled {
            self.enabled = enabled;
        }
        let fs = &settings.filesystem;
        let paths = |tool: &str, specs: &[String]| -> Result<Vec<Arc<Rule>>, RuleError> {
            specs
                .iter()
                .map(|spec| {
                    Rule::parse(
                        RuleKind::Deny,
                        &format!("{tool}({spec})"),
                        base.into(),
                        source,
                    )
                    .map(Arc::new)
                })
                .collect()
        };
        self.allow_write.extend(paths("Edit", &fs.allow_write)?);
        self.deny_write.extend(paths("Edit", &fs.deny_write)?);
        self.deny_read.extend(paths("Read", &fs.deny_read)?);
        self.allow_read.extend(paths("Read", &fs.allow_read)?);
        match &settings.network {
            Some(NetworkSetting::Enabled(on)) => self.network = *on,
            Some(NetworkSetting::Detailed(details)) => {
                if let Some(on) = details.enabled {
                    self.network = on;
                }
                if let Some(unix) = details.allow_all_unix_sockets {
                    self.unix_sockets = unix;
                }
            }
            None => {}
        }
        for pattern in &settings.excluded_commands {
            let rule = if pattern.starts_with("Bash(") {
                pattern.clone()
            } else {
                format!("Bash({pattern})")
            };
            self.excluded
                .add(RuleKind::Allow, &rule, base.into(), source)?;
        }
        if let Some(auto) = settings.auto_allow_bash_if_sandboxed {
            self.auto_allow_bash = auto;
        }
        if let Some(fail) = settings.fail_if_unavailable {
            self.fail_if_unavailable = fail;
        }
        if let Some(on) = settings.read_only_network {
            self.read_only_network = on;
        }
        if let Some(allow) = settings.allow_unsandboxed_read_only {
            self.allow_unsandboxed_read_only = allow;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_shape_loads_and_merges() {
        let first: SandboxSettings = serde_json::from_str(
            r#"{"enabled": true, "filesystem": {"denyWrite": ["./deploy"]},
                "network": {"enabled": false, "allowAllUnixSockets": true, "allowLocalBinding": true},
                "excludedCommands": ["docker *"], "autoAllowBashIfSandboxed": true}"#,
        )
        .unwrap();
        let second: SandboxSettings = serde_json::from_str(
            r#"{"enabled": false, "filesystem": {"denyRead": ["~/.kube"]}, "network": true,
                "failIfUnavailable": true}"#,
        )
        .unwrap();
        let mut config = SandboxConfig::default();
        config
            .add_settings(&first, Path::new("/p"), "a.json")
            .unwrap();
        config
            .add_settings(&second, Path::new("/p"), "b.json")
            .unwrap();
        assert!(!config.enabled);
        assert!(config.network && config.unix_sockets);
        assert!(config.auto_allow_bash && config.fail_if_unavailable);
        assert_eq!(config.deny_write.len(), 1);
        assert_eq!(config.deny_read[0].to_string(), "Read(~/.kube)");
        assert_eq!(config.excluded.allow[0].to_string(), "Bash(docker *)");
    }

    #[test]
    fn a_bad_path_names_the_file() {
        let bad: SandboxSettings =
            serde_json::from_str(r#"{"filesystem": {"denyRead": ["~bob/x"]}}"#).unwrap();
        let err = SandboxConfig::default()
            .add_settings(&bad, Path::new("/p"), "s.json")
            .unwrap_err();
        assert!(err.to_string().contains("s.json"), "{err}");
    }
}
