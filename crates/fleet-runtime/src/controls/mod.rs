//! Steering a session while it runs: what the Claude Agent SDK's control requests ask of the
//! runtime (`interrupt`, `set_model`, `set_permission_mode` and `updatedPermissions`,
//! `get_context_usage`, `stop_task`).
//!
//! The main agent is owned by the session task, so nothing outside can touch it while it
//! runs. A [`SessionControls`] handle is the way in: made before the agent, put in its
//! [`crate::AgentConfig::controls`], it is bound when the agent is built (the permissions it
//! changes, the model it started with) and when the session starts (the task registry). From
//! then on any clone of it steers the session from another task: the permission mode and
//! granted rules live in the shared [`fleet_tools::permissions::Permissions`], a new model is
//! picked up before the agent's next request, each turn runs on a child token that
//! [`SessionControls::interrupt`] cancels, and the agent leaves a snapshot of its context
//! after each reply for [`SessionControls::context_usage`].

mod context;
mod settings_file;
mod turns;
mod updates;

pub use context::{
    ApiUsage, ContextCategory, ContextFigures, ContextUsage, GridSquare, McpToolUsage,
    MessageBreakdown, ToolUsageByType,
};
pub use settings_file::SettingsFileError;
pub(crate) use turns::Turns;
pub use updates::{Destination, PermissionUpdate, RuleBehavior, RuleValue};

use crate::subagent::Spawner;
use crate::tasks::TaskError;
use fleet_model::{Catalog, Provider};
use fleet_protocol::KilledBy;
use fleet_tools::background::MoveSignal;
use fleet_tools::permissions::{PermissionMode, Permissions, RuleError};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// Why a control request could not be done. The text is meant for the SDK user.
#[derive(Debug, Error)]
pub enum ControlError {
    #[error("the session is not ready yet: its main agent has not been built")]
    NotStarted,
    #[error("no model given: name a model id or alias, or \"default\"")]
    EmptyModel,
    #[error(
        "cannot switch to bypassPermissions: this session was not started with it; start fleet \
         with --dangerously-skip-permissions or --allow-dangerously-skip-permissions to allow it"
    )]
    BypassNotAllowed,
    #[error("invalid permission update: {0}")]
    InvalidUpdate(String),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("cannot update the settings file {path}: {source}")]
    Settings {
        path: PathBuf,
        source: settings_file::SettingsFileError,
    },
    #[error("this session has no background tasks to stop (subagents are off)")]
    NoTasks,
    #[error(transparent)]
    Task(#[from] TaskError),
}

/// What a [`SessionControls`] is told when it is made; everything else it learns from the
/// agent and the session.
#[derive(Debug, Clone, Default)]
pub struct ControlOptions {
    /// Whether `bypassPermissions` may be entered later although the session started in
    /// another mode (`--allow-dangerously-skip-permissions`). A session started in
    /// bypassPermissions may always return to it.
    pub allow_bypass: bool,
    /// The project folder whose `.claude/settings.json` and `.claude/settings.local.json`
    /// `projectSettings` / `localSettings` updates are written to; the workspace root when
    /// not set.
    pub project_dir: Option<PathBuf>,
    /// The home folder whose `.claude/settings.json` `userSettings` updates are written to;
    /// the permissions' home (`$HOME`) when not set.
    pub home_dir: Option<PathBuf>,
}

/// The handle that steers a running session; cheap to clone, every clone the same session.
#[derive(Clone, Default)]
pub struct SessionControls {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SessionControls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionControls")
            .field("bound", &self.inner.bound.get().is_some())
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Inner {
    options: ControlOptions,
    /// Set once, when the main agent is built.
    bound: OnceLock<Bound>,
    /// The token of the turn now running (a prompt's run and the settling after it).
    turn: Mutex<Option<CancellationToken>>,
    model: Mutex<ModelChoice>,
    context: Mutex<Option<ContextUsage>>,
    /// The session's spawner, for its task registry; weak, as the spawner's tools outlive
    /// nothing that holds it.
    spawner: OnceLock<Weak<Spawner>>,
    /// Ctrl+B: the main agent's foreground subagents and Bash commands enrol here.
    background: MoveSignal,
}

/// What the controls act on, from the main agent.
struct Bound {
    permissions: Arc<Permissions>,
    start_model: String,
    catalog: Arc<Catalog>,
    provider: Provider,
    bypass_allowed: bool,
}

/// The model `set_model` asked for, kept until the agent has taken it.
#[derive(Default)]
struct ModelChoice {
    /// `Some` once `set_model` was called: the id to use (the starting one after "default").
    wanted: Option<String>,
    /// Not yet applied to the agent.
    pending: bool,
}

/// A lock that a panic elsewhere does not make unusable: every guarded value is replaced
/// whole, so it is never left half-written.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionControls {
    pub fn new(options: ControlOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                options,
                ..Inner::default()
            }),
        }
    }

    /// Stops the turn now running: the main agent's request or tools (sync subagents and Bash
    /// processes included) are cancelled, the run ends with an `error_during_execution`
    /// result, and waiting for background tasks after it stops — the tasks themselves run
    /// on. Returns false, changing nothing, when no turn is running.
    pub fn interrupt(&self) -> bool {
        match lock(&self.inner.turn).as_ref() {
            Some(token) if !token.is_cancelled() => {
                token.cancel();
                true
            }
            _ => false,
        }
    }

    /// Moves every foreground subagent and Bash command of the main agent's current turn to
    /// the background (Claude Code's Ctrl+B): each call answers at once that it was moved,
    /// and its work runs on as a background task — TaskOutput, TaskStop and a
    /// `<task-notification>` when it ends, and an interrupt no longer stops it. Returns how
    /// many calls moved; 0 when nothing runs in the foreground. It returns once each moved
    /// call has become a background task, so an [`Self::interrupt`] after it leaves them be.
    pub async fn move_to_background(&self) -> usize {
        self.inner.background.move_all().await
    }

    /// Whether a turn is running (a prompt's run, or the waiting and runs on notifications
    /// after it).
    pub fn is_running(&self) -> bool {
        lock(&self.inner.turn).is_some()
    }

    /// Makes the main agent's next request use `model`: an alias (`opus`, `haiku`) resolves
    /// as `--model` does; `None` or `"default"` goes back to the model the session started
    /// with. Returns the model id that will be used.
    pub fn set_model(&self, model: Option<&str>) -> Result<String, ControlError> {
        let bound = self.bound()?;
        let wanted = match model.map(str::trim) {
            None => bound.start_model.clone(),
            Some("") => return Err(ControlError::EmptyModel),
            Some(name) if name.eq_ignore_ascii_case("default") => bound.start_model.clone(),
            Some(name) if bound.provider == Provider::Anthropic => bound.catalog.resolve_id(name),
            Some(name) => name.to_string(),
        };
        *lock(&self.inner.model) = ModelChoice {
            wanted: Some(wanted.clone()),
            pending: true,
        };
        Ok(wanted)
    }

    /// The model the main agent's next request uses, as far as the controls know: the one
    /// `set_model` chose, else the starting one. `None` before the agent is built.
    pub fn model(&self) -> Option<String> {
        let bound = self.inner.bound.get()?;
        let choice = lock(&self.inner.model);
        Some(
            choice
                .wanted
                .clone()
                .unwrap_or_else(|| bound.start_model.clone()),
        )
    }

    /// The main agent's permission mode now; `None` before the agent is built.
    pub fn permission_mode(&self) -> Option<PermissionMode> {
        self.inner.bound.get().map(|b| b.permissions.mode())
    }

    /// Changes the main agent's permission mode from its next check on (a call being decided
    /// in the same reply included). `bypassPermissions` is refused unless the session started
    /// in it or [`ControlOptions::allow_bypass`] is set, as Claude Code refuses it. Subagents
    /// without a mode of their own follow the change; those with one keep theirs.
    pub fn set_permission_mode(
        &self,
        mode: PermissionMode,
    ) -> Result<PermissionMode, ControlError> {
        let bound = self.bound()?;
        if mode == PermissionMode::BypassPermissions && !bound.bypass_allowed {
            return Err(ControlError::BypassNotAllowed);
        }
        bound.permissions.change_mode(mode);
        Ok(mode)
    }

    /// The main agent's context as it was after its last reply (before the first, what the
    /// system prompt and tools take); `None` before the agent is built.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        lock(&self.inner.context).clone()
    }

    /// Stops a background task (a background agent, or a teammate by name) as TaskStop does;
    /// its notification reports it killed. An unknown id is an error listing the tasks there
    /// are.
    pub async fn stop_task(&self, task_id: &str) -> Result<StoppedTask, ControlError> {
        let spawner = self
            .inner
            .spawner
            .get()
            .and_then(Weak::upgrade)
            .ok_or(ControlError::NoTasks)?;
        let task_id = task_id.trim();
        if spawner.tasks().get(task_id).is_err() {
            if let Some(stopped) = spawner.team_port().and_then(|t| t.stop_member(task_id)) {
                let text = |key: &str| stopped[key].as_str().unwrap_or_default().to_string();
                return Ok(StoppedTask {
                    task_id: text("task_id"),
                    status: "killed".into(),
                    description: text("message"),
                });
            }
        }
        let snapshot = spawner.tasks().stop(task_id, KilledBy::User).await?;
        Ok(StoppedTask {
            task_id: snapshot.task_id,
            status: snapshot.status.as_str().to_string(),
            description: snapshot.description,
        })
    }

    fn bound(&self) -> Result<&Bound, ControlError> {
        self.inner.bound.get().ok_or(ControlError::NotStarted)
    }

    /// Binds the controls to the main agent being built. A second agent built with the same
    /// config (a clone) is ignored: the controls steer the first.
    pub(crate) fn bind(
        &self,
        permissions: &Arc<Permissions>,
        model: &str,
        catalog: &Arc<Catalog>,
        provider: Provider,
    ) {
        let start_mode = permissions.mode();
        let _ = self.inner.bound.set(Bound {
            permissions: permissions.clone(),
            start_model: model.to_string(),
            catalog: catalog.clone(),
            provider,
            bypass_allowed: self.inner.options.allow_bypass
                || start_mode == PermissionMode::BypassPermissions,
        });
    }

    /// The model for the run about to start, once `set_model` has been used: a skill of an
    /// earlier run may have put back the model from before it.
    pub(crate) fn model_for_run(&self) -> Option<String> {
        let mut choice = lock(&self.inner.model);
        choice.pending = false;
        choice.wanted.clone()
    }

    /// The model `set_model` chose since the agent last asked, once.
    pub(crate) fn take_new_model(&self) -> Option<String> {
        let mut choice = lock(&self.inner.model);
        if !choice.pending {
            return None;
        }
        choice.pending = false;
        choice.wanted.clone()
    }

    pub(crate) fn publish_context(&self, usage: ContextUsage) {
        *lock(&self.inner.context) = Some(usage);
    }

    /// The previous snapshot's API usage, kept when a snapshot is taken without a reply.
    pub(crate) fn last_api_usage(&self) -> Option<ApiUsage> {
        lock(&self.inner.context)
            .as_ref()
            .and_then(|c| c.api_usage.clone())
    }

    fn attach_spawner(&self, spawner: &Arc<Spawner>) {
        let _ = self.inner.spawner.set(Arc::downgrade(spawner));
        self.inner
            .background
            .set_shell_tasks(Arc::new(crate::subagent::SessionShells::new(spawner)));
    }

    /// The signal the main agent's tool calls enrol with (see [`Self::move_to_background`]).
    pub(crate) fn move_signal(&self) -> MoveSignal {
        self.inner.background.clone()
    }

    fn begin_turn(&self, session: &CancellationToken) -> CancellationToken {
        let token = session.child_token();
        *lock(&self.inner.turn) = Some(token.clone());
        token
    }

    fn end_turn(&self) {
        *lock(&self.inner.turn) = None;
    }

    fn options(&self) -> &ControlOptions {
        &self.inner.options
    }
}

/// What [`SessionControls::stop_task`] stopped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoppedTask {
    pub task_id: String,
    /// `killed` (a task's status as task events spell it).
    pub status: String,
    pub description: String,
}
