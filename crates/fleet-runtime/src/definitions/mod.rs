//! Agent definitions: what a subagent is (prompt, tools, model, limits), where definitions come
//! from, and the built-in ones.
//!
//! Definitions are Markdown files with YAML frontmatter, the format Claude Code users already
//! have in `.claude/agents/`. Real files are often not strict YAML, so parsing is forgiving the
//! way Claude Code is (see `frontmatter`), and a file that still cannot be read is skipped with
//! a warning naming the file and line instead of stopping the others from loading.

mod builtin;
mod confined;
mod discover;
mod fields;
mod frontmatter;
mod json;
mod lint;
mod loader;
mod loose;
mod parse;
mod values;

pub use builtin::builtin_agents;
pub use confined::{confined_name, project_widening, strip_project_widening};
pub use discover::{find_agent_files, AgentFolder, AgentSources, FolderScope};
pub use json::parse_command_line_agents;
pub use lint::{known_tool_names, lint_agent_file};
pub use loader::{scan_file, scan_folder, AgentCatalog, LoadWarning, ScannedFile};
pub use parse::{parse_agent_file, ParseError};
// Skills are Markdown with the same loose frontmatter, read by the same code.
pub(crate) use frontmatter::{read_fields, split};
pub(crate) use values::{text as scalar_text, tool_tokens};

use fleet_tools::permissions::PermissionMode;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One agent type the Agent tool can start.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// The `subagent_type` the model names it by.
    pub name: String,
    /// When to use it; shown to the model in the Agent tool's description.
    pub description: String,
    /// The agent's system prompt (the file's body).
    pub prompt: String,
    /// The tools it may have; `None` means every tool the parent has (`*` or no `tools`).
    pub tools: Option<Vec<ToolEntry>>,
    /// Tools taken away; an entry with a specifier (`Bash(rm *)`) is a deny rule instead.
    pub disallowed_tools: Vec<ToolEntry>,
    pub model: Option<ModelSetting>,
    pub permission_mode: Option<PermissionMode>,
    pub max_turns: Option<u32>,
    pub skills: Vec<String>,
    /// Server names or inline server configs; started per agent (MCP comes later).
    pub mcp_servers: Vec<Value>,
    pub hooks: Option<Value>,
    pub memory: Option<MemoryScope>,
    /// Always run as a background task.
    pub background: bool,
    pub effort: Option<Effort>,
    pub isolation: Option<Isolation>,
    pub color: Option<String>,
    /// Put before the first user turn.
    pub initial_prompt: Option<String>,
    /// Frontmatter fields fleet does not know, kept so nothing a user wrote is lost.
    pub extra: BTreeMap<String, Value>,
    pub source: AgentSource,
    /// Limits a built-in places on itself beyond its tool list.
    pub restriction: Restriction,
}

impl AgentDefinition {
    /// A definition with only the required fields, everything else unset.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        prompt: impl Into<String>,
        source: AgentSource,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            prompt: prompt.into(),
            tools: None,
            disallowed_tools: Vec::new(),
            model: None,
            permission_mode: None,
            max_turns: None,
            skills: Vec::new(),
            mcp_servers: Vec::new(),
            hooks: None,
            memory: None,
            background: false,
            effort: None,
            isolation: None,
            color: None,
            initial_prompt: None,
            extra: BTreeMap::new(),
            source,
            restriction: Restriction::None,
        }
    }

    pub fn is_builtin(&self) -> bool {
        self.source == AgentSource::BuiltIn
    }
}

/// One entry of `tools` / `disallowedTools`: `Read`, `Bash(git *)`, `mcp__github__*`, `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// The tool name or name pattern (`*` matches any run of characters).
    pub name: String,
    /// What is inside the parentheses, if anything.
    pub specifier: Option<String>,
}

impl ToolEntry {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            specifier: None,
        }
    }

    /// Whether this entry names the tool `tool` (ignoring any specifier).
    pub fn matches_name(&self, tool: &str) -> bool {
        wildcard_match(&self.name, tool)
    }

    /// The entry as written: `Bash(git *)`.
    pub fn to_rule_string(&self) -> String {
        match &self.specifier {
            Some(spec) => format!("{}({spec})", self.name),
            None => self.name.clone(),
        }
    }
}

/// `*` matches any run of characters; everything else literally.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSetting {
    /// Use the parent's model.
    Inherit,
    /// An alias (`sonnet`, `opus`, `haiku`) or a full model id.
    Named(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    User,
    Project,
    Local,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effort {
    /// `low`, `medium`, `high`, `max` (kept as written, lower-cased).
    Level(String),
    /// A thinking budget in tokens.
    Tokens(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    Worktree,
    Remote,
}

/// Where a definition came from, highest precedence first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// `--agents '<json>'`.
    CommandLine,
    /// `.fleet/agents/` or `.claude/agents/` of the project.
    Project(PathBuf),
    /// `~/.fleet/agents/` (really `$FLEET_HOME/agents/`) or `~/.claude/agents/`.
    User(PathBuf),
    BuiltIn,
}

impl AgentSource {
    /// `cli`, `project`, `user` or `built-in`, as `fleet agents list` shows it.
    pub fn label(&self) -> &'static str {
        match self {
            Self::CommandLine => "cli",
            Self::Project(_) => "project",
            Self::User(_) => "user",
            Self::BuiltIn => "built-in",
        }
    }

    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Self::Project(p) | Self::User(p) => Some(p),
            Self::CommandLine | Self::BuiltIn => None,
        }
    }
}

/// What a built-in may not do even with the tools it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Restriction {
    #[default]
    None,
    /// Only read-only tools, and Bash only for commands that change nothing (Explore, Plan).
    ReadOnly,
    /// Nothing in the project may change; Bash may write only under the system temp dir
    /// (verification).
    TempWritesOnly,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_entries_match_names_with_wildcards() {
        assert!(ToolEntry::new("mcp__github__*").matches_name("mcp__github__create_issue"));
        assert!(!ToolEntry::new("mcp__github__*").matches_name("mcp__gitlab__x"));
        assert!(ToolEntry::new("*").matches_name("Read"));
        assert!(ToolEntry::new("Read").matches_name("Read"));
        assert!(!ToolEntry::new("Read").matches_name("ReadMore"));
        assert!(ToolEntry::new("mcp__*__list").matches_name("mcp__db__list"));
    }
}
