//! The broker's task records merged into the sessions (`Hub::set_remote_jobs`): a job a
//! session launched takes the record's worker, attempt and state; a stranger's record stays
//! out. Waits are bounded; nothing asserts on time alone.

use crate::hub_common;

use std::path::Path;

use fleet_dashboard::api::RemoteJob;
use fleet_dashboard::Hub;
use fleet_protocol::{AgentEvent, AgentRef, EventKind, TaskStarted};
use hub_common::batch_where;

fn remote_started(id: &str) -> AgentEvent {
    AgentEvent {
        agent: AgentRef::main(),
        kind: EventKind::TaskStarted(TaskStarted {
            task_id: id.into(),
            tool_use_id: format!("tu-{id}"),
            description: format!("job {id}"),
            subagent_type: "general-purpose".into(),
            prompt: "p".into(),
            model: "m".into(),
            is_backgrounded: true,
            spawn_depth: 1,
            task_type: "remote_agent".into(),
            output_file: String::new(),
        }),
    }
}

fn record(id: &str, worker: Option<&str>, attempt: u32, state: &str) -> RemoteJob {
    RemoteJob {
        id: id.into(),
        agent_id: None,
        worker: worker.map(str::to_owned),
        attempt,
        state: state.into(),
        description: Some(format!("broker says {id}")),
    }
}

fn job(hub: &Hub, session: &str, id: &str) -> Option<RemoteJob> {
    hub.snapshot(session)?
        .remote_jobs
        .into_iter()
        .find(|j| j.id == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_records_update_the_jobs_a_session_knows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let feed = hub.attach_live("s1", Path::new("/work/app"), None);
    let mut rx = hub.subscribe("s1").expect("subscribe");
    feed.push(&remote_started("r1"));
    batch_where(&mut rx, |b| b.remote_jobs.iter().any(|j| j.id == "r1")).await;
    let before = job(&hub, "s1", "r1").expect("r1 known from the event");
    assert_eq!(before.worker, None);
    assert_eq!(before.attempt, 0);

    hub.set_remote_jobs(vec![
        record("r1", Some("worker-7"), 2, "running"),
        record("stranger", Some("worker-1"), 1, "running"),
    ]);
    let batch = batch_where(&mut rx, |b| {
        b.remote_jobs
            .iter()
            .any(|j| j.id == "r1" && j.worker.is_some())
    })
    .await;
    let sent = batch.remote_jobs.iter().find(|j| j.id == "r1").expect("r1");
    assert_eq!(sent.worker.as_deref(), Some("worker-7"));
    assert_eq!(sent.attempt, 2);
    assert_eq!(sent.state, "running");
    assert_eq!(sent.description.as_deref(), Some("broker says r1"));
    // The session's own tie to its agent stays.
    assert_eq!(sent.agent_id.as_deref(), Some("r1"));
    let snap = hub.snapshot("s1").expect("snapshot");
    assert!(
        snap.remote_jobs.iter().all(|j| j.id != "stranger"),
        "a record no session launched stays out: {:?}",
        snap.remote_jobs
    );

    // A later record without a worker (requeued) keeps the last known one, takes the rest.
    hub.set_remote_jobs(vec![record("r1", None, 3, "queued")]);
    let batch = batch_where(&mut rx, |b| {
        b.remote_jobs.iter().any(|j| j.id == "r1" && j.attempt == 3)
    })
    .await;
    let sent = batch.remote_jobs.iter().find(|j| j.id == "r1").expect("r1");
    assert_eq!(sent.state, "queued");
    assert_eq!(sent.worker.as_deref(), Some("worker-7"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_takes_only_its_own_jobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = Hub::open(dir.path().join("home")).expect("open");
    let one = hub.attach_live("s1", Path::new("/work/one"), None);
    let two = hub.attach_live("s2", Path::new("/work/two"), None);
    let mut rx1 = hub.subscribe("s1").expect("subscribe s1");
    let mut rx2 = hub.subscribe("s2").expect("subscribe s2");
    one.push(&remote_started("r1"));
    two.push(&remote_started("r2"));
    batch_where(&mut rx1, |b| b.remote_jobs.iter().any(|j| j.id == "r1")).await;
    batch_where(&mut rx2, |b| b.remote_jobs.iter().any(|j| j.id == "r2")).await;

    hub.set_remote_jobs(vec![
        record("r1", Some("w1"), 1, "completed"),
        record("r2", Some("w2"), 1, "failed"),
    ]);
    batch_where(&mut rx1, |b| {
        b.remote_jobs.iter().any(|j| j.state == "completed")
    })
    .await;
    batch_where(&mut rx2, |b| {
        b.remote_jobs.iter().any(|j| j.state == "failed")
    })
    .await;
    let ids = |s: &str| -> Vec<String> {
        hub.snapshot(s)
            .map(|snap| snap.remote_jobs.into_iter().map(|j| j.id).collect())
            .unwrap_or_default()
    };
    assert_eq!(ids("s1"), vec!["r1".to_owned()]);
    assert_eq!(ids("s2"), vec!["r2".to_owned()]);
    assert_eq!(
        job(&hub, "s2", "r2").map(|j| (j.worker, j.attempt, j.state)),
        Some((Some("w2".to_owned()), 1, "failed".to_owned()))
    );
    // Handing the same records over again leaves them as they are.
    hub.set_remote_jobs(vec![record("r1", Some("w1"), 1, "completed")]);
    assert_eq!(
        job(&hub, "s1", "r1").map(|j| (j.worker, j.attempt, j.state)),
        Some((Some("w1".to_owned()), 1, "completed".to_owned()))
    );
}
