//! The folders configuration is read from, as plain data.
//!
//! Settings, skill approvals and MCP server definitions all look in the user's home, in
//! `$FLEET_HOME`, in Claude Code's folder and in the project. Each used to find those folders
//! itself from the process environment, with slightly different rules. Now the session layer
//! (`fleet_session::config`) resolves them once and passes a [`Locations`] down, so every
//! list of files is built from the same answer — and a test can point a session at any
//! folders without touching the process environment.
//!
//! This type lives here, not in `fleet-session`, because the runtime's loaders take it and
//! the runtime may not depend on the layer above it.

use crate::definitions::AgentSources;
use std::path::{Path, PathBuf};

/// Where one session's configuration lives. Nothing here reads the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The working folder (absolute): the project is found from here.
    pub cwd: PathBuf,
    /// The user's home folder (`$HOME`).
    pub home: Option<PathBuf>,
    /// `$FLEET_HOME`, else `~/.fleet`: fleet's user settings and the user's store.
    pub fleet_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR` when set: where Claude Code's `.claude.json` is read instead of
    /// the home folder.
    pub claude_config_dir: Option<PathBuf>,
    /// A folder of managed (administrator) settings. fleet reads none yet; the slot is here so
    /// the layer stack has one place to put it.
    pub managed_dir: Option<PathBuf>,
}

/// The two local settings files of a project folder, relative to it.
pub const LOCAL_SETTINGS_FILES: [&str; 2] =
    [".claude/settings.local.json", ".fleet/settings.local.json"];

impl Locations {
    /// `$FLEET_HOME/settings.json`: fleet's user settings.
    pub fn fleet_settings(&self) -> Option<PathBuf> {
        self.fleet_home.as_ref().map(|h| h.join("settings.json"))
    }

    /// `~/.claude/settings.json`: Claude Code's user settings.
    pub fn claude_settings(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| h.join(".claude").join("settings.json"))
    }

    /// The user's settings files, lowest precedence first: fleet's, then Claude Code's.
    pub fn user_settings_files(&self) -> Vec<PathBuf> {
        self.fleet_settings()
            .into_iter()
            .chain(self.claude_settings())
            .collect()
    }

    /// `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set): Claude Code's
    /// user and local MCP scopes and approvals.
    pub fn claude_json(&self) -> Option<PathBuf> {
        self.claude_config_dir
            .as_ref()
            .or(self.home.as_ref())
            .map(|dir| dir.join(".claude.json"))
    }

    /// The repository root above the working folder (the first folder with a `.git`).
    pub fn repo_root(&self) -> Option<PathBuf> {
        self.cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .map(Path::to_path_buf)
    }

    /// The settings files whose approvals count (of project MCP servers, of project skills'
    /// tools): the user's, then each of `project_dirs`' local settings files that git does
    /// not track (a committed local file is the repository's, not the user's). Never a
    /// project's shared `settings.json`, which the repository controls.
    pub fn approval_files(&self, project_dirs: &[PathBuf]) -> Vec<PathBuf> {
        let mut files = self.user_settings_files();
        for dir in project_dirs {
            files.extend(
                LOCAL_SETTINGS_FILES
                    .iter()
                    .map(|rel| dir.join(rel))
                    .filter(|file| !crate::tracked::tracked_by_git(file)),
            );
        }
        files
    }

    /// The user's store (`$FLEET_HOME/trust.json` and friends), when there is a fleet home.
    pub fn trust_store(&self) -> Option<fleet_store::trust::TrustStore> {
        self.fleet_home
            .as_ref()
            .map(|home| fleet_store::trust::TrustStore::new(&fleet_store::FleetHome::at(home)))
    }

    /// The folders an [`AgentSources`] names (it carries the same homes the session
    /// resolved), so what is read for agents and skills comes from the same answer.
    pub fn of_agent_sources(sources: &AgentSources) -> Self {
        Self {
            cwd: sources.cwd.clone(),
            home: sources.user_home.clone(),
            fleet_home: sources.fleet_home.clone(),
            ..Self::default()
        }
    }

    /// Where agent files and skills are looked for, with `--agents` JSON `command_line`.
    pub fn agent_sources(&self, command_line: Option<String>) -> AgentSources {
        AgentSources {
            cwd: self.cwd.clone(),
            repo_root: self.repo_root(),
            fleet_home: self.fleet_home.clone(),
            user_home: self.home.clone(),
            command_line,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_config_dir_moves_claude_json_but_not_the_user_settings() {
        let mut at = Locations {
            cwd: PathBuf::from("/w"),
            home: Some(PathBuf::from("/h")),
            fleet_home: Some(PathBuf::from("/f")),
            ..Locations::default()
        };
        assert_eq!(at.claude_json(), Some(PathBuf::from("/h/.claude.json")));
        at.claude_config_dir = Some(PathBuf::from("/c"));
        assert_eq!(at.claude_json(), Some(PathBuf::from("/c/.claude.json")));
        assert_eq!(
            at.user_settings_files(),
            [
                PathBuf::from("/f/settings.json"),
                PathBuf::from("/h/.claude/settings.json")
            ]
        );
        assert_eq!(at.trust_store().unwrap().path(), Path::new("/f/trust.json"));
    }
}
