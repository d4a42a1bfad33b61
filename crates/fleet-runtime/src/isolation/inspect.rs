//! What an agent left in its worktree: whether HEAD moved, whether anything is modified, staged
//! or untracked (ignored files do not count: build output must not keep a worktree alive), and
//! the report a kept worktree is described by.

use std::collections::BTreeSet;
use std::path::Path;

use super::error::IsolationError;
use super::git::{nul_fields, Git};
use super::WorktreeReport;

/// The state of a worktree relative to the commit it started from.
#[derive(Debug)]
pub(crate) struct Changes {
    pub head: String,
    /// Paths `git status` lists: modified, staged, deleted or untracked (not ignored).
    pub uncommitted: Vec<String>,
    pub untracked: Vec<String>,
}

impl Changes {
    pub(crate) fn moved(&self, base: &str) -> bool {
        self.head != base
    }

    /// HEAD still at `base` and nothing uncommitted: removing it loses nothing.
    pub(crate) fn unchanged(&self, base: &str) -> bool {
        !self.moved(base) && self.uncommitted.is_empty()
    }
}

pub(crate) async fn changes(worktree: &Path) -> Result<Changes, IsolationError> {
    let git = Git::at(worktree);
    let head = git.run(&[&"rev-parse", &"--verify", &"HEAD"]).await?;
    let status = git
        .run(&[
            &"status",
            &"--porcelain=v1",
            &"-z",
            &"--no-renames",
            &"--untracked-files=all",
        ])
        .await?;
    let mut uncommitted = Vec::new();
    let mut untracked = Vec::new();
    for entry in nul_fields(&status) {
        let (code, path) = entry.split_at(entry.len().min(3));
        if code.starts_with("??") {
            untracked.push(path.to_string());
        }
        uncommitted.push(path.to_string());
    }
    Ok(Changes {
        head: head.trim().to_string(),
        uncommitted,
        untracked,
    })
}

/// The report of a worktree that is kept: every file that differs from `base` (committed or
/// not, plus untracked ones), and how many commits were made on top of it.
pub(crate) async fn report(
    worktree: &Path,
    branch: Option<&str>,
    base: &str,
    changes: Changes,
) -> Result<WorktreeReport, IsolationError> {
    let git = Git::at(worktree);
    let diff = git
        .run(&[&"diff", &"--name-only", &"-z", &"--no-renames", &base])
        .await?;
    let mut files: BTreeSet<String> = nul_fields(&diff).map(str::to_string).collect();
    files.extend(changes.untracked.iter().cloned());
    let range = format!("{base}..HEAD");
    let count = git.run(&[&"rev-list", &"--count", &range]).await?;
    Ok(WorktreeReport {
        path: worktree.to_path_buf(),
        branch: branch.map(str::to_string),
        base_commit: base.to_string(),
        head_commit: changes.head,
        changed_files: files.into_iter().collect(),
        commits: count.trim().parse().unwrap_or(0),
        uncommitted: !changes.uncommitted.is_empty(),
    })
}
