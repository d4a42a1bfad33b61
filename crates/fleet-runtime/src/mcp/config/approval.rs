//! Which project-defined MCP servers the user has approved.
//!
//! A repository's `.mcp.json` (and an inline server in one of its `.claude/agents/*.md`) is a
//! command line written by whoever wrote the repository. Starting it unasked would let a cloned
//! repository run any program the moment fleet starts in it, before any permission rule is
//! consulted. So, as in Claude Code, a project server starts only once approved, in a place
//! the repository's authors do not control by committing a file others then trust:
//!
//! - the user's settings (`$FLEET_HOME/settings.json`, `~/.claude/settings.json`);
//! - `~/.claude.json`, at the top level or in the `projects` entry for the repository;
//! - the project's *local* settings (`.claude/settings.local.json`,
//!   `.fleet/settings.local.json`), which are the user's own and not shared — unless git
//!   tracks them: a committed local file is the repository's and approves nothing;
//! - the user's store (`$FLEET_HOME/trust.json`): the repository trusted as a whole (`fleet
//!   trust`), or one server approved by `fleet mcp add`.
//!
//! The list of those files is [`crate::locations::Locations::approval_files`], shared with
//! the approval of project skills' tools.
//!
//! The keys are Claude Code's:
//! - `enableAllProjectMcpServers: true` approves every project server;
//! - `enabledMcpjsonServers: [names]` approves some;
//! - `disabledMcpjsonServers: [names]` refuses some, whatever else says.
//!
//! Servers from the user's own configuration and from `--mcp-config` need no approval: the
//! user wrote or named them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The user's decisions on project servers, merged from every trusted file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpApproval {
    /// `enableAllProjectMcpServers` was set in one of the files.
    pub all: bool,
    pub enabled: BTreeSet<String>,
    pub disabled: BTreeSet<String>,
}

impl McpApproval {
    /// Whether the project server `name` may start.
    pub fn allows(&self, name: &str) -> bool {
        !self.disabled.contains(name) && (self.all || self.enabled.contains(name))
    }

    /// Why `name` may not start, for warnings and refused spawns.
    pub fn refusal(&self, name: &str, origin: &str) -> String {
        if self.disabled.contains(name) {
            format!("the project server from {origin} is listed in disabledMcpjsonServers")
        } else {
            format!(
                "the project server from {origin} is not approved: a repository's servers run \
                 only once you approve them. Run `fleet trust` to trust the repository, or add \
                 {name:?} to \"enabledMcpjsonServers\" in your user settings"
            )
        }
    }

    /// Reads the trusted files: `settings` (whole settings documents) and `claude_json` with
    /// the `projects` entries for `local_keys`. Files that are missing or unreadable add
    /// nothing (the settings loader reports bad settings files itself).
    pub fn read(settings: &[PathBuf], claude_json: Option<&Path>, local_keys: &[PathBuf]) -> Self {
        let mut approval = Self::default();
        for path in settings {
            if let Some(doc) = read_object(path) {
                approval.merge(&doc);
            }
        }
        if let Some(doc) = claude_json.and_then(read_object) {
            approval.merge(&doc);
            for key in local_keys {
                let entry = doc
                    .get("projects")
                    .and_then(|p| p.get(key.to_string_lossy().as_ref()))
                    .and_then(Value::as_object);
                if let Some(entry) = entry {
                    approval.merge(entry);
                }
            }
        }
        approval
    }

    fn merge(&mut self, doc: &Map<String, Value>) {
        if doc.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)) {
            self.all = true;
        }
        let names = |key: &str| -> Vec<String> {
            doc.get(key)
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.enabled.extend(names("enabledMcpjsonServers"));
        self.disabled.extend(names("disabledMcpjsonServers"));
    }
}

/// The hash of project server `name` as written (variables unexpanded) in the innermost of
/// `files` (`.mcp.json`, outermost first) that defines it: what a one-by-one approval in the
/// user's store is recorded against, so a changed command needs approving again.
pub fn project_server_hash(files: &[PathBuf], name: &str) -> Option<String> {
    let entry = files.iter().rev().find_map(|file| {
        read_object(file)?
            .get("mcpServers")?
            .as_object()?
            .get(name)
            .cloned()
    })?;
    Some(crate::tracked::approval_hash(&entry.to_string()))
}

fn read_object(path: &Path) -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str::<Value>(&text).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(path: &Path, value: Value) {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).ok();
        std::fs::write(path, value.to_string()).ok();
    }

    #[test]
    fn nothing_is_approved_by_default_and_disabled_beats_everything() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let user = dir.path().join("user.json");
        let local = dir.path().join("local.json");
        assert!(!McpApproval::read(std::slice::from_ref(&user), None, &[]).allows("db"));
        write(&user, json!({"enableAllProjectMcpServers": true}));
        write(&local, json!({"disabledMcpjsonServers": ["db"]}));
        let approval = McpApproval::read(&[user, local], None, &[]);
        assert!(approval.allows("other"));
        assert!(!approval.allows("db"));
        assert!(approval
            .refusal("db", ".mcp.json")
            .contains("disabledMcpjsonServers"));
    }

    #[test]
    fn claude_json_projects_entries_count_for_their_folder_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let claude = dir.path().join(".claude.json");
        write(
            &claude,
            json!({"projects": {"/repo": {"enabledMcpjsonServers": ["db"]}}}),
        );
        let here = McpApproval::read(&[], Some(&claude), &[PathBuf::from("/repo")]);
        assert!(here.allows("db") && !here.allows("web"));
        let elsewhere = McpApproval::read(&[], Some(&claude), &[PathBuf::from("/other")]);
        assert!(!elsewhere.allows("db"));
    }
}
