//! Finding definitions: the command line, the project's `.fleet/agents/` and `.claude/agents/`,
//! the user's folders, then the built-ins; the first source to define a name wins.
//! (Stub: the full loader replaces this.)

use super::{builtin_agents, AgentDefinition};
use std::path::PathBuf;

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct AgentSources {
    pub cwd: PathBuf,
    /// The repository root; the project search goes from `cwd` up to here.
    pub repo_root: Option<PathBuf>,
    /// `$FLEET_HOME` (its `agents/` folder is the user's fleet agents).
    pub fleet_home: Option<PathBuf>,
    /// The user's home (its `.claude/agents/`).
    pub user_home: Option<PathBuf>,
    /// The JSON given with `--agents`.
    pub command_line: Option<String>,
}

/// A file that could not be loaded, or a field that was ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    pub path: Option<PathBuf>,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.message),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// The definitions in effect, after precedence.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
    shadowed: Vec<AgentDefinition>,
    warnings: Vec<LoadWarning>,
}

impl AgentCatalog {
    pub fn load(_sources: &AgentSources) -> Result<Self, super::parse::ParseError> {
        Ok(Self::builtin_only())
    }

    pub fn builtin_only() -> Self {
        Self::from_definitions(builtin_agents())
    }

    /// Definitions in precedence order: a later one with a name already seen is shadowed.
    pub fn from_definitions(defs: Vec<AgentDefinition>) -> Self {
        let mut catalog = Self::default();
        for def in defs {
            if catalog.agents.iter().any(|d| d.name == def.name) {
                catalog.shadowed.push(def);
            } else {
                catalog.agents.push(def);
            }
        }
        catalog
    }

    /// By exact name, else by a name differing only in case when exactly one does.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        if let Some(def) = self.agents.iter().find(|d| d.name == name) {
            return Some(def);
        }
        let mut folded = self
            .agents
            .iter()
            .filter(|d| d.name.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some(def), None) => Some(def),
            _ => None,
        }
    }

    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|d| d.name.as_str()).collect()
    }

    pub fn shadowed(&self) -> &[AgentDefinition] {
        &self.shadowed
    }

    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }
}
