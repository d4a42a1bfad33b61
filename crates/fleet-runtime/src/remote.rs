//! The seam for remote agents (`isolation: "remote"`): the runtime decides that a call runs
//! remotely and keeps it as a background task like any other (progress, TaskStop, TaskOutput,
//! a `<task-notification>`); *how* it reaches a worker is a [`RemoteLauncher`] the binary
//! plugs in (`fleet-remote`, over NATS JetStream), so nothing below the binary links a broker.

use fleet_protocol::{TaskStatus, TaskUsage};
use fleet_tools::error::BoxedSource;
use futures::future::BoxFuture;
use std::path::PathBuf;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a call with `isolation: "remote"` is told when the session has no workers.
pub(crate) const NO_WORKERS: &str = "`isolation: remote` runs the agent on a remote worker, \
     and this session has no broker to reach one: set FLEET_NATS_URL (or the `remote.natsUrl` \
     setting) to the URL of a NATS server where `fleet worker` processes run, or use \
     \"worktree\" to isolate the agent on this machine.";

/// Everything a worker needs to run the agent; credentials are never part of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRequest {
    /// The task id the caller registered (`r` and 16 hex digits).
    pub task_id: String,
    pub description: String,
    pub prompt: String,
    /// The agent type the call named (`general-purpose` when none).
    pub agent_type: String,
    /// The definition in Claude Code's `--agents` entry form (`description`, `prompt`,
    /// `tools`, `disallowedTools`, `model`, `permissionMode`), so a worker without the
    /// caller's agent files runs the same agent.
    pub definition: serde_json::Value,
    /// The model the child would have had here (already resolved from the call, the
    /// definition and `FLEET_SUBAGENT_MODEL`).
    pub model: String,
    /// The caller's permission mode (`default`, `acceptEdits`, `plan`, …), never more than it.
    pub permission_mode: fleet_protocol::PermissionMode,
    /// The caller's allow and deny rules, in settings syntax (`Bash(git:*)`).
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// The caller's folder: its repository is what the worker checks out.
    pub cwd: PathBuf,
}

/// What the launcher tells the task while the job runs.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteUpdate {
    /// A worker took the job (again, on a redelivery: progress starts over).
    Started { worker: String, attempt: u32 },
    /// Live counters for TaskOutput and the task board.
    Progress {
        tool_uses: u64,
        total_tokens: u64,
        last_activity: Option<String>,
    },
    /// The job ended; no update follows.
    Ended(RemoteEnding),
}

/// How a remote job ended, as the task's notification reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteEnding {
    /// `Completed`, `Failed` or `Killed`.
    pub status: TaskStatus,
    /// The agent's final text, or what went wrong.
    pub result: String,
    pub usage: TaskUsage,
    /// The branch the job's changes were fetched into locally (`fleet/remote-<id8>`).
    pub branch: Option<String>,
}

/// A launched job: where to look at it and its updates.
#[derive(Debug)]
pub struct RemoteLaunched {
    /// Where the job can be followed (`fleet remote logs <task>`, the broker and subject).
    pub session_url: String,
    pub updates: mpsc::Receiver<RemoteUpdate>,
}

/// Publishes jobs to remote workers and follows them. When `cancel` fires (TaskStop, the
/// session ending), the launcher asks the worker to stop the job and then sends
/// [`RemoteUpdate::Ended`] with `Killed`.
pub trait RemoteLauncher: Send + Sync + std::fmt::Debug {
    fn launch(
        &self,
        request: RemoteRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<RemoteLaunched, LaunchError>>;
}

/// Why a remote agent could not be launched. The text follows "Cannot start the remote
/// agent: " in what the model reads; the transport's own error is kept as the source.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The workers' broker could not be reached.
    #[error(transparent)]
    Connect(BoxedSource),
    /// The caller's repository could not be sent to the workers.
    #[error("cannot send the repository to the workers: {0}")]
    Repository(#[source] BoxedSource),
    /// The broker did not take the job.
    #[error(transparent)]
    Submit(BoxedSource),
}
