//! The detached poll against a scripted source: phases as they change, waiting for a new plan,
//! and — with short overrides — giving up after consecutive failures and timing out, both of
//! which archive the remote session.

use fleet_remote::ultraplan::poll::{poll, PollConfig, PollOutcome, StateSource, Until};
use fleet_remote::ultraplan::Phase;
use fleet_remote::{JobKind, RemoteError, TaskRecord, TaskState};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

const TASK: &str = "r00112233aabbccdd";

fn record(state: TaskState, events: u64, plan: Option<&str>) -> TaskRecord {
    TaskRecord {
        task_id: TASK.to_string(),
        kind: JobKind::Ultraplan,
        description: "ultraplan: test".to_string(),
        state,
        worker: Some("w1".to_string()),
        attempt: 1,
        plan: plan.map(str::to_string),
        result: None,
        branch: None,
        usage: Default::default(),
        events,
        queued_ms: 1,
        started_ms: Some(2),
        ended_ms: None,
        updated_ms: 3 + events,
        origin: "test".to_string(),
    }
}

fn broken() -> RemoteError {
    RemoteError::Connect {
        url: "nats://127.0.0.1:1".to_string(),
        reason: "connection refused".to_string(),
    }
}

type Look = Result<Option<TaskRecord>, RemoteError>;

/// Answers reads from a script; when it runs out, repeats `then` (or fails when `None`).
struct Scripted {
    script: Mutex<VecDeque<Look>>,
    then: Option<TaskRecord>,
    reads: Mutex<u32>,
    archived: Mutex<Vec<String>>,
    archive_fails: bool,
}

impl Scripted {
    fn new(script: Vec<Look>, then: Option<TaskRecord>) -> Self {
        Self {
            script: Mutex::new(script.into()),
            then,
            reads: Mutex::new(0),
            archived: Mutex::new(Vec::new()),
            archive_fails: false,
        }
    }

    fn reads(&self) -> u32 {
        *self.reads.lock().expect("lock")
    }

    fn archived(&self) -> Vec<String> {
        self.archived.lock().expect("lock").clone()
    }
}

impl StateSource for Scripted {
    async fn read(&self, _task: &str, _seen: Option<&TaskRecord>, _wait: Duration) -> Look {
        *self.reads.lock().expect("lock") += 1;
        let next = self.script.lock().expect("lock").pop_front();
        next.unwrap_or_else(|| self.then.clone().map(Some).ok_or_else(broken))
    }

    async fn archive(&self, task_id: &str) -> Result<(), RemoteError> {
        self.archived
            .lock()
            .expect("lock")
            .push(task_id.to_string());
        if self.archive_fails {
            Err(broken())
        } else {
            Ok(())
        }
    }
}

fn quick(max_failures: u32, timeout_ms: u64) -> PollConfig {
    PollConfig {
        interval: Duration::from_millis(5),
        max_failures,
        timeout: Duration::from_millis(timeout_ms),
    }
}

async fn run(source: &Scripted, config: PollConfig, until: Until) -> (PollOutcome, Vec<Phase>) {
    let mut phases = Vec::new();
    let outcome = poll(source, TASK, &config, until, |p| phases.push(p)).await;
    (outcome, phases)
}

#[tokio::test]
async fn phases_are_reported_as_they_change_until_the_plan_is_ready() {
    let source = Scripted::new(
        vec![
            Ok(Some(record(TaskState::Queued, 0, None))),
            Ok(Some(record(TaskState::Running, 4, None))),
            // the turn ended: idle, but with new events since the last look: still running
            Ok(Some(record(TaskState::Idle, 9, None))),
            // idle and quiet: it waits for the person
            Ok(Some(record(TaskState::Idle, 9, None))),
            Ok(Some(record(TaskState::Running, 12, None))),
            Ok(Some(record(TaskState::PlanReady, 20, Some("plan A")))),
        ],
        None,
    );
    let (outcome, phases) = run(&source, quick(5, 60_000), Until::Plan { not: None }).await;
    assert_eq!(
        phases,
        [
            Phase::Running,
            Phase::NeedsInput,
            Phase::Running,
            Phase::PlanReady
        ]
    );
    match outcome {
        PollOutcome::PlanReady(record) => assert_eq!(record.plan.as_deref(), Some("plan A")),
        other => panic!("want the plan, got {other:?}"),
    }
    assert!(source.archived().is_empty(), "a ready plan is not archived");
}

#[tokio::test]
async fn after_a_rejection_the_old_plan_does_not_count_even_if_running_was_missed() {
    let old = record(TaskState::PlanReady, 20, Some("plan A"));
    let source = Scripted::new(
        vec![
            Ok(Some(old.clone())),
            Ok(Some(old.clone())),
            Ok(Some(record(TaskState::PlanReady, 31, Some("plan B")))),
        ],
        None,
    );
    let until = Until::Plan {
        not: Some(Box::new(old)),
    };
    let (outcome, _) = run(&source, quick(5, 60_000), until).await;
    match outcome {
        PollOutcome::PlanReady(record) => assert_eq!(record.plan.as_deref(), Some("plan B")),
        other => panic!("want plan B, got {other:?}"),
    }
    assert_eq!(source.reads(), 3);
}

#[tokio::test]
async fn following_to_the_end_passes_plan_ready_and_stops_at_a_terminal_state() {
    let mut done = record(TaskState::Completed, 40, Some("plan A"));
    done.result = Some("done".to_string());
    let source = Scripted::new(
        vec![
            Ok(Some(record(TaskState::PlanReady, 20, Some("plan A")))),
            Ok(Some(record(TaskState::Executing, 25, Some("plan A")))),
            Ok(Some(done)),
        ],
        None,
    );
    let (outcome, phases) = run(&source, quick(5, 60_000), Until::End).await;
    assert_eq!(phases, [Phase::PlanReady, Phase::Running]);
    match outcome {
        PollOutcome::Ended(record) => assert_eq!(record.state, TaskState::Completed),
        other => panic!("want the end, got {other:?}"),
    }
    assert!(source.archived().is_empty());
}

#[tokio::test]
async fn consecutive_failures_give_up_and_archive_while_a_good_look_resets_the_count() {
    let running = record(TaskState::Running, 1, None);
    let source = Scripted::new(
        vec![
            Ok(Some(running.clone())),
            Err(broken()),
            Err(broken()),
            Ok(Some(running.clone())), // resets: two failures were not three in a row
            Ok(None),                  // an unknown task counts as a failure too
            Err(broken()),
        ],
        None, // then the broker is gone for good
    );
    let (outcome, phases) = run(&source, quick(3, 60_000), Until::Plan { not: None }).await;
    match outcome {
        PollOutcome::GaveUp {
            failures,
            last_error,
            archived,
        } => {
            assert_eq!(failures, 3);
            assert!(last_error.contains("cannot reach"), "{last_error}");
            assert_eq!(archived, Ok(()));
        }
        other => panic!("want a give-up, got {other:?}"),
    }
    assert_eq!(source.reads(), 7, "gave up on the third failure in a row");
    assert_eq!(source.archived(), [TASK]);
    assert_eq!(phases, [Phase::Running]);
}

#[tokio::test]
async fn a_failed_archive_is_said_not_hidden() {
    let mut source = Scripted::new(Vec::new(), None);
    source.archive_fails = true;
    let (outcome, _) = run(&source, quick(2, 60_000), Until::End).await;
    match outcome {
        PollOutcome::GaveUp { archived, .. } => {
            let err = archived.expect_err("the archive failed");
            assert!(
                matches!(err, fleet_remote::ultraplan::poll::ArchiveError::Refused(_)),
                "{err:?}"
            );
            assert!(err.to_string().contains("cannot reach"), "{err}");
        }
        other => panic!("want a give-up, got {other:?}"),
    }
    assert_eq!(source.archived(), [TASK], "it still tried");
}

#[tokio::test]
async fn the_deadline_times_out_and_archives() {
    let source = Scripted::new(Vec::new(), Some(record(TaskState::Running, 1, None)));
    let (outcome, phases) = run(&source, quick(5, 100), Until::Plan { not: None }).await;
    assert_eq!(outcome, PollOutcome::TimedOut { archived: Ok(()) });
    assert_eq!(source.archived(), [TASK]);
    assert_eq!(phases, [Phase::Running]);
    assert!(source.reads() > 1, "it kept looking until the deadline");
}

#[test]
fn the_defaults_are_the_designs() {
    let config = PollConfig::default();
    assert_eq!(config.interval, Duration::from_secs(3));
    assert_eq!(config.max_failures, 5);
    assert_eq!(config.timeout, Duration::from_secs(30 * 60));
}
