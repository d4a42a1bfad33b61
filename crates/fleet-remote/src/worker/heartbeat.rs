//! The worker's heartbeat: its `WorkerRecord` in `fleet_workers`, put every couple of seconds
//! (and at once when its running jobs change) so `fleet remote status` sees it alive, and left
//! to expire when the worker dies.

use crate::broker::Broker;
use crate::record::WorkerRecord;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The default interval; `FLEET_REMOTE_HEARTBEAT_MS` sets another.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(2);

/// The binary checks its typed variables at start; a library caller with a bad value gets
/// the default.
pub fn every_from_env() -> Duration {
    fleet_protocol::env::FLEET_REMOTE_HEARTBEAT_MS
        .get()
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_EVERY)
}

/// The task ids the worker runs now, shared by its jobs and its heartbeat.
#[derive(Debug, Clone, Default)]
pub struct Running {
    ids: Arc<Mutex<BTreeSet<String>>>,
    changed: Arc<Notify>,
}

impl Running {
    pub fn insert(&self, id: &str) {
        if let Ok(mut ids) = self.ids.lock() {
            ids.insert(id.to_string());
        }
        self.changed.notify_one();
    }

    pub fn remove(&self, id: &str) {
        if let Ok(mut ids) = self.ids.lock() {
            ids.remove(id);
        }
        self.changed.notify_one();
    }

    pub fn ids(&self) -> Vec<String> {
        self.ids
            .lock()
            .map(|ids| ids.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// Puts the heartbeat until `stop` fires, then deletes it.
pub async fn run(
    broker: Broker,
    mut record: WorkerRecord,
    running: Running,
    every: Duration,
    stop: CancellationToken,
) {
    loop {
        record.running = running.ids();
        record.heartbeat_ms = crate::now_ms();
        if let Ok(bytes) = serde_json::to_vec(&record) {
            if let Err(err) = broker.workers.put(&record.id, bytes.into()).await {
                tracing::debug!("heartbeat of {}: {err}", record.id);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = running.changed.notified() => {}
            () = stop.cancelled() => break,
        }
    }
    if let Err(err) = broker.workers.delete(&record.id).await {
        tracing::warn!("removing the heartbeat of {}: {err}", record.id);
    }
}
