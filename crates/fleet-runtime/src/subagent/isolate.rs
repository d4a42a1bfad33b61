//! Isolation: a child that edits in parallel with others gets its own git worktree, and the
//! verification agent a throwaway copy of the caller's checkout as it is now, so neither can
//! trample the user's checkout.
//!
//! The worktree is made before the child is built (its cwd, its workspace boundary and its
//! sandbox's writable root are the worktree), and settled when the child's run ends: an agent
//! worktree is removed when nothing changed and kept, with a report, when anything did; a
//! verification snapshot is always removed.

use super::build::Blueprint;
use super::input::AgentInput;
use super::Spawner;
use crate::definitions::{AgentDefinition, Isolation};
use crate::isolation::{Outcome, Worktree, WorktreeKind, WorktreeReport};
use fleet_tools::{ToolError, Workspace};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a child is isolated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isolate {
    /// Its own worktree on its own branch, from the caller's HEAD.
    Worktree,
    /// A throwaway snapshot of the caller's checkout, uncommitted work included.
    Snapshot,
}

/// The built-in agent that checks work; it always runs in a snapshot when it can.
const VERIFIER: &str = "verification";

impl Spawner {
    /// How the call `input` for `def` is isolated, if at all.
    pub(crate) fn isolation_for(
        &self,
        input: &AgentInput,
        def: &AgentDefinition,
    ) -> Result<Option<Isolate>, ToolError> {
        match requested_isolation(input, def)? {
            // Routed to a worker before anything is made here (see `remote`).
            Some(Isolation::Remote) => Err(ToolError::failed(super::remote::NO_WORKERS)),
            Some(Isolation::Worktree) => {
                // A WorktreeCreate hook makes the worktree instead of fleet's manager.
                if !crate::hooks::worktree::hooks_make_worktrees(self.config.hooks.as_ref()) {
                    self.worktree_manager()?;
                }
                Ok(Some(Isolate::Worktree))
            }
            None if def.is_builtin() && def.name == VERIFIER => {
                Ok(self.config.worktrees.is_some().then_some(Isolate::Snapshot))
            }
            None => Ok(None),
        }
    }

    fn session_id(&self) -> &str {
        self.config
            .transcripts
            .as_ref()
            .map(|t| t.session_id.as_str())
            .unwrap_or_default()
    }

    /// Tells the session's `WorktreeRemove` hooks that a worktree's agent ended.
    async fn worktree_removed(&self, worktree: &Worktree) {
        crate::hooks::worktree::removed(
            self.config.hooks.as_ref(),
            self.session_id(),
            worktree,
            &self.sink,
        )
        .await;
    }

    fn worktree_manager(&self) -> Result<&crate::isolation::WorktreeManager, ToolError> {
        self.config.worktrees.as_deref().ok_or_else(|| {
            ToolError::failed(
                "Worktree isolation needs a fleet home to keep worktrees in, and this session \
                 has none (FLEET_NO_SESSION_PERSISTENCE); run the agent without `isolation`.",
            )
        })
    }

    /// Makes the child's worktree from the checkout holding `caller_cwd`. A verifier outside
    /// a git checkout runs without one (in its scratch folder, as before).
    pub(crate) async fn make_worktree(
        &self,
        isolate: Isolate,
        caller_cwd: &Path,
        agent_id: &str,
    ) -> Result<Option<Arc<Worktree>>, ToolError> {
        if let (Isolate::Worktree, Some(hooks)) = (isolate, self.config.hooks.as_deref()) {
            if hooks.has(crate::hooks::HookEvent::WorktreeCreate) {
                let made = crate::hooks::worktree::create(
                    hooks,
                    self.session_id(),
                    caller_cwd,
                    agent_id,
                    &self.sink,
                )
                .await;
                return made.map(|wt| Some(Arc::new(wt))).map_err(|why| {
                    ToolError::Failed(format!("Cannot give the agent its own worktree: {why}"))
                });
            }
        }
        let manager = self.worktree_manager()?;
        let made = match isolate {
            Isolate::Worktree => manager.create_for_agent(caller_cwd, agent_id).await,
            Isolate::Snapshot => manager.create_snapshot(caller_cwd, agent_id).await,
        };
        match made {
            Ok(worktree) => Ok(Some(Arc::new(worktree))),
            Err(err) if isolate == Isolate::Snapshot => {
                tracing::info!("the verifier runs without a snapshot: {err}");
                Ok(None)
            }
            Err(err) => Err(ToolError::Failed(format!(
                "Cannot give the agent its own worktree: {err}"
            ))),
        }
    }

    /// Settles the child's worktree once its run has ended: the report of a kept one, `None`
    /// when it was removed. A failure is logged and the worktree left in place, since nothing
    /// an agent wrote may be lost.
    pub(crate) async fn settle_worktree(&self, worktree: &Worktree) -> Option<WorktreeReport> {
        if worktree.kind == WorktreeKind::Hooked {
            // The hooks that made it remove it (or keep it); fleet deletes nothing of it.
            self.worktree_removed(worktree).await;
            return None;
        }
        let manager = self.config.worktrees.as_deref()?;
        let settled = match worktree.kind {
            WorktreeKind::Snapshot => manager.discard(worktree).await.map(|()| Outcome::Removed),
            WorktreeKind::Agent | WorktreeKind::Hooked => manager.finish(worktree).await,
        };
        match settled {
            Ok(Outcome::Removed) => {
                self.worktree_removed(worktree).await;
                None
            }
            Ok(Outcome::Kept(report)) => Some(report),
            Err(err) => {
                tracing::warn!(path = %worktree.path.display(), "worktree left in place: {err}");
                None
            }
        }
    }
}

/// The isolation the call asks for, else its definition's.
pub(crate) fn requested_isolation(
    input: &AgentInput,
    def: &AgentDefinition,
) -> Result<Option<Isolation>, ToolError> {
    match input.isolation.as_deref().map(str::trim) {
        Some("worktree") => Ok(Some(Isolation::Worktree)),
        Some("remote") => Ok(Some(Isolation::Remote)),
        Some(other) => Err(ToolError::Failed(format!(
            "`isolation` {other:?} is not one fleet knows: use \"worktree\" or \"remote\"."
        ))),
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
