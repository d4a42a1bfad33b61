//! What can go wrong while making, inspecting or removing a worktree. Every variant names the
//! folder it concerns, and git failures name the command too, so a user can rerun it by hand.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum IsolationError {
    #[error("{path} is not inside a git repository: worktree isolation needs a git checkout (run `git init` and commit, or drop `isolation`)")]
    NotARepo { path: PathBuf },
    #[error(
        "{path} is a bare git repository: worktree isolation needs a checkout with a working tree"
    )]
    BareRepo { path: PathBuf },
    #[error("{path} is inside a `.git` folder, not a working tree")]
    InsideGitDir { path: PathBuf },
    #[error("the repository at {repo} has no commits yet: a worktree starts from a commit, so commit once first")]
    NoCommits { repo: PathBuf },
    #[error("`{id}` cannot name a worktree: an agent id needs at least one ASCII letter or digit")]
    BadId { id: String },
    #[error("a fleet worktree or branch for `{id}` already exists at {path}; finish or clean it first (`fleet worktrees clean {id}`)")]
    AlreadyExists { id: String, path: PathBuf },
    #[error("no fleet worktree matches `{target}` (see `fleet worktrees list`)")]
    NotFound { target: String },
    #[error("`{command}` failed in {dir} (exit {status}): {stderr}")]
    Git {
        command: String,
        dir: PathBuf,
        status: String,
        stderr: String,
    },
    #[error("could not run `{command}` in {dir}: {source} (is git installed and on PATH?)")]
    Spawn {
        command: String,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the worktree record {path} is unreadable: {source}")]
    Record {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl IsolationError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
