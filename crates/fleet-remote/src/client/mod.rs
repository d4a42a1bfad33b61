//! The caller's side: publish a job, follow it, steer it, fetch what it made.
//!
//! Everything here goes through JetStream, so nothing is lost while the broker restarts: a
//! publish is retried until the broker acknowledges it (with the task id as the message id,
//! so a retry never queues a job twice), and event readers recreate their consumer from the
//! last sequence they saw.

mod events;
mod repo;
mod retry;

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::job::Job;
use crate::names;
use crate::record::{Control, TaskRecord, TaskState, WorkerRecord};
use crate::signing::UserKey;
use async_nats::jetstream::kv::Operation;
use async_nats::jetstream::message::PublishMessage;
use futures::StreamExt;
use std::sync::Arc;
use tokio::sync::OnceCell;

pub(crate) use retry::retrying;

/// A connection to the broker, as a caller uses it.
#[derive(Debug, Clone)]
pub struct Remote {
    broker: Broker,
    /// The key jobs are signed with: set with [`Remote::with_signer`], else the user's key
    /// from `$FLEET_HOME`, read (and made, the first time) on the first submit.
    signer: Arc<OnceCell<Arc<UserKey>>>,
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

impl RemoteEvent {
    /// The worker's own event this is; `None` for a line of the job's agent.
    pub fn worker_event(&self) -> Option<crate::event::WorkerEvent> {
        crate::event::WorkerEvent::from_line(&self.line)
    }
}

/// What `fleet remote status` shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    pub workers: Vec<WorkerRecord>,
    pub tasks: Vec<TaskRecord>,
}

/// What a record becomes when a caller stops a task no worker has taken yet.
const STOPPED_QUEUED: &str = "Stopped before a worker took it.";

impl Remote {
    pub async fn connect(url: &str) -> Result<Self, RemoteError> {
        Ok(Self::from_broker(Broker::connect(url).await?))
    }

    /// A caller on a broker connection made elsewhere (a worker's, a test's).
    pub fn from_broker(broker: Broker) -> Self {
        Self {
            broker,
            signer: Arc::default(),
        }
    }

    /// Signs jobs with `key` instead of the user's key in `$FLEET_HOME`.
    pub fn with_signer(mut self, key: impl Into<Arc<UserKey>>) -> Self {
        self.signer = Arc::new(OnceCell::new_with(Some(key.into())));
        self
    }

    /// The key jobs are signed with (the user's, made on first use).
    pub async fn signer(&self) -> Result<Arc<UserKey>, RemoteError> {
        let key = self
            .signer
            .get_or_try_init(|| async {
                let key = tokio::task::spawn_blocking(UserKey::from_env)
                    .await
                    .map_err(|e| RemoteError::malformed("job signing key", e))??;
                Ok::<_, RemoteError>(Arc::new(key))
            })
            .await?;
        Ok(key.clone())
    }

    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// Records the task as queued and publishes the job, signed (see [`crate::signing`]).
    pub async fn submit(&self, job: Job) -> Result<Submitted, RemoteError> {
        let task_id = job.task_id.clone();
        let payload = bytes::Bytes::from(crate::signing::sign(&job, &*self.signer().await?)?);
        let record = TaskRecord::queued(&job);
        let record = to_bytes("task record", &record)?;
        retrying(names::TASKS_BUCKET, || {
            self.broker.tasks.put(task_id.as_str(), record.clone())
        })
        .await?;
        // The message id makes a retried publish (its ack lost in a broker restart) a no-op.
        retrying(names::JOBS_SUBJECT, || async {
            let message = PublishMessage::build()
                .payload(payload.clone())
                .message_id(&task_id);
            self.broker
                .js
                .send_publish(names::JOBS_SUBJECT, message)
                .await?
                .await
        })
        .await?;
        Ok(Submitted {
            session_url: self.session_url(&task_id),
            task_id,
        })
    }

    /// Where a task's events can be read: the broker and the subject.
    pub fn session_url(&self, task_id: &str) -> String {
        format!("{} {}", self.broker.url, names::events_subject(task_id))
    }

    pub async fn record(&self, task_id: &str) -> Result<Option<TaskRecord>, RemoteError> {
        names::check_task_id(task_id)?;
        let value = retrying(names::TASKS_BUCKET, || self.broker.tasks.get(task_id)).await?;
        value.map(|bytes| parse_record(&bytes)).transpose()
    }

    /// Sends a stop or a plan decision to the task, signed (see [`crate::signing`]). A stop of a task still queued also marks
    /// it killed, so the worker that picks it up skips it.
    pub async fn send(&self, task_id: &str, control: Control) -> Result<(), RemoteError> {
        names::check_task_id(task_id)?;
        let payload = bytes::Bytes::from(crate::signing::sign_control(
            task_id,
            &control,
            &*self.signer().await?,
        )?);
        let subject = names::control_subject(task_id);
        retrying(&subject, || async {
            self.broker
                .js
                .publish(subject.clone(), payload.clone())
                .await?
                .await
        })
        .await?;
        if control == Control::Stop {
            self.kill_if_queued(task_id).await?;
        }
        Ok(())
    }

    /// Marks a queued task killed with a compare-and-set, so a worker taking it at the same
    /// moment either sees the kill or wins the race (and then gets the stop request).
    async fn kill_if_queued(&self, task_id: &str) -> Result<(), RemoteError> {
        for _ in 0..5 {
            let entry = retrying(names::TASKS_BUCKET, || self.broker.tasks.entry(task_id)).await?;
            let Some(entry) = entry.filter(|e| e.operation == Operation::Put) else {
                return Ok(());
            };
            let mut record = parse_record(&entry.value)?;
            if record.state != TaskState::Queued {
                return Ok(());
            }
            let now = crate::now_ms();
            record.state = TaskState::Killed;
            record.result = Some(STOPPED_QUEUED.to_string());
            record.ended_ms = Some(now);
            record.updated_ms = now;
            let value = to_bytes("task record", &record)?;
            if self
                .broker
                .tasks
                .update(task_id, value, entry.revision)
                .await
                .is_ok()
            {
                return Ok(());
            }
        }
        Err(RemoteError::State {
            task: task_id.to_string(),
            reason: "its record kept changing while it was being stopped".into(),
        })
    }

    /// Waits until the record changes from `seen` (or for the first record), via a KV watch.
    pub async fn next_record(
        &self,
        task_id: &str,
        seen: Option<&TaskRecord>,
    ) -> Result<TaskRecord, RemoteError> {
        names::check_task_id(task_id)?;
        loop {
            // The watch starts with the latest value, then follows changes; it is made again
            // when the broker goes away meanwhile.
            let mut watch = retrying(names::TASKS_BUCKET, || {
                self.broker.tasks.watch_with_history(task_id)
            })
            .await?;
            while let Some(entry) = watch.next().await {
                let Ok(entry) = entry else {
                    break;
                };
                if entry.operation != Operation::Put {
                    continue;
                }
                let record = parse_record(&entry.value)?;
                if seen != Some(&record) {
                    return Ok(record);
                }
            }
            tokio::time::sleep(retry::PAUSE).await;
        }
    }

    /// Every worker's heartbeat and every task's record, tasks newest first.
    pub async fn status(&self) -> Result<Status, RemoteError> {
        let mut workers: Vec<WorkerRecord> = self
            .values(&self.broker.workers, names::WORKERS_BUCKET)
            .await?
            .iter()
            .map(|bytes| parse(bytes, "worker record"))
            .collect::<Result<_, _>>()?;
        workers.sort_by(|a, b| a.id.cmp(&b.id));
        let mut tasks: Vec<TaskRecord> = self
            .values(&self.broker.tasks, names::TASKS_BUCKET)
            .await?
            .iter()
            .map(|bytes| parse_record(bytes))
            .collect::<Result<_, _>>()?;
        tasks.sort_by(|a, b| {
            b.queued_ms
                .cmp(&a.queued_ms)
                .then_with(|| b.task_id.cmp(&a.task_id))
        });
        Ok(Status { workers, tasks })
    }

    async fn values(
        &self,
        store: &async_nats::jetstream::kv::Store,
        bucket: &str,
    ) -> Result<Vec<bytes::Bytes>, RemoteError> {
        let mut keys = store
            .keys()
            .await
            .map_err(|e| RemoteError::broker(bucket, e))?;
        let mut values = Vec::new();
        while let Some(key) = keys.next().await {
            let key = key.map_err(|e| RemoteError::broker(bucket, e))?;
            // A heartbeat may expire between listing and reading: that worker is gone.
            if let Some(value) = store
                .get(key.as_str())
                .await
                .map_err(|e| RemoteError::broker(bucket, e))?
            {
                values.push(value);
            }
        }
        Ok(values)
    }
}

fn to_bytes(what: &str, value: &impl serde::Serialize) -> Result<bytes::Bytes, RemoteError> {
    serde_json::to_vec(value)
        .map(bytes::Bytes::from)
        .map_err(|e| RemoteError::malformed(what, e))
}

fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, RemoteError> {
    serde_json::from_slice(bytes).map_err(|e| RemoteError::malformed(what, e))
}

pub(crate) fn parse_record(bytes: &[u8]) -> Result<TaskRecord, RemoteError> {
    parse(bytes, "task record")
}
