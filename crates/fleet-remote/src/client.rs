//! The caller's side: publish a job, follow it, steer it, fetch what it made.
//! PLACEHOLDER: signatures agreed; bodies are written in the client helper's branch.

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::job::{Job, RepoRef};
use crate::record::{Control, TaskRecord, WorkerRecord};
use futures::stream::BoxStream;
use std::path::Path;

/// A connection to the broker, as a caller uses it.
#[derive(Debug, Clone)]
pub struct Remote {
    broker: Broker,
}

/// A published job.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    pub task_id: String,
    /// `nats://host:port fleet.events.<task>`: where its events can be read.
    pub session_url: String,
}

/// One event a job's agent produced (a stream-json line of the worker's `fleet`, or one of
/// the worker's own `{"type":"fleet_remote",…}` lines).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteEvent {
    /// Its sequence number in `FLEET_EVENTS` (replay resumes after it).
    pub seq: u64,
    /// Which delivery of the job produced it.
    pub attempt: u32,
    pub line: serde_json::Value,
}

/// What `fleet remote status` shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    pub workers: Vec<WorkerRecord>,
    pub tasks: Vec<TaskRecord>,
}

impl Remote {
    pub async fn connect(url: &str) -> Result<Self, RemoteError> {
        Ok(Self {
            broker: Broker::connect(url).await?,
        })
    }

    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// Bundles the repository at `cwd` (HEAD plus a snapshot commit of uncommitted and
    /// untracked files) and stores it once per snapshot commit; `None` outside a repository.
    pub async fn snapshot_repo(&self, _cwd: &Path) -> Result<Option<RepoRef>, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// Records the task as queued and publishes the job.
    pub async fn submit(&self, _job: Job) -> Result<Submitted, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    pub async fn record(&self, _task_id: &str) -> Result<Option<TaskRecord>, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// The task's events from the start (or after `after_seq`), then live ones as they come;
    /// survives a broker restart.
    pub async fn events(
        &self,
        _task_id: &str,
        _after_seq: u64,
    ) -> Result<BoxStream<'static, Result<RemoteEvent, RemoteError>>, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// The events published so far (`fleet remote logs`).
    pub async fn logs(&self, _task_id: &str) -> Result<Vec<RemoteEvent>, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// Sends a stop or a plan decision to the task.
    pub async fn send(&self, _task_id: &str, _control: Control) -> Result<(), RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// Waits until the record changes from `seen` (or for the first record), via a KV watch.
    pub async fn next_record(
        &self,
        _task_id: &str,
        _seen: Option<&TaskRecord>,
    ) -> Result<TaskRecord, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    /// Fetches the task's result branch into `repo` as `fleet/remote-<id8>`; `None` when the
    /// job changed nothing.
    pub async fn fetch_branch(
        &self,
        _task_id: &str,
        _repo: &Path,
    ) -> Result<Option<String>, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }

    pub async fn status(&self) -> Result<Status, RemoteError> {
        unimplemented!("PLACEHOLDER")
    }
}
