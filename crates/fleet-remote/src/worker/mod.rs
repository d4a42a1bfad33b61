//! `fleet worker`: pulls jobs from the shared consumer, runs up to `slots` at once, each as a
//! `fleet` process in a fresh checkout under its own temporary folder, with the worker's own
//! model credentials.
//!
//! - `admit.rs`: the checks before a job runs (its signature, its mode against the maximum)
//! - `job_run.rs`: one delivery of a job, from the queue to its acknowledgement
//! - `checkout.rs`: the job's folder, checked out, and its changes sent back
//! - `session.rs`: the job's process driven, its output published
//! - `driver.rs`: what to answer and when the job ends (no I/O)
//! - `child.rs`: the process's command line, its start, and its killing
//! - `control.rs`: the task's stop and plan decisions
//! - `publish.rs`: events and records on the broker, retried across a broker restart; a
//!   bounded queue whose back-pressure holds the job's output while the broker is away
//! - `heartbeat.rs`: the worker's entry in `fleet_workers`

pub mod admit;
mod checkout;
pub mod child;
mod control;
pub mod driver;
pub mod heartbeat;
mod job_run;
pub mod publish;
mod session;

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::record::WorkerRecord;
use crate::signing::TrustedKeys;
use async_nats::jetstream::consumer::PullConsumer;
use fleet_tools::permissions::PermissionMode;
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long one pull request waits for a job. A job published meanwhile is delivered at
/// once; the wait only bounds how long a shutdown waits for the pull to end (so no job is
/// delivered to a worker that stopped listening).
const PULL_WAIT: Duration = Duration::from_secs(2);

/// How a worker is set up.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub url: String,
    pub slots: u32,
    pub labels: Vec<String>,
    /// The `fleet` binary each job runs (this binary, normally).
    pub program: PathBuf,
    /// Where jobs' checkouts go (a temporary folder each, removed after the job).
    pub work_root: PathBuf,
    /// A stable id (`<host>-<pid>` when `None`).
    pub id: Option<String>,
    /// The keys whose signed jobs run here; any other job is dropped.
    pub trusted: TrustedKeys,
    /// The widest permission mode a job may ask for ([`admit::DEFAULT_MAX_MODE`] unless the
    /// operator says otherwise); a job asking for more fails.
    pub max_mode: PermissionMode,
}

impl WorkerConfig {
    /// The id the worker goes by.
    pub fn worker_id(&self) -> String {
        self.id
            .clone()
            .unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id()))
    }
}

/// Runs the worker until `shutdown` fires: running jobs are stopped and given back to the
/// queue (not acknowledged), so another worker runs them.
pub async fn run(config: WorkerConfig, shutdown: CancellationToken) -> Result<(), RemoteError> {
    let broker = Broker::connect(&config.url).await?;
    let consumer = broker.workers_consumer().await?;
    std::fs::create_dir_all(&config.work_root).map_err(|source| RemoteError::Io {
        what: format!("making the work folder {}", config.work_root.display()),
        source,
    })?;
    let id = config.worker_id();
    let running = heartbeat::Running::default();
    let beat_stop = CancellationToken::new();
    let now = crate::now_ms();
    let record = WorkerRecord {
        id: id.clone(),
        host: host_name(),
        pid: std::process::id(),
        slots: config.slots.max(1),
        running: Vec::new(),
        labels: config.labels.clone(),
        started_ms: now,
        heartbeat_ms: now,
    };
    let beat = tokio::spawn(heartbeat::run(
        broker.clone(),
        record,
        running.clone(),
        heartbeat::every_from_env(),
        beat_stop.clone(),
    ));
    let ctx = Arc::new(job_run::Ctx {
        broker,
        id,
        labels: config.labels.clone(),
        program: config.program.clone(),
        work_root: config.work_root.clone(),
        running,
        trusted: config.trusted.clone(),
        max_mode: config.max_mode,
    });
    let slots = Arc::new(Semaphore::new(config.slots.max(1) as usize));
    let mut jobs = JoinSet::new();
    while !shutdown.is_cancelled() {
        // A job is fetched only when a slot is free, so the others stay for other workers.
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = shutdown.cancelled() => break,
        };
        match next_job(&consumer).await {
            Ok(Some(message)) => {
                let (ctx, shutdown) = (ctx.clone(), shutdown.clone());
                jobs.spawn(async move {
                    job_run::handle(ctx, message, shutdown).await;
                    drop(permit);
                });
            }
            Ok(None) => {}
            Err(err) => {
                tracing::debug!("pulling a job: {err}");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(250)) => {}
                    () = shutdown.cancelled() => {}
                }
            }
        }
        while jobs.try_join_next().is_some() {}
    }
    // Each job sees the shutdown: its process is killed and the job given back.
    while jobs.join_next().await.is_some() {}
    beat_stop.cancel();
    let _ = beat.await;
    Ok(())
}

/// One job from the queue, waiting up to [`PULL_WAIT`]; `None` when none came.
async fn next_job(
    consumer: &PullConsumer,
) -> Result<Option<async_nats::jetstream::Message>, RemoteError> {
    let mut batch = consumer
        .batch()
        .max_messages(1)
        .expires(PULL_WAIT)
        .messages()
        .await
        .map_err(|e| RemoteError::broker(crate::names::WORKERS_CONSUMER, e))?;
    match batch.next().await {
        Some(Ok(message)) => Ok(Some(message)),
        Some(Err(err)) => Err(RemoteError::broker(crate::names::WORKERS_CONSUMER, err)),
        None => Ok(None),
    }
}

/// This machine's name, for worker ids and `fleet remote status`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
