//! Isolation: git worktrees for agents, and throwaway snapshots for the verifier.
//!
//! An isolated agent works in its own `git worktree` under
//! `$FLEET_HOME/worktrees/<repo-slug>/agent-<id8>`, on a new branch `fleet/agent-<id8>` made from
//! the **current HEAD of the caller's checkout** (not `origin/HEAD`: a local commit the remote
//! lacks is where the user stands, so that is where the agent starts). A detached HEAD works the
//! same way: the branch starts at the detached commit. Worktrees live outside the repository so
//! tools walking the repository never see them.
//!
//! When the agent ends, [`WorktreeManager::finish`] removes the worktree and its branch only if
//! HEAD has not moved and nothing is modified, staged or untracked; otherwise both are kept and
//! described by a [`WorktreeReport`]. Nothing an agent wrote is ever deleted by `finish`.
//!
//! A snapshot ([`WorktreeManager::create_snapshot`]) is a detached worktree holding the caller's
//! checkout as it is now, uncommitted and untracked files included, made through a private index
//! so the user's index and files are never touched.
//!
//! Each worktree has a JSON record beside it, so [`WorktreeManager::list`] and
//! [`WorktreeManager::clean`] find worktrees of every repository, including ones a killed run left.
//! All git work goes through one module (`git.rs`); it retries git's lock races and serialises
//! worktree registration per repository within the process, while checking files out and
//! deleting them run side by side.

mod agents;
mod error;
mod export;
mod git;
mod inspect;
mod listing;
mod manager;
mod record;
mod repo;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use agents::Isolator;
pub use error::IsolationError;
pub use export::{export_snapshot, ExportedSnapshot};
pub use listing::{
    CleanReport, CleanTarget, KeepReason, KeptWorktree, WorktreeInfo, WorktreeState,
};
pub use manager::WorktreeManager;

/// What a worktree is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorktreeKind {
    /// An isolated agent's worktree, on its own branch.
    Agent,
    /// A detached throwaway copy of the caller's current state (the verifier's).
    Snapshot,
    /// Made by a `WorktreeCreate` hook: fleet neither inspects nor removes it (the
    /// `WorktreeRemove` hooks do), and keeps no record of it.
    Hooked,
}

/// A worktree an isolated agent (or the verifier) runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// `$FLEET_HOME/worktrees/<repo-slug>/agent-<id8>` (or `snapshot-…`).
    pub path: PathBuf,
    /// The caller's cwd mapped into the worktree: the same path relative to the checkout root.
    pub cwd: PathBuf,
    /// The caller's checkout root (a main checkout or, for nested agents, another worktree).
    pub repo_root: PathBuf,
    /// `fleet/agent-<id8>`; `None` for a snapshot.
    pub branch: Option<String>,
    /// The commit it started from (for a snapshot, the snapshot commit).
    pub base_commit: String,
    pub kind: WorktreeKind,
    /// The repository's common git folder, shared by all its worktrees: where removal runs even
    /// when `repo_root` (a parent agent's worktree) is already gone.
    pub git_dir: PathBuf,
}

/// How [`WorktreeManager::finish`] ended a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing was changed: the worktree and its branch are gone.
    Removed,
    /// Something was changed or committed: both are kept, as described.
    Kept(WorktreeReport),
}

/// A kept worktree, as the tool result and the task notification describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeReport {
    pub path: PathBuf,
    pub branch: Option<String>,
    pub base_commit: String,
    pub head_commit: String,
    /// Every path that differs from `base_commit`, committed or not, plus untracked files;
    /// sorted, relative to the worktree root.
    pub changed_files: Vec<String>,
    /// Commits on top of `base_commit`.
    pub commits: u32,
    /// Whether modified, staged or untracked files were left uncommitted.
    pub uncommitted: bool,
}
