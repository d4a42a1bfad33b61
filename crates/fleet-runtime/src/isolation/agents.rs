//! The session's isolation service: a child that edits in parallel with others gets its own
//! git worktree, and the verification agent a throwaway snapshot of the caller's checkout as
//! it is now, so neither can trample the user's checkout.
//!
//! The worktree is made before the child is built (its cwd, its workspace boundary and its
//! sandbox's writable root are the worktree), and settled when the child's run ends: an agent
//! worktree is removed when nothing changed and kept, with a report, when anything did; a
//! verification snapshot is always removed. A project's `WorktreeCreate` hooks may make the
//! worktree instead; its `WorktreeRemove` hooks then hear when its agent ended.
//!
//! The spawner decides *whether* a child is isolated; this service owns *how*: the manager
//! that keeps worktrees under the fleet home, and the hooks that may stand in for it.

use super::{Outcome, Worktree, WorktreeKind, WorktreeManager, WorktreeReport};
use crate::definitions::{AgentDefinition, Isolation};
use crate::hooks::Hooks;
use crate::sink::EventSink;
use fleet_tools::ToolError;
use std::path::Path;
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

/// Makes and settles isolated children's worktrees for one session.
#[derive(Debug)]
pub struct Isolator {
    /// Where worktrees are made; `None` (no fleet home) refuses `isolation: worktree`.
    worktrees: Option<Arc<WorktreeManager>>,
    /// The session's hooks: `WorktreeCreate` makes worktrees instead of the manager.
    hooks: Option<Arc<Hooks>>,
    session_id: String,
    /// The session's stream, where the worktree hooks report.
    sink: EventSink,
}

impl Isolator {
    pub fn new(
        worktrees: Option<Arc<WorktreeManager>>,
        hooks: Option<Arc<Hooks>>,
        session_id: String,
        sink: EventSink,
    ) -> Self {
        Self {
            worktrees,
            hooks,
            session_id,
            sink,
        }
    }

    /// Whether this session can give an agent a worktree of fleet's own.
    pub fn has_worktrees(&self) -> bool {
        self.worktrees.is_some()
    }

    /// Refuses a definition that asks for a worktree this session cannot make.
    pub(crate) fn check(&self, def: &AgentDefinition) -> Result<(), ToolError> {
        // A remote agent needs no worktrees here; without workers its launch says so.
        if def.isolation != Some(Isolation::Worktree) || self.worktrees.is_some() {
            return Ok(());
        }
        Err(ToolError::bad_value(
            "subagent_type",
            format!(
                "Agent type {:?} asks for isolation: worktree, which this session cannot \
                 provide (it has no fleet home to keep worktrees in); use another agent type \
                 or do the work yourself.",
                def.name
            ),
        ))
    }

    /// How a call for `def` that asks for `requested` (else its definition's) is isolated.
    pub(crate) fn isolate_for(
        &self,
        requested: Option<Isolation>,
        def: &AgentDefinition,
    ) -> Result<Option<Isolate>, ToolError> {
        match requested {
            // Routed to a worker before anything is made here (see the remote launcher).
            Some(Isolation::Remote) => {
                Err(ToolError::bad_value("isolation", crate::remote::NO_WORKERS))
            }
            Some(Isolation::Worktree) => {
                // A WorktreeCreate hook makes the worktree instead of fleet's manager.
                if !crate::hooks::worktree::hooks_make_worktrees(self.hooks.as_ref()) {
                    self.manager()?;
                }
                Ok(Some(Isolate::Worktree))
            }
            None if def.is_builtin() && def.name == VERIFIER => {
                Ok(self.worktrees.is_some().then_some(Isolate::Snapshot))
            }
            None => Ok(None),
        }
    }

    /// Tells the session's `WorktreeRemove` hooks that a worktree's agent ended.
    async fn removed(&self, worktree: &Worktree) {
        crate::hooks::worktree::removed(
            self.hooks.as_ref(),
            &self.session_id,
            worktree,
            &self.sink,
        )
        .await;
    }

    fn manager(&self) -> Result<&WorktreeManager, ToolError> {
        self.worktrees.as_deref().ok_or_else(|| {
            ToolError::bad_value(
                "isolation",
                "Worktree isolation needs a fleet home to keep worktrees in, and this session \
                 has none (FLEET_NO_SESSION_PERSISTENCE); run the agent without `isolation`.",
            )
        })
    }

    /// Makes the child's worktree from the checkout holding `caller_cwd`. A verifier outside
    /// a git checkout runs without one (in its scratch folder, as before).
    pub(crate) async fn make(
        &self,
        isolate: Isolate,
        caller_cwd: &Path,
        agent_id: &str,
    ) -> Result<Option<Arc<Worktree>>, ToolError> {
        if let (Isolate::Worktree, Some(hooks)) = (isolate, self.hooks.as_deref()) {
            if hooks.has(crate::hooks::HookEvent::WorktreeCreate) {
                let made = crate::hooks::worktree::create(
                    hooks,
                    &self.session_id,
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
        let manager = self.manager()?;
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
    pub(crate) async fn settle(&self, worktree: &Worktree) -> Option<WorktreeReport> {
        if worktree.kind == WorktreeKind::Hooked {
            // The hooks that made it remove it (or keep it); fleet deletes nothing of it.
            self.removed(worktree).await;
            return None;
        }
        let manager = self.worktrees.as_deref()?;
        let settled = match worktree.kind {
            WorktreeKind::Snapshot => manager.discard(worktree).await.map(|()| Outcome::Removed),
            WorktreeKind::Agent | WorktreeKind::Hooked => manager.finish(worktree).await,
        };
        match settled {
            Ok(Outcome::Removed) => {
                self.removed(worktree).await;
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
