//! A snapshot of the caller's checkout made to leave the machine (a remote job's repository):
//! the same snapshot commit the verifier gets, in a scratch repository of its own that shares
//! the user's objects, never checked out, so it can be bundled without touching the user's
//! repository, index or files.

use std::path::{Path, PathBuf};

use super::error::IsolationError;
use super::git::Git;
use super::manager::snapshot_clone;
use super::repo;

/// A snapshot ready to bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedSnapshot {
    /// The scratch repository holding the snapshot commit (`--shared` with the user's).
    pub repo: PathBuf,
    /// HEAD plus the uncommitted and untracked (not ignored) files, as a commit.
    pub commit: String,
    /// The caller's HEAD; `None` in a repository without commits.
    pub head: Option<String>,
    /// The caller's branch; `None` on a detached HEAD.
    pub branch: Option<String>,
    /// The caller's folder relative to the checkout's top; empty at the top.
    pub prefix: PathBuf,
}

/// Snapshots the checkout holding `caller_cwd` into the new folder `into`. Refuses a folder
/// outside any repository ([`IsolationError::NotARepo`] and its kin), as worktrees do.
pub async fn export_snapshot(
    caller_cwd: &Path,
    into: &Path,
    label: &str,
) -> Result<ExportedSnapshot, IsolationError> {
    let checkout = repo::resolve(caller_cwd).await?;
    let commit = snapshot_clone(&checkout, into, label, false).await?;
    let branch = Git::at(&checkout.root)
        .output(&[&"symbolic-ref", &"--short", &"-q", &"HEAD"])
        .await?;
    let branch = Some(branch.stdout.trim().to_string()).filter(|b| branch.success && !b.is_empty());
    Ok(ExportedSnapshot {
        repo: into.to_path_buf(),
        commit,
        head: checkout.head.clone(),
        branch,
        prefix: checkout.prefix.clone(),
    })
}
