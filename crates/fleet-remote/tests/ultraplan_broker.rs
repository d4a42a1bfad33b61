//! The poll against a real broker that dies: with short overrides it gives up after the
//! consecutive failures, tries to archive the session, and says the archive failed too.

use fleet_remote::ultraplan::poll::{poll, PollConfig, PollOutcome, Until};
use fleet_remote::ultraplan::Phase;
use fleet_remote::{names, JobKind, Remote, TaskRecord, TaskState};
use fleet_testkit::NatsServer;
use std::time::Duration;

fn running(task_id: &str) -> TaskRecord {
    TaskRecord {
        task_id: task_id.to_string(),
        kind: JobKind::Ultraplan,
        description: "ultraplan: broker test".to_string(),
        state: TaskState::Running,
        worker: None,
        attempt: 1,
        plan: None,
        result: None,
        branch: None,
        usage: Default::default(),
        events: 1,
        queued_ms: 1,
        started_ms: Some(2),
        ended_ms: None,
        updated_ms: 3,
        origin: "test".to_string(),
    }
}

#[tokio::test]
async fn killing_the_broker_makes_the_poll_give_up_and_say_the_archive_failed() {
    let Some(mut server) = NatsServer::start() else {
        return;
    };
    let remote = Remote::connect(&server.url()).await.expect("connect");
    let task_id = names::new_task_id();
    let record = serde_json::to_vec(&running(&task_id)).expect("json");
    remote
        .broker()
        .tasks
        .put(task_id.as_str(), record.into())
        .await
        .expect("put the record");

    let config = PollConfig {
        interval: Duration::from_millis(100),
        max_failures: 3,
        timeout: Duration::from_secs(600),
    };
    let (phase_tx, mut phases) = tokio::sync::mpsc::unbounded_channel();
    let follower = {
        let remote = remote.clone();
        let task_id = task_id.clone();
        tokio::spawn(async move {
            poll(&remote, &task_id, &config, Until::Plan { not: None }, |p| {
                let _ = phase_tx.send(p);
            })
            .await
        })
    };
    assert_eq!(phases.recv().await, Some(Phase::Running));
    server.kill();

    let outcome = follower.await.expect("the poll ends");
    match outcome {
        PollOutcome::GaveUp {
            failures, archived, ..
        } => {
            assert_eq!(failures, 3);
            assert!(archived.is_err(), "the broker is gone: {archived:?}");
        }
        other => panic!("want a give-up, got {other:?}"),
    }
}
