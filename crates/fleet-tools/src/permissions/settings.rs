//! The `permissions` object of a settings file (`.claude/settings.json` and friends), and
//! merging several of them with the command line into one [`Permissions`].

use super::check::Permissions;
use super::mode::PermissionMode;
use super::rule::{split_rule_list, RuleError, RuleKind, RuleSet};
use crate::workspace::{self, Workspace};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PermissionSettings {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Typed so a misspelt mode fails where the file is parsed, with its line and column.
    #[serde(default)]
    pub default_mode: Option<PermissionMode>,
    /// Folders added to the workspace; relative ones are taken from the settings' base folder.
    #[serde(default)]
    pub additional_directories: Vec<String>,
}

/// One settings file's `permissions`, with what its rules are relative to.
#[derive(Debug, Clone)]
pub struct SettingsSource {
    pub settings: PermissionSettings,
    /// The folder `/x` specifiers are relative to: the project root for a project's settings,
    /// the home folder for the user's.
    pub base: PathBuf,
    /// Named in messages: the settings file's path.
    pub name: String,
}

/// The permission flags of the command line. Each `allowed_tools` / `disallowed_tools` entry
/// may itself hold several rules (`"Bash(git *) Edit"`).
#[derive(Debug, Clone, Default)]
pub struct CommandLinePermissions {
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// `--permission-mode`; wins over every settings file.
    pub mode: Option<PermissionMode>,
    /// `--add-dir`, relative to the cwd.
    pub add_dirs: Vec<PathBuf>,
}

/// Collects rules, folders and a mode from several places, lowest precedence first.
#[derive(Debug, Clone)]
pub struct PermissionsBuilder {
    mode: PermissionMode,
    rules: RuleSet,
    workspace: Workspace,
    home: Option<PathBuf>,
}

impl PermissionsBuilder {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            mode: PermissionMode::default(),
            rules: RuleSet::default(),
            workspace,
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
        }
    }

    /// The folder `~/` stands for; by default `$HOME`.
    pub fn home(&mut self, home: Option<PathBuf>) -> &mut Self {
        self.home = home;
        self
    }

    pub fn mode(&mut self, mode: PermissionMode) -> &mut Self {
        self.mode = mode;
        self
    }

    /// Adds a folder writes may go to; `dir` may be relative to `relative_to`, or start with
    /// `~/`.
    pub fn add_dir(&mut self, dir: &Path, relative_to: &Path) -> &mut Self {
        let dir = match (dir.strip_prefix("~"), &self.home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => dir.to_path_buf(),
        };
        let resolved = workspace::resolve(&dir, relative_to);
        self.workspace.add_dir(&resolved);
        self
    }

    /// Adds each rule in `rules` as `kind`.
    pub fn rules<S: AsRef<str>>(
        &mut self,
        kind: RuleKind,
        rules: &[S],
        base: &Path,
        source: &str,
    ) -> Result<&mut Self, RuleError> {
        for rule in rules {
            self.rules
                .add(kind, rule.as_ref(), base.to_path_buf(), source)?;
        }
        Ok(self)
    }

    /// Adds one settings file: its rules, its folders, and its `defaultMode` over any earlier.
    pub fn settings(
        &mut self,
        settings: &PermissionSettings,
        base: &Path,
        source: &str,
    ) -> Result<&mut Self, RuleError> {
        self.rules(RuleKind::Allow, &settings.allow, base, source)?;
        self.rules(RuleKind::Ask, &settings.ask, base, source)?;
        self.rules(RuleKind::Deny, &settings.deny, base, source)?;
        for dir in &settings.additional_directories {
            self.add_dir(Path::new(dir), base);
        }
        if let Some(mode) = settings.default_mode {
            self.mode = mode;
        }
        Ok(self)
    }

    /// Adds the command line: its rules (relative to `cwd`), folders and mode.
    pub fn command_line(
        &mut self,
        cli: &CommandLinePermissions,
        cwd: &Path,
    ) -> Result<&mut Self, RuleError> {
        let split = |lists: &[String]| -> Vec<String> {
            lists
                .iter()
                .flat_map(|list| split_rule_list(list))
                .collect()
        };
        self.rules(
            RuleKind::Allow,
            &split(&cli.allowed_tools),
            cwd,
            "--allowedTools",
        )?;
        self.rules(
            RuleKind::Deny,
            &split(&cli.disallowed_tools),
            cwd,
            "--disallowedTools",
        )?;
        for dir in &cli.add_dirs {
            self.add_dir(dir, cwd);
        }
        if let Some(mode) = cli.mode {
            self.mode = mode;
        }
        Ok(self)
    }

    pub fn build(self) -> Permissions {
        Permissions::assemble(self.mode, self.rules, Arc::new(self.workspace), self.home)
    }
}

impl Permissions {
    pub fn builder(workspace: Workspace) -> PermissionsBuilder {
        PermissionsBuilder::new(workspace)
    }

    /// Merges settings files (lowest precedence first) and the command line. Rules from every
    /// source apply (a deny anywhere wins); the mode is the command line's, else the last
    /// `defaultMode`, else default.
    pub fn from_sources(
        workspace: Workspace,
        sources: &[SettingsSource],
        cli: &CommandLinePermissions,
        cwd: &Path,
    ) -> Result<Self, RuleError> {
        let mut builder = PermissionsBuilder::new(workspace);
        for source in sources {
            builder.settings(&source.settings, &source.base, &source.name)?;
        }
        builder.command_line(cli, cwd)?;
        Ok(builder.build())
    }
}
