//! A job's events and record on the broker. Events go out in order, each publish awaited
//! until JetStream has stored it and retried while the broker is away (a message id makes a
//! retry of a stored event a no-op), so nothing a client was told about is lost. The record is
//! written at state changes and, for the events count, at most about once a second.

use crate::broker::Broker;
use crate::names;
use crate::record::TaskRecord;
use async_nats::jetstream::message::PublishMessage;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest pause between two tries of a publish or a record write.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// One job attempt's event stream.
pub struct Events {
    lines: mpsc::UnboundedSender<String>,
    /// How many were queued so far.
    sent: u64,
    /// How many were stored so far.
    stored: watch::Receiver<u64>,
    task: JoinHandle<()>,
}

impl Events {
    /// Starts publishing to `fleet.events.<task>` with the attempt header. `stop` abandons
    /// what is not yet stored (the job goes back to the queue then, and runs again).
    pub fn start(broker: &Broker, task_id: &str, attempt: u32, stop: CancellationToken) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let (counter, stored) = watch::channel(0u64);
        let js = broker.js.clone();
        let subject = names::events_subject(task_id);
        let id_prefix = format!("{task_id}.{attempt}.");
        let task = tokio::spawn(async move {
            let mut n: u64 = 0;
            while let Some(line) = rx.recv().await {
                n += 1;
                let message = PublishMessage::build()
                    .payload(line.into())
                    .header(names::ATTEMPT_HEADER, attempt.to_string().as_str())
                    .message_id(format!("{id_prefix}{n}"));
                if !publish(&js, &subject, message, &stop).await {
                    return;
                }
                counter.send_replace(n);
            }
        });
        Self {
            lines: tx,
            sent: 0,
            stored,
            task,
        }
    }

    /// Queues one line (a child's stdout line, as it came).
    pub fn line(&mut self, line: String) {
        if self.lines.send(line).is_ok() {
            self.sent += 1;
        }
    }

    /// Queues one of the worker's own `{"type":"fleet_remote",…}` lines.
    pub fn own(&mut self, event: &str, fields: Value) {
        let mut line = json!({"type": "fleet_remote", "event": event});
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        self.line(line.to_string());
    }

    pub fn stored(&self) -> u64 {
        *self.stored.borrow()
    }

    /// Waits until everything queued so far is stored (or abandoned by `stop`).
    pub async fn flush(&mut self) {
        let sent = self.sent;
        // An error: the publisher stopped, and nothing more will be stored.
        let _ = self.stored.wait_for(|stored| *stored >= sent).await;
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Publishes until JetStream acknowledges it; `false` when `stop` fired first.
async fn publish(
    js: &async_nats::jetstream::Context,
    subject: &str,
    message: PublishMessage,
    stop: &CancellationToken,
) -> bool {
    let mut backoff = Duration::from_millis(50);
    loop {
        let attempt = async {
            let ack = js
                .send_publish(subject.to_string(), message.clone())
                .await
                .map_err(|e| e.to_string())?;
            ack.await.map(|_| ()).map_err(|e| e.to_string())
        };
        let outcome = tokio::select! {
            outcome = attempt => outcome,
            () = stop.cancelled() => return false,
        };
        match outcome {
            Ok(()) => return true,
            Err(err) => {
                tracing::debug!("publishing to {subject}: {err}; retrying");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => return false,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Writes `record` under its task id, retrying while the broker is away; `false` when `stop`
/// fired first.
pub async fn put_record(broker: &Broker, record: &TaskRecord, stop: &CancellationToken) -> bool {
    let Ok(bytes) = serde_json::to_vec(record) else {
        return false;
    };
    let mut backoff = Duration::from_millis(50);
    loop {
        let put = broker.tasks.put(&record.task_id, bytes.clone().into());
        let outcome = tokio::select! {
            outcome = put => outcome,
            () = stop.cancelled() => return false,
        };
        match outcome {
            Ok(_) => return true,
            Err(err) => {
                tracing::debug!("writing the record of {}: {err}; retrying", record.task_id);
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => return false,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Reads a task's record; `Ok(None)` when there is none.
pub async fn get_record(
    broker: &Broker,
    task_id: &str,
) -> Result<Option<TaskRecord>, crate::RemoteError> {
    let Some(bytes) = broker
        .tasks
        .get(task_id)
        .await
        .map_err(|e| crate::RemoteError::broker(names::TASKS_BUCKET, e))?
    else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| crate::RemoteError::malformed("task record", e))
}
