//! Remote jobs on the dashboard: when a broker is configured (as for `fleet remote status`:
//! `FLEET_NATS_URL`, else the `remote.natsUrl` setting), a task follows the broker's task
//! records and hands them to the hub, which merges them into the sessions that launched the
//! jobs (worker, attempt, state; see `fleet_dashboard`'s `Hub::set_remote_jobs`).
//!
//! It follows the `fleet_tasks` bucket with a JetStream KV watch (history first, then each
//! change as the broker stores it), so nothing polls. Records change on every event a job
//! publishes (its event count), so they are handed over at most once per [`HAND_EVERY`],
//! and again when the session list changes (a session read later from the store may know
//! a job whose record has not changed since). No broker configured: nothing runs. A broker
//! unreachable, or a watch that breaks: a warning to tracing and another try after
//! [`RETRY`]; the dashboard itself never stops for it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use fleet_dashboard::api::RemoteJob;
use fleet_dashboard::Hub;
use fleet_remote::{Remote, TaskRecord};
use futures::StreamExt;
use tokio::time::Instant;

/// The most often records are handed to the hub.
const HAND_EVERY: Duration = Duration::from_secs(1);
/// The wait before connecting again after the broker failed.
const RETRY: Duration = Duration::from_secs(10);

/// Starts following the broker configured for `cwd`, if any (silently nothing otherwise,
/// or outside a tokio runtime). The task runs as long as the process.
pub(crate) fn follow_broker(hub: &Hub, cwd: &Path) {
    let settings = crate::settings::load(cwd).ok();
    let Some(url) = crate::remote_cmd::configured_url(None, settings.as_ref()) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(run(hub.clone(), url));
}

async fn run(hub: Hub, url: String) {
    loop {
        match Remote::connect(&url).await {
            Ok(remote) => {
                if let Err(why) = follow(&hub, &remote).await {
                    tracing::warn!("dashboard: following the remote jobs on {url}: {why:#}");
                }
            }
            Err(why) => {
                tracing::warn!("dashboard: cannot reach the broker for remote jobs: {why}");
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Follows the records until the watch breaks.
async fn follow(hub: &Hub, remote: &Remote) -> anyhow::Result<()> {
    let mut watch = remote
        .broker()
        .tasks
        .watch_with_history(">")
        .await
        .map_err(|e| anyhow::anyhow!("watching {}: {e}", fleet_remote::names::TASKS_BUCKET))?;
    let mut sessions = hub.subscribe_sessions();
    let mut records: BTreeMap<String, RemoteJob> = BTreeMap::new();
    let mut dirty = false;
    let mut next_hand = Instant::now();
    loop {
        tokio::select! {
            entry = watch.next() => {
                let entry = match entry {
                    Some(Ok(entry)) => entry,
                    Some(Err(e)) => anyhow::bail!("the watch of the task records broke: {e}"),
                    None => anyhow::bail!("the watch of the task records ended"),
                };
                // A delete or purge carries no value.
                if entry.value.is_empty() {
                    dirty |= records.remove(&entry.key).is_some();
                    continue;
                }
                match serde_json::from_slice::<TaskRecord>(&entry.value) {
                    Ok(record) => {
                        records.insert(entry.key, job_of(&record));
                        dirty = true;
                    }
                    Err(e) => tracing::debug!(
                        "dashboard: skipping the unreadable task record {}: {e}",
                        entry.key
                    ),
                }
            }
            changed = sessions.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                dirty = true;
            }
            () = tokio::time::sleep_until(next_hand), if dirty => {
                hub.set_remote_jobs(records.values().cloned().collect());
                dirty = false;
                next_hand = Instant::now() + HAND_EVERY;
            }
        }
    }
}

/// The dashboard's view of a broker record.
fn job_of(record: &TaskRecord) -> RemoteJob {
    RemoteJob {
        id: record.task_id.clone(),
        agent_id: None,
        worker: record.worker.clone(),
        attempt: record.attempt,
        state: record.state.as_str().to_owned(),
        description: Some(record.description.clone()).filter(|d| !d.is_empty()),
    }
}
