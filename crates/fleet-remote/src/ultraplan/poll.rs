//! The detached poll: follows a remote Ultraplan session while the person's terminal stays
//! free, reports its phase as it changes, and never leaves an orphan behind.
//!
//! It looks at the task's record at least every [`PollConfig::interval`] (3 s; a source may
//! answer sooner when the record changes, as [`Remote`]'s KV watch does), gives up after
//! [`PollConfig::max_failures`] consecutive failed looks (5), and times out after
//! [`PollConfig::timeout`] (30 min). On giving up and on timing out it **archives** the remote
//! session (a best-effort `Control::Stop`) and says whether that worked: a session nobody
//! follows any more must not keep a worker busy.
//!
//! The poll is generic over [`StateSource`], so giving up and timing out are tested with a
//! scripted source as well as against a real broker that is killed.

use super::state::{phase_of, Phase};
use crate::client::Remote;
use crate::error::RemoteError;
use crate::record::{Control, TaskRecord, TaskState};
use fleet_protocol::env::EnvError;
use std::future::Future;
use std::time::Duration;
use tokio::time::{timeout, Instant};

/// Between two looks at the remote state (`FLEET_ULTRAPLAN_POLL_MS`).
pub const POLL_INTERVAL: Duration = Duration::from_secs(3);
/// Consecutive failed looks before the poll gives up (`FLEET_ULTRAPLAN_MAX_FAILURES`).
pub const MAX_CONSECUTIVE_FAILURES: u32 = 5;
/// How long a session is followed at most (`FLEET_ULTRAPLAN_TIMEOUT_MS`).
pub const ULTRAPLAN_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The variables that override the three (declared with every other typed variable, so
/// `fleet` checks them at start).
pub use fleet_protocol::env::{
    FLEET_ULTRAPLAN_MAX_FAILURES, FLEET_ULTRAPLAN_POLL_MS, FLEET_ULTRAPLAN_TIMEOUT_MS,
};

/// How the poll paces itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollConfig {
    pub interval: Duration,
    pub max_failures: u32,
    pub timeout: Duration,
}

impl Default for PollConfig {
    fn default() -> Self {
        Self {
            interval: POLL_INTERVAL,
            max_failures: MAX_CONSECUTIVE_FAILURES,
            timeout: ULTRAPLAN_TIMEOUT,
        }
    }
}

impl PollConfig {
    /// The defaults, overridden by the `FLEET_ULTRAPLAN_*` variables (tests shorten them).
    pub fn from_env() -> Result<Self, EnvError> {
        let default = Self::default();
        Ok(Self {
            interval: FLEET_ULTRAPLAN_POLL_MS.get()?.unwrap_or(default.interval),
            max_failures: FLEET_ULTRAPLAN_MAX_FAILURES
                .get()?
                .map_or(default.max_failures, |n| n as u32),
            timeout: FLEET_ULTRAPLAN_TIMEOUT_MS.get()?.unwrap_or(default.timeout),
        })
    }
}

/// Where the poll reads the remote state from, and how it archives the session.
pub trait StateSource: Sync {
    /// The task's record: at once when `seen` is `None`, else once it differs from `seen`
    /// or after `wait`, whichever is first (the record as it is then). `Ok(None)`: the
    /// broker has no such task.
    fn read(
        &self,
        task_id: &str,
        seen: Option<&TaskRecord>,
        wait: Duration,
    ) -> impl Future<Output = Result<Option<TaskRecord>, RemoteError>> + Send;

    /// Puts the session away (stops it on its worker).
    fn archive(&self, task_id: &str) -> impl Future<Output = Result<(), RemoteError>> + Send;
}

impl StateSource for Remote {
    async fn read(
        &self,
        task_id: &str,
        seen: Option<&TaskRecord>,
        wait: Duration,
    ) -> Result<Option<TaskRecord>, RemoteError> {
        if let Some(seen) = seen {
            if let Ok(changed) = timeout(wait, self.next_record(task_id, Some(seen))).await {
                return changed.map(Some);
            }
        }
        // Read it again rather than trust `seen`: a broker that went away must count as a
        // failed look, not as "nothing changed".
        self.record(task_id).await
    }

    async fn archive(&self, task_id: &str) -> Result<(), RemoteError> {
        self.send(task_id, Control::Stop).await
    }
}

/// What the poll waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// A plan other than the one in `not` (the plan a rejection asked to revise), or the end.
    Plan { not: Option<Box<TaskRecord>> },
    /// The end of the task (completed, failed, killed, archived).
    End,
}

/// How a poll ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PollOutcome {
    /// A new plan is ready (only with [`Until::Plan`]).
    PlanReady(TaskRecord),
    /// The task reached a terminal state.
    Ended(TaskRecord),
    /// The deadline passed; the session was archived (or why not).
    TimedOut { archived: Result<(), ArchiveError> },
    /// Too many looks in a row failed; the session was archived (or why not).
    GaveUp {
        failures: u32,
        last_error: String,
        archived: Result<(), ArchiveError>,
    },
}

/// Why the session could not be archived when a poll ended.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ArchiveError {
    /// The broker refused or could not be reached.
    #[error("{0}")]
    Refused(#[source] std::sync::Arc<RemoteError>),
    /// No answer within the poll's bound: a dead broker does not hold the poll.
    #[error("no answer within {} ms", .0.as_millis())]
    NoAnswer(Duration),
}

/// Outcomes compare by what they say (the broker's errors are not comparable themselves).
impl PartialEq for ArchiveError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::NoAnswer(a), Self::NoAnswer(b)) => a == b,
            (Self::Refused(a), Self::Refused(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

/// The phase the poll reports for `record`, given the events count at the last look.
pub fn phase_from_record(record: &TaskRecord, events_before: Option<u64>) -> Phase {
    let new_events = events_before != Some(record.events);
    phase_of(
        record.state == TaskState::PlanReady,
        record.state == TaskState::Idle,
        new_events,
    )
}

/// Whether `record` is a plan the poll waits for: ready, and not the plan in `not`.
fn is_new_plan(record: &TaskRecord, not: Option<&TaskRecord>) -> bool {
    record.state == TaskState::PlanReady
        && not.is_none_or(|old| {
            old.state != TaskState::PlanReady
                || old.plan != record.plan
                || old.events != record.events
                || old.attempt != record.attempt
        })
}

/// Follows `task_id` until `until`, calling `on_phase` with each new phase (the first one
/// too), and archives the session when it gives up or times out.
pub async fn poll<S: StateSource>(
    source: &S,
    task_id: &str,
    config: &PollConfig,
    until: Until,
    mut on_phase: impl FnMut(Phase) + Send,
) -> PollOutcome {
    let deadline = Instant::now() + config.timeout;
    let mut seen: Option<TaskRecord> = None;
    let mut phase: Option<Phase> = None;
    let mut failures = 0u32;
    loop {
        let now = Instant::now();
        if now >= deadline {
            let archived = archive(source, task_id, config).await;
            return PollOutcome::TimedOut { archived };
        }
        let wait = config.interval.min(deadline - now);
        let looked_at = Instant::now();
        // A source that hangs (a broker that went away mid-request) is a failed look.
        let looked = timeout(
            wait + config.interval,
            source.read(task_id, seen.as_ref(), wait),
        )
        .await
        .unwrap_or_else(|_| {
            Err(RemoteError::broker(
                task_id,
                format!(
                    "no answer within {} ms",
                    (wait + config.interval).as_millis()
                ),
            ))
        });
        let record = match looked {
            Ok(Some(record)) => record,
            Ok(None) => {
                failures += 1;
                if failures >= config.max_failures {
                    return give_up(source, task_id, config, failures, "no such task").await;
                }
                sleep_until_next(wait, deadline).await;
                continue;
            }
            Err(err) => {
                failures += 1;
                if failures >= config.max_failures {
                    let reason = err.to_string();
                    return give_up(source, task_id, config, failures, &reason).await;
                }
                sleep_until_next(wait, deadline).await;
                continue;
            }
        };
        failures = 0;
        if seen.as_ref() == Some(&record) {
            // Nothing changed and the source answered early: keep the pace.
            tokio::time::sleep_until((looked_at + wait).min(deadline)).await;
        }
        if record.state.is_terminal() {
            return PollOutcome::Ended(record);
        }
        let now_phase = phase_from_record(&record, seen.as_ref().map(|r| r.events));
        if phase != Some(now_phase) {
            phase = Some(now_phase);
            on_phase(now_phase);
        }
        if let Until::Plan { not } = &until {
            if is_new_plan(&record, not.as_deref()) {
                return PollOutcome::PlanReady(record);
            }
        }
        seen = Some(record);
    }
}

async fn sleep_until_next(wait: Duration, deadline: Instant) {
    tokio::time::sleep_until((Instant::now() + wait).min(deadline)).await;
}

async fn give_up<S: StateSource>(
    source: &S,
    task_id: &str,
    config: &PollConfig,
    failures: u32,
    last_error: &str,
) -> PollOutcome {
    let archived = archive(source, task_id, config).await;
    PollOutcome::GaveUp {
        failures,
        last_error: last_error.to_string(),
        archived,
    }
}

/// Archives the session, best effort and bounded: a dead broker must not hold the poll.
async fn archive<S: StateSource>(
    source: &S,
    task_id: &str,
    config: &PollConfig,
) -> Result<(), ArchiveError> {
    let bound = config.interval.max(Duration::from_secs(2));
    match timeout(bound, source.archive(task_id)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err(ArchiveError::Refused(std::sync::Arc::new(err))),
        Err(_) => Err(ArchiveError::NoAnswer(bound)),
    }
}
