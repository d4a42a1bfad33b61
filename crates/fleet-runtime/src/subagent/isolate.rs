//! An isolated child as the spawner builds it: the isolation its call asks for, its cwd and
//! workspace inside its worktree, what it is told about where it works, and what its caller
//! reads about a kept worktree. Making and settling worktrees is the session's
//! [`Isolator`](crate::isolation::Isolator).

use super::build::Blueprint;
use super::input::AgentInput;
use crate::definitions::{AgentDefinition, Isolation};
use crate::isolation::{Worktree, WorktreeKind, WorktreeReport};
use fleet_tools::{ToolError, Workspace};
use std::path::{Path, PathBuf};

/// The isolation the call asks for, else its definition's.
pub(crate) fn requested_isolation(
    input: &AgentInput,
    def: &AgentDefinition,
) -> Result<Option<Isolation>, ToolError> {
    match input.isolation.as_deref().map(str::trim) {
        Some("worktree") => Ok(Some(Isolation::Worktree)),
        Some("remote") => Ok(Some(Isolation::Remote)),
        Some(other) => Err(ToolError::bad_value(
            "isolation",
            format!(
                "`isolation` {other:?} is not one fleet knows: use \"worktree\" or \"remote\"."
            ),
        )),
        None => Ok(def.isolation),
    }
}

/// The child's cwd in its worktree: `cwd` (a folder of the caller's checkout) at the same
/// relative path; the worktree's own mapped cwd when `cwd` lies outside the checkout.
pub(crate) fn map_cwd(worktree: &Worktree, cwd: &Path) -> PathBuf {
    match cwd.strip_prefix(&worktree.repo_root) {
        Ok(rel) => worktree.path.join(rel),
        Err(_) => worktree.cwd.clone(),
    }
}

/// The child's workspace: the worktree instead of the project root, with the caller's added
/// folders (and scratchpad) still reachable.
pub(crate) fn workspace_in(worktree: &Worktree, parent: &Workspace) -> Workspace {
    let mut workspace = Workspace::new(&worktree.path);
    for dir in &parent.additional {
        workspace.add_dir(dir);
    }
    workspace
}

/// What the child is told about where it works.
pub(crate) fn note(worktree: &Worktree, bp: &Blueprint) -> String {
    let root = worktree.repo_root.display();
    let path = worktree.path.display();
    match worktree.kind {
        WorktreeKind::Agent => format!(
            "You are working in your own git worktree at {path}, on branch {branch}, made from \
             commit {base} of the checkout at {root}. Other agents may be editing that checkout \
             at the same time, so work only here: a path you were given under {root} means the \
             same relative path under {path}. Writes outside {path} are refused. Commit your \
             work on your branch when it is done (or leave it uncommitted); either way it is \
             kept for the agent that started you. Your working folder is {cwd}.",
            branch = worktree.branch.as_deref().unwrap_or("(detached)"),
            base = short(&worktree.base_commit),
            cwd = bp.cwd.display(),
        ),
        WorktreeKind::Hooked => format!(
            "You are working in your own worktree at {path}, made for you by the project's \
             WorktreeCreate hook from the checkout at {root}. Other agents may be editing that \
             checkout at the same time, so work only here: a path you were given under {root} \
             means the same relative path under {path}. Writes outside {path} are refused. \
             Your working folder is {cwd}.",
            cwd = bp.cwd.display(),
        ),
        WorktreeKind::Snapshot => format!(
            "You are working in a throwaway copy of the checkout at {root}, as it is now \
             (uncommitted and untracked files included), at {path}. A path you were given under \
             {root} means the same relative path under {path}. Build, run the tests and write \
             probe scripts here freely: the copy is deleted when you finish, and the user's \
             checkout is never touched. Your working folder is {cwd}.",
            cwd = bp.cwd.display(),
        ),
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The paragraph a kept worktree adds to the child's result.
pub(crate) fn kept_text(report: &WorktreeReport) -> String {
    let changes = if report.changed_files.is_empty() {
        "no files".to_string()
    } else {
        report.changed_files.join(", ")
    };
    let state = if report.uncommitted {
        " Some of it is not committed."
    } else {
        ""
    };
    format!(
        "\n\nThe agent worked in its own worktree, which is kept: {} on branch {} ({} commit(s) \
         on top of {}; changed: {changes}).{state} Merge the branch or copy what you need; \
         `fleet worktrees clean --force` removes it.",
        report.path.display(),
        report.branch.as_deref().unwrap_or("(detached)"),
        report.commits,
        short(&report.base_commit),
    )
}
