//! Remote agents tried the way an attacker would: whoever can publish on the broker can
//! queue jobs and write records, so what comes off the bus is checked before it names a
//! folder, a subject or a branch.
#![allow(clippy::unwrap_used)]

#[path = "remote/cluster.rs"]
mod cluster;
mod common;

use cluster::{job, wait_record, Cluster};
use common::{server, Project};
use fleet_remote::record::ResultBranch;
use fleet_remote::{names, now_ms, JobKind, TaskRecord, TaskState};
use fleet_testkit::{Rule, Scenario};

#[tokio::test(flavor = "multi_thread")]
async fn a_job_whose_task_id_is_a_path_or_a_wildcard_is_dropped_and_the_worker_goes_on() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    let remote = cluster.remote().await;
    let home = cluster.workers[0].home.clone();
    for forged in ["../../../escaped", "r.>", "r0123456789abcdef.x"] {
        let mut bad = job("forged");
        bad.task_id = forged.to_string();
        let payload = serde_json::to_vec(&bad).unwrap();
        remote
            .broker()
            .js
            .publish(names::JOBS_SUBJECT, payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    // A real job after them runs as usual.
    let good = remote.submit(job("after the forgeries")).await.unwrap();
    let record = wait_record(&remote, &good.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Completed, "{}", cluster.logs());
    let log = cluster.workers[0].log();
    assert_eq!(
        log.matches("is not one (r and 16 hex digits)").count(),
        3,
        "{log}"
    );
    // Nothing was made outside the worker's own folders.
    let parent = home.parent().unwrap();
    assert!(!parent.join("escaped").exists());
    assert!(!home.join("escaped").exists());
    // A client asked about such an id refuses before it reaches the bus.
    let err = remote.record("r.>").await.unwrap_err().to_string();
    assert!(err.contains("is not a remote task id"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_naming_another_branch_never_moves_the_callers_branches() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(cluster) = Cluster::start(&model) else {
        return;
    };
    let project = Project::new(&[("README.md", "# app\n")]);
    project.git(&["branch", "release"]);
    let before = project.git(&["rev-parse", "release"]);
    let remote = cluster.remote().await;
    let task_id = names::new_task_id();
    let forged = TaskRecord {
        task_id: task_id.clone(),
        kind: JobKind::Agent,
        description: "forged".into(),
        state: TaskState::Completed,
        worker: Some("evil".into()),
        attempt: 1,
        plan: None,
        result: Some("done".into()),
        branch: Some(ResultBranch {
            object: names::result_object(&task_id),
            branch: "release".into(),
            commit: "0".repeat(40),
            base: "0".repeat(40),
        }),
        usage: Default::default(),
        events: 0,
        queued_ms: now_ms(),
        started_ms: None,
        ended_ms: None,
        updated_ms: now_ms(),
        origin: String::new(),
    };
    remote
        .broker()
        .tasks
        .put(&task_id, serde_json::to_vec(&forged).unwrap().into())
        .await
        .unwrap();
    let err = remote
        .fetch_branch(&task_id, &project.repo)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not fetched"), "{err}");
    assert_eq!(project.git(&["rev-parse", "release"]), before);
}
