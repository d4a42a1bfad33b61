//! One delivery of a job, from the queue to its acknowledgement: labels, the give-up after
//! too many deliveries, a task already ended, the fresh checkout, the session, the result
//! branch, the final record and `ended` event — and the job's delivery renewed all along, so
//! only a worker that died loses it.

use super::admit;
use super::checkout;
use super::child;
use super::control;
use super::driver::Ending;
use super::heartbeat::Running;
use super::publish::{get_record, put_record, Events};
use super::session::{self, Outcome, Parts};
use crate::broker::Broker;
use crate::event::WorkerEvent;
use crate::job::Job;
use crate::record::{RemoteUsage, TaskRecord, TaskState};
use crate::signing::{Opened, TrustedKeys};
use async_nats::jetstream::{AckKind, Message};
use fleet_tools::permissions::PermissionMode;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a job asking for a label this worker lacks waits before it is offered again.
const LABEL_DELAY: Duration = Duration::from_millis(500);
/// How long a stopping worker still tries to store a job's last events and record.
const WRITE_GRACE: Duration = Duration::from_secs(10);

/// What every job of the worker shares.
#[derive(Debug)]
pub struct Ctx {
    pub broker: Broker,
    pub id: String,
    pub labels: Vec<String>,
    pub program: PathBuf,
    pub work_root: PathBuf,
    pub running: Running,
    /// The keys whose jobs run here.
    pub trusted: TrustedKeys,
    /// The widest permission mode a job may ask for.
    pub max_mode: PermissionMode,
}

/// Handles one delivered job until it is acknowledged, given back or left to JetStream.
pub async fn handle(ctx: Arc<Ctx>, message: Message, shutdown: CancellationToken) {
    // Nothing in the message is believed before its signature checks out.
    let mut job = match crate::signing::open(&message.payload, &ctx.trusted) {
        Opened::Verified { job, .. } => *job,
        Opened::Refused { task_id, reason } => {
            let (writes, grace) = writes_until(&shutdown);
            admit::drop_unverified(&ctx, task_id.as_deref(), &reason, &writes).await;
            grace.abort();
            let _ = message.ack_with(AckKind::Term).await;
            return;
        }
    };
    // The id names folders, subjects and keys: a forged one (`../x`, `r.>`) never gets that far.
    if !crate::names::is_task_id(&job.task_id) {
        eprintln!(
            "fleet worker {}: dropped a job whose task id {:?} is not one (r and 16 hex digits)",
            ctx.id, job.task_id
        );
        let _ = message.ack_with(AckKind::Term).await;
        return;
    }
    if let Some(label) = job.labels.iter().find(|l| !ctx.labels.contains(l)) {
        tracing::debug!(
            "{}: needs label {label:?}; left to another worker",
            job.task_id
        );
        let _ = message.ack_with(AckKind::Nak(Some(LABEL_DELAY))).await;
        return;
    }
    if shutdown.is_cancelled() {
        let _ = message.ack_with(AckKind::Nak(None)).await;
        return;
    }
    let existing = match get_record(&ctx.broker, &job.task_id).await {
        Ok(record) => record,
        Err(err) => {
            eprintln!(
                "fleet worker {}: {}: {err}; offered again",
                ctx.id, job.task_id
            );
            let _ = message.ack_with(AckKind::Nak(Some(LABEL_DELAY))).await;
            return;
        }
    };
    if existing.as_ref().is_some_and(|r| r.state.is_terminal()) {
        // Stopped while queued, or finished by an earlier delivery: nothing to run.
        let _ = message.ack_with(AckKind::Ack).await;
        return;
    }
    let delivered = message
        .info()
        .map(|info| u32::try_from(info.delivered).unwrap_or(1))
        .unwrap_or(1);
    let attempt = attempt_number(existing.as_ref(), delivered);
    let record = existing.unwrap_or_else(|| TaskRecord::queued(&job));
    let message = Arc::new(message);
    // Events and records are retried through a broker restart, even once the worker is
    // stopping, for a while.
    let (writes, grace) = writes_until(&shutdown);
    if attempt > job.max_deliver {
        give_up(&ctx, &job, record, attempt, &message, &writes).await;
        grace.abort();
        return;
    }
    if let Err(reason) = admit::check(&mut job, ctx.max_mode) {
        eprintln!("fleet worker {}: {} failed: {reason}", ctx.id, job.task_id);
        admit::fail(
            &ctx,
            &job.task_id,
            record,
            attempt,
            &reason.to_string(),
            &writes,
        )
        .await;
        grace.abort();
        let _ = message.ack_with(AckKind::Term).await;
        return;
    }
    ctx.running.insert(&job.task_id);
    eprintln!(
        "fleet worker {}: {} started (attempt {attempt}): {}",
        ctx.id, job.task_id, job.description
    );
    let renew = renew_delivery(message.clone(), ctx.broker.progress_every());
    let state = run_attempt(&ctx, &job, record, attempt, &message, &shutdown, &writes).await;
    renew.abort();
    grace.abort();
    ctx.running.remove(&job.task_id);
    match state {
        Some(state) => eprintln!(
            "fleet worker {}: {} {}",
            ctx.id,
            job.task_id,
            state.as_str()
        ),
        None => eprintln!(
            "fleet worker {}: {} given back to the queue (the worker stops)",
            ctx.id, job.task_id
        ),
    }
}

/// A token for a job's writes that fires [`WRITE_GRACE`] after `shutdown` does, and the task
/// that fires it (aborted when the job is done).
fn writes_until(shutdown: &CancellationToken) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let writes = CancellationToken::new();
    let (stop, fire) = (shutdown.clone(), writes.clone());
    let task = tokio::spawn(async move {
        stop.cancelled().await;
        tokio::time::sleep(WRITE_GRACE).await;
        fire.cancel();
    });
    (writes, task)
}

/// Which delivery this is: one more than the attempts a worker already started (deliveries
/// refused for a missing label do not count), or JetStream's count when there is no record.
fn attempt_number(record: Option<&TaskRecord>, delivered: u32) -> u32 {
    match record {
        Some(record) => record.attempt + 1,
        None => delivered.max(1),
    }
}

/// Keeps JetStream from giving the job to another worker while it runs here.
fn renew_delivery(message: Arc<Message>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            if let Err(err) = message.ack_with(AckKind::Progress).await {
                tracing::debug!("renewing a job's delivery: {err}");
            }
        }
    })
}

/// Too many deliveries: every worker that had the job died with it. The job fails, saying so.
async fn give_up(
    ctx: &Ctx,
    job: &Job,
    record: TaskRecord,
    attempt: u32,
    message: &Message,
    writes: &CancellationToken,
) {
    let last = record.worker.as_deref().unwrap_or("unknown");
    let reason = format!(
        "gave up: delivered {attempt} times, more than its max_deliver of {}; the worker(s) \
         that ran it stopped heartbeating before it finished (last: {last})",
        job.max_deliver
    );
    eprintln!("fleet worker {}: {} failed: {reason}", ctx.id, job.task_id);
    admit::fail(ctx, &job.task_id, record, attempt, &reason, writes).await;
    let _ = message.ack_with(AckKind::Term).await;
}

fn end_record(record: &mut TaskRecord, state: TaskState, result: Option<String>, events: u64) {
    let now = crate::now_ms();
    record.state = state;
    record.result = result;
    record.events = events;
    record.ended_ms = Some(now);
    record.updated_ms = now;
}

/// Runs the attempt; the final state, or `None` when the job was given back.
async fn run_attempt(
    ctx: &Ctx,
    job: &Job,
    mut record: TaskRecord,
    attempt: u32,
    message: &Message,
    shutdown: &CancellationToken,
    writes: &CancellationToken,
) -> Option<TaskState> {
    let broker = &ctx.broker;
    let mut events = Events::start(broker, &job.task_id, attempt, writes.clone());
    let now = crate::now_ms();
    record.state = TaskState::Running;
    record.worker = Some(ctx.id.clone());
    record.attempt = attempt;
    record.started_ms = Some(now);
    record.ended_ms = None;
    record.result = None;
    record.plan = None;
    record.branch = None;
    record.events = 0;
    record.usage = RemoteUsage::default();
    record.updated_ms = now;
    put_record(broker, &record, writes).await;
    events
        .own(WorkerEvent::Started {
            worker: ctx.id.to_string(),
            attempt,
        })
        .await;

    let folder = tempfile::Builder::new()
        .prefix(&format!("{}-", job.task_id))
        .tempdir_in(&ctx.work_root);
    let outcome = match &folder {
        Err(err) => Outcome::Ended {
            ending: failed(format!(
                "cannot make a checkout folder in {}: {err}",
                ctx.work_root.display()
            )),
            driver: super::driver::Driver::new(job.kind),
        },
        Ok(folder) => run_in(ctx, job, &mut record, &mut events, folder.path(), shutdown).await,
    };
    let (mut ending, usage) = match outcome {
        Outcome::GivenBack => {
            events.flush().await;
            record.state = TaskState::Queued;
            record.worker = None;
            record.updated_ms = crate::now_ms();
            put_record(broker, &record, writes).await;
            let _ = message.ack_with(AckKind::Nak(None)).await;
            return None;
        }
        Outcome::Ended { ending, driver } => (ending, driver.usage),
    };
    record.usage = usage;
    if ending.branch {
        if let (Some(repo), Ok(folder)) = (&job.repo, &folder) {
            let work = folder.path().join("work");
            match checkout::result_branch(
                broker,
                &job.task_id,
                &repo.snapshot,
                &work,
                folder.path(),
            )
            .await
            {
                Ok(branch) => record.branch = branch,
                Err(err) => {
                    ending.state = TaskState::Failed;
                    let text = ending.result.take().unwrap_or_default();
                    ending.result = Some(format!(
                        "{text}\n\nThe job's changes could not be sent back: {err}"
                    ));
                }
            }
        }
    }
    // The record ends first, so a client that reads it on the `ended` event sees the end.
    events.flush().await;
    let state = ending.state;
    let stored = events.stored();
    end_record(&mut record, state, ending.result.clone(), stored + 1);
    put_record(broker, &record, writes).await;
    events
        .own(WorkerEvent::Ended {
            state: state.into(),
            result: ending.result,
        })
        .await;
    events.flush().await;
    acknowledge(message).await;
    Some(state)
}

fn failed(reason: String) -> Ending {
    Ending {
        state: TaskState::Failed,
        result: Some(reason),
        branch: false,
    }
}

/// Checks the repository out in `folder/work`, starts the process there and drives it.
async fn run_in(
    ctx: &Ctx,
    job: &Job,
    record: &mut TaskRecord,
    events: &mut Events,
    folder: &Path,
    shutdown: &CancellationToken,
) -> Outcome {
    let ended = |reason: String| Outcome::Ended {
        ending: failed(reason),
        driver: super::driver::Driver::new(job.kind),
    };
    let work = folder.join("work");
    if let Err(reason) = checkout::checkout(&ctx.broker, job, folder, &work).await {
        return ended(reason.to_string());
    }
    let start = match checkout::start_folder(job, &work) {
        Ok(start) => start,
        Err(reason) => return ended(reason.to_string()),
    };
    // Retried while the broker is away (it may restart just as the job starts); a worker
    // told to stop meanwhile gives the job back.
    let subscribed = crate::client::retrying(crate::names::CONTROL_STREAM, || {
        control::subscribe(
            &ctx.broker,
            &job.task_id,
            ctx.trusted.clone(),
            ctx.id.clone(),
        )
    });
    let mut controls = tokio::select! {
        subscribed = subscribed => match subscribed {
            Ok(controls) => controls,
            Err(err) => return ended(format!("cannot read the task's controls: {err}")),
        },
        () = shutdown.cancelled() => return Outcome::GivenBack,
    };
    let process = match child::spawn(&ctx.program, &child::args(job), &start) {
        Ok(process) => process,
        Err(err) => {
            return ended(format!(
                "cannot start {} for the agent: {err}",
                ctx.program.display()
            ))
        }
    };
    let parts = Parts {
        broker: &ctx.broker,
        job,
        record,
        events,
        controls: &mut controls,
        shutdown,
        max_mode: ctx.max_mode,
    };
    session::drive(process, parts).await
}

/// Acknowledges the job, waiting for JetStream to confirm it (retried while the broker is
/// away: an unconfirmed acknowledgement would run the job again).
async fn acknowledge(message: &Message) {
    for _ in 0..20 {
        match message.double_ack_with(AckKind::Ack).await {
            Ok(()) => return,
            Err(err) => {
                tracing::debug!("acknowledging a job: {err}; retrying");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}
