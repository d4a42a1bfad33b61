//! The small JSON file kept beside each worktree (`agent-<id8>.json` next to `agent-<id8>/`).
//! It is written before git is asked for anything, so a worktree half-made or left behind by a
//! killed fleet is still found, and `list` reads these files instead of asking every repository.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::error::IsolationError;
use super::WorktreeKind;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Record {
    pub kind: WorktreeKind,
    /// The agent id (or, for a snapshot, its label).
    pub agent_id: String,
    pub path: PathBuf,
    pub cwd: PathBuf,
    /// The caller's checkout root.
    pub repo_root: PathBuf,
    /// The repository's common git folder.
    pub git_dir: PathBuf,
    pub branch: Option<String>,
    pub base_commit: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// The process that made it, to tell a worktree in use by a running fleet from a leftover.
    pub pid: u32,
}

impl Record {
    /// Where the record of the worktree at `path` lives.
    pub(crate) fn path_for(worktree: &Path) -> PathBuf {
        let mut name = worktree.file_name().unwrap_or_default().to_os_string();
        name.push(".json");
        worktree.with_file_name(name)
    }

    pub(crate) fn now() -> String {
        humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
    }

    /// Time since creation; zero when the stamp is unreadable or in the future.
    pub(crate) fn age(&self) -> Duration {
        humantime::parse_rfc3339(&self.created_at)
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .unwrap_or_default()
    }

    /// Writes the record atomically (temporary file, then rename), so a reader never sees half.
    pub(crate) async fn save(&self) -> Result<(), IsolationError> {
        let target = Self::path_for(&self.path);
        let bytes = serde_json::to_vec_pretty(self).map_err(|source| IsolationError::Record {
            path: target.clone(),
            source,
        })?;
        let tmp = target.with_extension(format!("json.tmp.{}", uuid::Uuid::new_v4().simple()));
        tokio::fs::write(&tmp, bytes)
            .await
            .map_err(|e| IsolationError::io("write", &tmp, e))?;
        tokio::fs::rename(&tmp, &target)
            .await
            .map_err(|e| IsolationError::io("rename into place", &target, e))
    }

    pub(crate) async fn load(file: &Path) -> Result<Self, IsolationError> {
        let bytes = tokio::fs::read(file)
            .await
            .map_err(|e| IsolationError::io("read", file, e))?;
        serde_json::from_slice(&bytes).map_err(|source| IsolationError::Record {
            path: file.to_path_buf(),
            source,
        })
    }

    /// Deletes the record; one already gone is fine.
    pub(crate) async fn remove(worktree: &Path) -> Result<(), IsolationError> {
        let file = Self::path_for(worktree);
        match tokio::fs::remove_file(&file).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(IsolationError::io("remove", &file, e))
            }
            _ => Ok(()),
        }
    }

    /// Every record under `root` (`<root>/<repo-slug>/*.json`), sorted by path. An unreadable
    /// record is returned as an error in its place rather than hiding the others.
    pub(crate) async fn all(
        root: &Path,
    ) -> Result<Vec<Result<Self, IsolationError>>, IsolationError> {
        let mut files = Vec::new();
        for repo_dir in read_dir(root).await? {
            for file in read_dir(&repo_dir).await? {
                if file.extension().is_some_and(|e| e == "json") {
                    files.push(file);
                }
            }
        }
        files.sort();
        let mut records = Vec::with_capacity(files.len());
        for file in files {
            records.push(Self::load(&file).await);
        }
        Ok(records)
    }
}

/// The entries of a folder; none when it does not exist (nothing was ever isolated).
async fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, IsolationError> {
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(Vec::new()),
        Err(e) => return Err(IsolationError::io("list", dir, e)),
    };
    let mut out = Vec::new();
    while let Some(entry) = entries
        .next_entry()
        .await
        .map_err(|e| IsolationError::io("list", dir, e))?
    {
        out.push(entry.path());
    }
    Ok(out)
}
