//! Where definitions live: which folders are searched, in which order, and which files in
//! them are agent files.

use super::{AgentSource, LoadWarning};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

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

/// Whether a folder holds the project's agents or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderScope {
    Project,
    User,
}

/// One folder of agent files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFolder {
    pub path: PathBuf,
    pub scope: FolderScope,
}

impl AgentFolder {
    /// The source a file found in this folder gets.
    pub fn source_for(&self, file: &Path) -> AgentSource {
        match self.scope {
            FolderScope::Project => AgentSource::Project(file.to_path_buf()),
            FolderScope::User => AgentSource::User(file.to_path_buf()),
        }
    }
}

impl AgentSources {
    /// The folders that exist, highest precedence first: the nearest `.fleet/agents/` and the
    /// nearest `.claude/agents/` from `cwd` up to the repository root, then
    /// `<fleet_home>/agents/`, then `<user_home>/.claude/agents/`. A folder reached twice (the
    /// home folder as the project, a symlink) is listed once, at its first place.
    pub fn folders(&self) -> Vec<AgentFolder> {
        let mut candidates = Vec::new();
        let project_dirs = self.project_dirs();
        for rel in [".fleet/agents", ".claude/agents"] {
            if let Some(found) = project_dirs
                .iter()
                .map(|d| d.join(rel))
                .find(|p| p.is_dir())
            {
                candidates.push((found, FolderScope::Project));
            }
        }
        if let Some(home) = &self.fleet_home {
            candidates.push((home.join("agents"), FolderScope::User));
        }
        if let Some(home) = &self.user_home {
            candidates.push((home.join(".claude").join("agents"), FolderScope::User));
        }
        let mut seen = HashSet::new();
        candidates
            .into_iter()
            .filter(|(path, _)| path.is_dir())
            .filter(|(path, _)| seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())))
            .map(|(path, scope)| AgentFolder { path, scope })
            .collect()
    }

    /// `cwd` and its parents up to the repository root, nearest first; only `cwd` when there
    /// is no root above it. The user's home never counts as a project (its `.claude/` is the
    /// user's own configuration). Skills are looked up the same way.
    pub(crate) fn project_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        match &self.repo_root {
            Some(root) if self.cwd.starts_with(root) => {
                for dir in self.cwd.ancestors() {
                    dirs.push(dir.to_path_buf());
                    if dir == root {
                        break;
                    }
                }
            }
            _ => dirs.push(self.cwd.clone()),
        }
        if let Some(home) = &self.user_home {
            let home = home.canonicalize().unwrap_or_else(|_| home.clone());
            dirs.retain(|d| d.canonicalize().unwrap_or_else(|_| d.clone()) != home);
        }
        dirs
    }
}

/// Every `*.md` file under `dir`, at any depth, sorted by path so the result does not depend
/// on the order the file system lists them. Hidden files and folders are skipped; folders that
/// cannot be read are reported and skipped.
pub fn find_agent_files(dir: &Path) -> (Vec<PathBuf>, Vec<LoadWarning>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut visited = HashSet::new();
    walk(dir, &mut files, &mut warnings, &mut visited);
    files.sort();
    (files, warnings)
}

fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    warnings: &mut Vec<LoadWarning>,
    visited: &mut HashSet<PathBuf>,
) {
    // Symlinked folders are followed once, so a link back up cannot loop forever.
    if !visited.insert(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())) {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            warnings.push(LoadWarning {
                path: Some(dir.to_path_buf()),
                line: None,
                message: format!("cannot read this folder ({e}); its agents are skipped"),
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                warnings.push(LoadWarning {
                    path: Some(dir.to_path_buf()),
                    line: None,
                    message: format!("cannot list an entry of this folder ({e}); skipped"),
                });
                continue;
            }
        };
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // `metadata` follows symlinks, so a linked file or folder counts as what it points to.
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, files, warnings, visited),
            Ok(meta) if meta.is_file() && is_markdown(&path) => files.push(path),
            Ok(_) => {}
            Err(e) if is_markdown(&path) => warnings.push(LoadWarning {
                path: Some(path),
                line: None,
                message: format!("cannot read this file ({e}); skipped"),
            }),
            Err(_) => {}
        }
    }
}

fn is_markdown(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("md"))
}
