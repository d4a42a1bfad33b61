//! Agent memory: a folder that outlives the session, for an agent type whose definition says
//! `memory: user | project | local`.
//!
//! - `user`: `~/.claude/agent-memory/<agent>/` (the agent remembers across projects);
//! - `project`: `<repo>/.claude/agent-memory/<agent>/` (meant to be committed and shared);
//! - `local`: `<repo>/.claude/agent-memory-local/<agent>/` (this checkout only).
//!
//! The folder is made the first time an agent of that type starts. The first
//! [`MEMORY_PROMPT_LINES`] lines of its `MEMORY.md` go into the agent's system prompt with a
//! short note on keeping it, and the agent may Read, Write and Edit inside the folder without
//! being asked (allow rules naming the folder, which also cover it being under the protected
//! `.claude/`). Every instance of the type shares the folder; the Write tool replaces files
//! atomically, so two instances writing at once never leave a torn file (the last write wins).

use crate::definitions::MemoryScope;
use fleet_tools::permissions::{folder_rule, Permissions, RuleKind};
use std::path::{Path, PathBuf};

/// The index file read into the prompt.
pub const MEMORY_FILE: &str = "MEMORY.md";
/// How much of `MEMORY.md` the prompt carries: enough for an index, not a whole notebook.
pub const MEMORY_PROMPT_LINES: usize = 200;
/// Bytes of `MEMORY.md` read at most, whatever its line lengths.
const MAX_MEMORY_BYTES: usize = 64 * 1024;

/// Why an agent's memory folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("agent memory `user` needs a home folder (HOME is not set)")]
    NoHome,
    #[error("cannot create the agent memory folder {path}: {source}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot allow the agent memory folder {path}: {message}")]
    Rule { path: PathBuf, message: String },
}

/// One agent type's memory folder, made if it was missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMemory {
    pub dir: PathBuf,
    pub scope: MemoryScope,
}

impl AgentMemory {
    /// Where `agent`'s memory of `scope` lives, for a project rooted at `repo_root` and a
    /// user whose home is `home`.
    pub fn locate(
        scope: MemoryScope,
        agent: &str,
        repo_root: &Path,
        home: Option<&Path>,
    ) -> Result<PathBuf, MemoryError> {
        let folder = folder_name(agent);
        Ok(match scope {
            MemoryScope::User => home
                .ok_or(MemoryError::NoHome)?
                .join(".claude/agent-memory")
                .join(folder),
            MemoryScope::Project => repo_root.join(".claude/agent-memory").join(folder),
            MemoryScope::Local => repo_root.join(".claude/agent-memory-local").join(folder),
        })
    }

    /// Finds the folder and creates it (with its parents) if it does not exist yet.
    pub fn open(
        scope: MemoryScope,
        agent: &str,
        repo_root: &Path,
        home: Option<&Path>,
    ) -> Result<Self, MemoryError> {
        let dir = Self::locate(scope, agent, repo_root, home)?;
        std::fs::create_dir_all(&dir).map_err(|source| MemoryError::Create {
            path: dir.clone(),
            source,
        })?;
        let dir = dir.canonicalize().unwrap_or(dir);
        Ok(Self { dir, scope })
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join(MEMORY_FILE)
    }

    /// Lets the agent Read, Write and Edit in its folder without being asked.
    pub fn allow(&self, permissions: &mut Permissions) -> Result<(), MemoryError> {
        for tool in ["Read", "Edit", "Write"] {
            permissions
                .rules
                .add(
                    RuleKind::Allow,
                    &folder_rule(tool, &self.dir),
                    self.dir.clone(),
                    "agent memory",
                )
                .map_err(|err| MemoryError::Rule {
                    path: self.dir.clone(),
                    message: err.to_string(),
                })?;
        }
        Ok(())
    }

    /// The system-prompt block: where the memory is, how to keep it, and the start of
    /// `MEMORY.md` as it is now.
    pub fn prompt(&self) -> String {
        let index = self.index_path();
        let mut out = format!(
            "<agent-memory>\nYou have a persistent memory folder: {dir}. It outlives this \
             session, and every agent of your type shares it. {index} is its index; the start \
             of it is below. Before you finish, record what a later run of your type should \
             know (facts learned, decisions, where things are) by editing {index}: keep it \
             short and current, one point per line, and update or remove lines that are wrong. \
             Put longer notes in other files in the folder and link them from {index}. Only \
             the first {MEMORY_PROMPT_LINES} lines are shown at the start of a session.\n",
            dir = self.dir.display(),
            index = index.display(),
        );
        match read_head(&index) {
            Some(head) if !head.trim().is_empty() => {
                out.push_str(&format!("\nContents of {}:\n{head}\n", index.display()));
            }
            _ => out.push_str(&format!("\n{} is empty so far.\n", index.display())),
        }
        out.push_str("</agent-memory>");
        out
    }
}

/// The first [`MEMORY_PROMPT_LINES`] lines of `path`, with a note when there are more.
fn read_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_MEMORY_BYTES as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MEMORY_PROMPT_LINES && bytes.len() < MAX_MEMORY_BYTES {
        return Some(text.trim_end().to_string());
    }
    let shown = lines.len().min(MEMORY_PROMPT_LINES);
    Some(format!(
        "{}\n[… cut after {shown} lines: keep MEMORY.md shorter, moving details to other files]",
        lines[..shown].join("\n")
    ))
}

/// The agent type as one folder name: anything but letters, digits, `-`, `_` and `.` becomes
/// `-`, so a name can never climb out of the memory folder.
fn folder_name(agent: &str) -> String {
    let name: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    match name.trim_matches('.') {
        "" => "agent".to_string(),
        _ => name,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fleet_tools::permissions::{PermissionMode, RuleSet};
    use fleet_tools::{Access, Workspace};
    use std::sync::Arc;

    #[test]
    fn scopes_map_to_their_folders() {
        let repo = Path::new("/r");
        let home = Some(Path::new("/h"));
        let at = |scope| AgentMemory::locate(scope, "rev/../x", repo, home).unwrap();
        assert_eq!(
            at(MemoryScope::User),
            Path::new("/h/.claude/agent-memory/rev-..-x")
        );
        assert_eq!(
            at(MemoryScope::Project),
            Path::new("/r/.claude/agent-memory/rev-..-x")
        );
        assert_eq!(
            at(MemoryScope::Local),
            Path::new("/r/.claude/agent-memory-local/rev-..-x")
        );
        assert!(AgentMemory::locate(MemoryScope::User, "a", repo, None).is_err());
        assert_eq!(folder_name(".."), "agent");
    }

    #[test]
    fn the_prompt_shows_the_first_lines_only() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = AgentMemory::open(MemoryScope::Project, "notes", tmp.path(), None).unwrap();
        assert!(memory.dir.is_dir());
        assert!(memory.prompt().contains("is empty so far"));
        let text: Vec<String> = (1..=250).map(|i| format!("fact {i}")).collect();
        std::fs::write(memory.index_path(), text.join("\n")).unwrap();
        let prompt = memory.prompt();
        assert!(prompt.contains("fact 200\n"));
        assert!(!prompt.contains("fact 201"));
        assert!(prompt.contains("cut after 200 lines"));
    }

    #[test]
    fn writes_in_the_folder_are_allowed_even_under_claude() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let memory = AgentMemory::open(MemoryScope::Project, "notes", &root, None).unwrap();
        let mut permissions = Permissions::new(
            PermissionMode::Default,
            RuleSet::default(),
            Arc::new(Workspace::new(&root)),
        );
        let write = Access::Write(memory.index_path());
        let before = permissions.check("Write", false, &write, &root);
        assert!(!before.is_allowed());
        memory.allow(&mut permissions).unwrap();
        assert!(permissions
            .check("Write", false, &write, &root)
            .is_allowed());
        let elsewhere = Access::Write(root.join(".claude/settings.json"));
        assert!(!permissions
            .check("Write", false, &elsewhere, &root)
            .is_allowed());
    }
}
