//! Jobs with a repository (its bundle checked out, the changes coming back as a branch, a
//! bundle that is missing), labels, and a worker told to stop mid-job.

use crate::common::server;
use crate::worker::bus::{agent_job, Bus, Workers};
use fleet_remote::record::ResultBranch;
use fleet_remote::{bundle, names, RepoRef, TaskState};
use fleet_testkit::{NatsServer, Rule, Scenario};
use serde_json::json;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@fleet.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Bundles `repo` (HEAD plus uncommitted files) and stores it as the caller's side does.
pub async fn upload_snapshot(bus: &Bus, repo: &Path, scratch: &Path) -> RepoRef {
    let snap = bundle::snapshot(repo, scratch).await.unwrap().unwrap();
    let object = names::repo_object(&snap.snapshot);
    let mut file = tokio::fs::File::open(&snap.bundle).await.unwrap();
    bus.broker
        .bundles
        .put(object.as_str(), &mut file)
        .await
        .unwrap();
    RepoRef {
        object,
        head: snap.head,
        snapshot: snap.snapshot,
        branch: snap.branch,
        subdir: snap.subdir,
    }
}

/// Fetches the result `branch` into `repo` and reads `file` on it.
pub async fn fetched_file(bus: &Bus, repo: &Path, branch: &ResultBranch, file: &str) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let mut object = bus.broker.bundles.get(&branch.object).await.unwrap();
    let path = scratch.path().join("result.bundle");
    let mut out = tokio::fs::File::create(&path).await.unwrap();
    tokio::io::copy(&mut object, &mut out).await.unwrap();
    drop(out);
    bundle::fetch_into(repo, &path, &branch.branch)
        .await
        .unwrap();
    git(repo, &["show", &format!("{}:{file}", branch.branch)])
}

#[tokio::test]
async fn a_job_edits_its_checkout_and_the_change_comes_back_as_a_branch() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::with_rules([
        // Write wants an absolute path, which the test cannot know: the shell writes it.
        Rule::tool_use(
            "Bash",
            json!({"command": "echo 'made on a worker' > remote.txt"}),
        )
        .when_tool_result(false),
        Rule::text("WROTE-IT").when_tool_result(true),
    ]))
    .await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    // The caller's uncommitted file travels in the snapshot.
    let repo = workers.repo().to_path_buf();
    std::fs::write(repo.join("draft.txt"), "not committed\n").unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut job = agent_job("[case:edit] write remote.txt");
    job.allowed_tools = vec!["Bash".into()];
    job.repo = Some(upload_snapshot(&bus, &repo, scratch.path()).await);
    let snapshot = job.repo.as_ref().unwrap().snapshot.clone();
    bus.publish(&job).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(
        record.state,
        TaskState::Completed,
        "{record:#?}\n{}",
        workers.logs()
    );
    assert_eq!(record.result.as_deref(), Some("WROTE-IT"));
    let Some(branch) = record.branch else {
        panic!(
            "no result branch; events: {:#?}",
            bus.events(&job.task_id).await
        );
    };
    assert_eq!(branch.branch, names::result_branch(&job.task_id));
    assert_eq!(branch.base, snapshot);
    // The branch arrives in the caller's repository with the worker's file on the snapshot.
    assert_eq!(
        fetched_file(&bus, &repo, &branch, "remote.txt").await,
        "made on a worker"
    );
    let draft = format!("{}:draft.txt", branch.branch);
    assert_eq!(git(&repo, &["show", &draft]), "not committed");
    assert_eq!(git(&repo, &["rev-parse", &branch.branch]), branch.commit);
}

#[tokio::test]
async fn a_job_whose_repository_bundle_is_missing_fails_naming_it() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::with_rules([Rule::text("never")])).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let mut job = agent_job("[case:missing] hi");
    let snapshot = "0123456789abcdef0123456789abcdef01234567".to_string();
    job.repo = Some(RepoRef {
        object: names::repo_object(&snapshot),
        head: snapshot.clone(),
        snapshot: snapshot.clone(),
        branch: None,
        subdir: String::new(),
    });
    bus.publish(&job).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Failed, "{record:#?}");
    let reason = record.result.unwrap();
    let want = format!(
        "the repository bundle {} is not in the object store",
        names::repo_object(&snapshot)
    );
    assert!(reason.contains(&want), "{reason}");
    assert_eq!(fake.request_count(), 0, "no agent ran");
}

#[tokio::test]
async fn a_job_asking_for_a_label_runs_on_the_worker_that_has_it() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::with_rules([Rule::text("on the gpu")])).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(2);
    workers.start_with(1, &["gpu", "big"]);
    bus.wait_workers(2).await;
    let mut jobs = Vec::new();
    for i in 0..3 {
        let mut job = agent_job(&format!("[case:label-{i}] hi"));
        job.labels = vec!["gpu".into()];
        bus.publish(&job).await;
        jobs.push(job);
    }
    for job in &jobs {
        let record = bus
            .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
            .await;
        assert_eq!(record.state, TaskState::Completed, "{record:#?}");
        assert_eq!(record.worker.as_deref(), Some(workers.id(1).as_str()));
        // Refusals for a missing label are not attempts.
        assert_eq!(record.attempt, 1, "{record:#?}");
    }
    let labelled = bus
        .wait_workers(2)
        .await
        .into_iter()
        .find(|w| w.id == workers.id(1))
        .unwrap();
    assert_eq!(labelled.labels, ["gpu", "big"]);
}

#[tokio::test]
async fn a_worker_told_to_stop_gives_its_job_back_and_another_runs_it() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": "sleep 6.25"})).when_tool_result(false),
        Rule::text("FINISHED-ELSEWHERE").when_tool_result(true),
    ]))
    .await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let mut job = agent_job("[case:shutdown] sleep a while");
    job.allowed_tools = vec!["Bash".into()];
    bus.publish(&job).await;
    let sleeps = bus.wait_for_pids("6.25", &workers).await;
    let first = workers.id(0);
    let status = workers.terminate(0);
    assert!(status.success(), "{status:?}\n{}", workers.logs());
    // Its job's processes are gone, and so is its heartbeat.
    bus.wait_gone(&sleeps).await;
    assert!(bus.broker.workers.get(&first).await.unwrap().is_none());
    assert!(workers.logs().contains("given back to the queue"));
    workers.start(1);
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Completed, "{record:#?}");
    assert_eq!(record.result.as_deref(), Some("FINISHED-ELSEWHERE"));
    assert_eq!(record.worker.as_deref(), Some(workers.id(1).as_str()));
    assert_eq!(record.attempt, 2);
}
