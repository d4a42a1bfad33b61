//! The caller's side against a real nats-server: publishing jobs, reading events (replay,
//! resume, a broker restart), stopping, watching records and the status listing.
#![allow(clippy::unwrap_used)]

use crate::support;

use async_nats::jetstream::consumer::PullConsumer;
use fleet_remote::{names, Control, Job, Remote, TaskRecord, TaskState, WorkerRecord};
use fleet_testkit::NatsServer;
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;
use support::{job, publish_event};

const WAIT: Duration = Duration::from_secs(20);

async fn pull_all(consumer: &PullConsumer) -> Vec<Job> {
    let mut batch = consumer
        .fetch()
        .max_messages(10)
        .expires(Duration::from_millis(500))
        .messages()
        .await
        .unwrap();
    let mut jobs = Vec::new();
    while let Some(message) = batch.next().await {
        jobs.push(support::open_job(&message.unwrap().payload));
    }
    jobs
}

#[tokio::test]
async fn a_submitted_job_is_queued_once_with_its_record() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    let sent = job("r00000000000000a1", 1000);
    let submitted = remote.submit(sent.clone()).await.unwrap();
    assert_eq!(submitted.task_id, "r00000000000000a1");
    assert_eq!(
        submitted.session_url,
        format!("{} fleet.events.r00000000000000a1", server.url())
    );
    // A retried publish of the same task is not a second job.
    remote.submit(sent.clone()).await.unwrap();
    let record = remote.record("r00000000000000a1").await.unwrap().unwrap();
    assert_eq!(record.state, TaskState::Queued);
    assert_eq!(record.queued_ms, 1000);
    assert_eq!(record.description, "job r00000000000000a1");
    assert_eq!(record.origin, "host:/x");
    let consumer = remote.broker().workers_consumer().await.unwrap();
    assert_eq!(pull_all(&consumer).await, vec![sent]);
    assert_eq!(remote.record("r00000000000000ff").await.unwrap(), None);
    assert!(remote.record("nope").await.is_err(), "not an id at all");
}

#[tokio::test]
async fn events_replay_from_the_start_or_after_a_sequence_then_follow_live() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    let first = publish_event(&remote, "r000000000000a001", 1, json!({"n": 1})).await;
    publish_event(&remote, "other", 1, json!({"n": 99})).await;
    let second = publish_event(&remote, "r000000000000a001", 2, json!({"n": 2})).await;

    let mut all = remote.events("r000000000000a001", 0).await.unwrap();
    let one = tokio::time::timeout(WAIT, all.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (one.seq, one.attempt, one.line.clone()),
        (first, 1, json!({"n": 1}))
    );
    let two = tokio::time::timeout(WAIT, all.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (two.seq, two.attempt, two.line.clone()),
        (second, 2, json!({"n": 2}))
    );
    let live = publish_event(&remote, "r000000000000a001", 2, json!({"n": 3})).await;
    let three = tokio::time::timeout(WAIT, all.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((three.seq, three.line), (live, json!({"n": 3})));

    let mut resumed = remote.events("r000000000000a001", first).await.unwrap();
    let next = tokio::time::timeout(WAIT, resumed.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        next.line,
        json!({"n": 2}),
        "resumes after the sequence given"
    );
}

#[tokio::test]
async fn a_reader_keeps_going_across_a_broker_restart() {
    let Some(mut server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    publish_event(&remote, "r000000000000a002", 1, json!({"n": 1})).await;
    let mut events = remote.events("r000000000000a002", 0).await.unwrap();
    let one = tokio::time::timeout(WAIT, events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(one.line, json!({"n": 1}));
    server.restart();
    // The publisher retries too: the broker may still be coming back.
    let publisher = support::connect(&server.url()).await;
    publish_event(&publisher, "r000000000000a002", 1, json!({"n": 2})).await;
    let two = tokio::time::timeout(Duration::from_secs(60), events.next())
        .await
        .expect("the reader saw the event published after the restart")
        .unwrap()
        .unwrap();
    assert_eq!(two.line, json!({"n": 2}));
    assert!(two.seq > one.seq);
}

#[tokio::test]
async fn logs_are_what_was_published_so_far() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    assert!(remote.logs("r000000000000a003").await.unwrap().is_empty());
    for n in 1..=3 {
        publish_event(&remote, "r000000000000a003", 1, json!({"n": n})).await;
    }
    let logs = remote.logs("r000000000000a003").await.unwrap();
    let lines: Vec<_> = logs.iter().map(|e| e.line["n"].as_u64().unwrap()).collect();
    assert_eq!(lines, vec![1, 2, 3]);
}

#[tokio::test]
async fn stopping_a_queued_task_kills_its_record_but_not_a_running_ones() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    remote.submit(job("r000000000000b001", 1)).await.unwrap();
    remote
        .send("r000000000000b001", Control::Stop)
        .await
        .unwrap();
    let killed = remote.record("r000000000000b001").await.unwrap().unwrap();
    assert_eq!(killed.state, TaskState::Killed);
    assert!(killed.ended_ms.is_some());
    assert_eq!(
        killed.result.as_deref(),
        Some("Stopped before a worker took it.")
    );

    remote.submit(job("r000000000000b002", 2)).await.unwrap();
    let mut running = remote.record("r000000000000b002").await.unwrap().unwrap();
    running.state = TaskState::Running;
    put_record(&remote, &running).await;
    remote
        .send("r000000000000b002", Control::Stop)
        .await
        .unwrap();
    remote
        .send(
            "r000000000000b002",
            Control::Reject {
                feedback: "more tests".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        remote
            .record("r000000000000b002")
            .await
            .unwrap()
            .unwrap()
            .state,
        TaskState::Running,
        "a running task is stopped by its worker, not by the caller"
    );
    // The requests wait on the control stream for the worker, in order.
    let stream = remote
        .broker()
        .js
        .get_stream(names::CONTROL_STREAM)
        .await
        .unwrap();
    let mut seen = Vec::new();
    for seq in 1..=3 {
        let message = stream.get_raw_message(seq).await.unwrap();
        let subject = message.subject.to_string();
        let task = subject.trim_start_matches("fleet.control.");
        let control = support::open_control(task, &message.payload);
        seen.push((subject, control));
    }
    assert_eq!(
        seen,
        vec![
            ("fleet.control.r000000000000b001".into(), Control::Stop),
            ("fleet.control.r000000000000b002".into(), Control::Stop),
            (
                "fleet.control.r000000000000b002".into(),
                Control::Reject {
                    feedback: "more tests".into()
                }
            ),
        ]
    );
}

async fn put_record(remote: &Remote, record: &TaskRecord) {
    remote
        .broker()
        .tasks
        .put(&record.task_id, serde_json::to_vec(record).unwrap().into())
        .await
        .unwrap();
}

#[tokio::test]
async fn next_record_returns_the_first_one_then_waits_for_a_change() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    let waiting = tokio::spawn({
        let remote = remote.clone();
        async move { remote.next_record("r000000000000c001", None).await }
    });
    remote.submit(job("r000000000000c001", 5)).await.unwrap();
    let first = tokio::time::timeout(WAIT, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.state, TaskState::Queued);

    let changed = tokio::spawn({
        let remote = remote.clone();
        let seen = first.clone();
        async move { remote.next_record("r000000000000c001", Some(&seen)).await }
    });
    let mut running = first.clone();
    running.state = TaskState::Running;
    running.worker = Some("w1".into());
    put_record(&remote, &running).await;
    let next = tokio::time::timeout(WAIT, changed)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(next, running);
}

#[tokio::test]
async fn status_lists_workers_and_tasks_newest_first() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    let worker = WorkerRecord {
        id: "w1".into(),
        host: "box".into(),
        pid: 7,
        slots: 2,
        running: vec!["r000000000000d002".into()],
        labels: vec!["gpu".into()],
        started_ms: 1,
        heartbeat_ms: 2,
    };
    remote
        .broker()
        .workers
        .put("w1", serde_json::to_vec(&worker).unwrap().into())
        .await
        .unwrap();
    remote.submit(job("r000000000000d001", 10)).await.unwrap();
    remote.submit(job("r000000000000d002", 30)).await.unwrap();
    remote.submit(job("r000000000000d003", 20)).await.unwrap();
    let status = remote.status().await.unwrap();
    assert_eq!(status.workers, vec![worker]);
    let order: Vec<&str> = status.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(
        order,
        vec![
            "r000000000000d002",
            "r000000000000d003",
            "r000000000000d001"
        ]
    );
}

#[tokio::test]
async fn a_task_without_a_branch_fetches_nothing_and_an_unknown_one_is_named() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let remote = support::connect(&server.url()).await;
    remote.submit(job("r000000000000e001", 1)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        remote
            .fetch_branch("r000000000000e001", dir.path())
            .await
            .unwrap(),
        None
    );
    let err = remote
        .fetch_branch("r000000000000ffff", dir.path())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("r000000000000ffff"), "{err}");
}
