//! Remote agents tried the way an attacker would: whoever can publish on the broker can
//! queue jobs and write records, so what comes off the bus is checked before it names a
//! folder, a subject or a branch, and a job runs only when a key the worker trusts signed it
//! and its mode is within the worker's maximum.
#![allow(clippy::unwrap_used)]

use crate::cluster;
use crate::common;

use cluster::{job, wait_record, Cluster};
use common::{server, Project};
use fleet_remote::record::ResultBranch;
use fleet_remote::signing::{SignedJob, UserKey};
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
        // Signed by a trusted key: the id check stands on its own.
        let payload = fleet_remote::signing::sign(&bad, &cluster::caller_key()).unwrap();
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

/// Records `job` as queued, as a submitter does before publishing.
async fn queue_record(remote: &fleet_remote::Remote, job: &fleet_remote::Job) {
    let record = serde_json::to_vec(&TaskRecord::queued(job)).unwrap();
    remote
        .broker()
        .tasks
        .put(&job.task_id, record.into())
        .await
        .unwrap();
}

/// Publishes `payload` on the jobs subject as it is.
async fn publish_raw(remote: &fleet_remote::Remote, payload: Vec<u8>) {
    remote
        .broker()
        .js
        .publish(names::JOBS_SUBJECT, payload.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

/// Whether any request the model got holds `marker`.
fn model_saw(model: &fleet_testkit::FakeModelServer, marker: &str) -> bool {
    model
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains(marker))
}

/// The `ended` event of `task`'s last attempt.
async fn ended_event(remote: &fleet_remote::Remote, task: &str) -> serde_json::Value {
    let events = remote.logs(task).await.unwrap();
    events
        .into_iter()
        .map(|e| e.line)
        .rfind(|l| l["event"] == "ended")
        .unwrap_or_else(|| panic!("no ended event for {task}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unsigned_job_is_dropped_once_failed_with_the_reason_and_never_runs() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    let remote = cluster.remote().await;
    let mut unsigned = job("[case:unsigned] UNSIGNED-PROMPT");
    unsigned.permission_mode = "bypassPermissions".into();
    queue_record(&remote, &unsigned).await;
    publish_raw(&remote, serde_json::to_vec(&unsigned).unwrap()).await;
    let record = wait_record(&remote, &unsigned.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Failed, "{}", cluster.logs());
    let reason = record.result.unwrap_or_default();
    assert!(reason.contains("not signed"), "{reason}");
    assert_eq!(
        ended_event(&remote, &unsigned.task_id).await["result"],
        reason
    );
    // The worker goes on, and the dropped job is not offered again.
    let good = remote.submit(job("after the unsigned one")).await.unwrap();
    let done = wait_record(&remote, &good.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(done.state, TaskState::Completed, "{}", cluster.logs());
    let log = cluster.workers[0].log();
    let line = format!("dropped job {}: the job is not signed", unsigned.task_id);
    assert_eq!(log.matches(&line).count(), 1, "{log}");
    assert!(!model_saw(&model, "UNSIGNED-PROMPT"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_signed_by_an_unknown_key_or_changed_after_signing_is_dropped() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    // A stranger with a key of their own submits the ordinary way.
    let stranger_key = std::sync::Arc::new(UserKey::generate("stranger"));
    let stranger = fleet_remote::Remote::connect(&cluster.url())
        .await
        .unwrap()
        .with_signer(stranger_key.clone());
    let theirs = stranger
        .submit(job("[case:stranger] STRANGER-PROMPT"))
        .await
        .unwrap();
    let record = wait_record(&stranger, &theirs.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Failed, "{}", cluster.logs());
    let reason = record.result.unwrap_or_default();
    let stranger_pub = stranger_key.public_key().to_string();
    assert!(reason.contains("does not trust"), "{reason}");
    assert!(reason.contains(&stranger_pub), "{reason}");
    assert!(
        reason.contains("trustedKeys"),
        "says how to fix it: {reason}"
    );

    // A job the trusted caller signed, its mode widened on the way.
    let remote = cluster.remote().await;
    let original = job("[case:tampered] TAMPERED-PROMPT");
    queue_record(&remote, &original).await;
    let signed = fleet_remote::signing::sign(&original, &cluster::caller_key()).unwrap();
    let mut envelope: SignedJob = serde_json::from_slice(&signed).unwrap();
    envelope.job = envelope.job.replace("\"default\"", "\"bypassPermissions\"");
    publish_raw(&remote, serde_json::to_vec(&envelope).unwrap()).await;
    let record = wait_record(&remote, &original.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Failed, "{}", cluster.logs());
    let reason = record.result.unwrap_or_default();
    assert!(reason.contains("signature does not match"), "{reason}");

    let log = cluster.workers[0].log();
    assert!(
        log.contains(&format!(
            "dropped job {}: signed by {stranger_pub}",
            theirs.task_id
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!("dropped job {}: its signature", original.task_id)),
        "{log}"
    );
    assert!(!model_saw(&model, "STRANGER-PROMPT"));
    assert!(!model_saw(&model, "TAMPERED-PROMPT"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bypass_job_is_refused_by_a_worker_with_the_default_maximum() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    let remote = cluster.remote().await;
    let mut wide = job("[case:wide] WIDE-PROMPT");
    wide.permission_mode = "bypassPermissions".into();
    let submitted = remote.submit(wide.clone()).await.unwrap();
    let record = wait_record(&remote, &submitted.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Failed, "{}", cluster.logs());
    let reason = record.result.unwrap_or_default();
    for part in [
        "bypassPermissions",
        "maximum acceptEdits",
        "fleet worker --max-mode",
    ] {
        assert!(reason.contains(part), "{part} in {reason}");
    }
    assert_eq!(
        ended_event(&remote, &submitted.task_id).await["result"],
        reason
    );
    let log = cluster.workers[0].log();
    assert!(
        log.contains(&format!(
            "{} failed: refused by the worker",
            submitted.task_id
        )),
        "{log}"
    );
    assert!(!model_saw(&model, "WIDE-PROMPT"));

    // A job within the maximum runs on the same worker.
    let fine = remote.submit(job("acceptable")).await.unwrap();
    let done = wait_record(&remote, &fine.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(done.state, TaskState::Completed, "{}", cluster.logs());

    // A worker whose operator allows bypassPermissions runs the wide one.
    cluster.kill_worker(0);
    let extra = ["--max-mode".to_string(), "bypassPermissions".to_string()];
    cluster.add_worker_with(1, &extra, true).await;
    wide.task_id = names::new_task_id();
    let again = remote.submit(wide).await.unwrap();
    let done = wait_record(&remote, &again.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(done.state, TaskState::Completed, "{}", cluster.logs());
    assert!(model_saw(&model, "WIDE-PROMPT"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_with_no_trusted_keys_runs_only_its_own_users_jobs() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    let index = cluster.add_worker_with(1, &[], false).await;
    let home = cluster.workers[index].home.join("fleet-home");
    let log = cluster.workers[index].log();
    assert!(log.contains("no remote.trustedKeys configured"), "{log}");
    // `fleet remote key` in the worker user's home prints the key it trusts.
    let out = fleet_testkit::output_within(
        std::process::Command::new(env!("CARGO_BIN_EXE_fleet"))
            .args(["remote", "key"])
            .env("FLEET_HOME", &home)
            .env("HOME", cluster.workers[index].home.as_path()),
        fleet_testkit::WAIT,
        "fleet remote key",
    );
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let own = UserKey::load_or_create(&home).unwrap();
    assert_eq!(printed, own.public_key().to_string());
    assert!(printed.starts_with("ed25519:"), "{printed}");
    assert!(log.contains(&printed), "{log}");

    let mine = fleet_remote::Remote::connect(&cluster.url())
        .await
        .unwrap()
        .with_signer(own);
    let ok = mine.submit(job("own user's job")).await.unwrap();
    let done = wait_record(&mine, &ok.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(done.state, TaskState::Completed, "{}", cluster.logs());
    // The test's own key is a stranger's to this worker.
    let other = cluster.remote().await.submit(job("other")).await.unwrap();
    let refused = wait_record(&mine, &other.task_id, |r| r.state.is_terminal()).await;
    assert_eq!(refused.state, TaskState::Failed, "{}", cluster.logs());
    assert!(refused
        .result
        .unwrap_or_default()
        .contains("does not trust"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_control_not_signed_by_a_trusted_key_is_ignored_and_logged() {
    let model = server(Scenario::with_rules([
        Rule::tool_use(
            "Bash",
            serde_json::json!({"command": "sleep 7.25", "description": "wait"}),
        )
        .when_marker("[case:ctl]")
        .when_tool_result(false),
        Rule::text("slept").when_marker("[case:ctl]"),
    ]))
    .await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    let remote = cluster.remote().await;
    let mut sleeper = job("[case:ctl] sleep a while");
    sleeper.allowed_tools = vec!["Bash(sleep *)".into()];
    let submitted = remote.submit(sleeper).await.unwrap();
    let task = submitted.task_id.clone();
    // A stop nobody signed, and one a stranger signed for this very task.
    let subject = names::control_subject(&task);
    let unsigned = serde_json::to_vec(&fleet_remote::Control::Stop).unwrap();
    let stranger = UserKey::generate("stranger");
    let theirs =
        fleet_remote::signing::sign_control(&task, &fleet_remote::Control::Stop, &stranger)
            .unwrap();
    for payload in [unsigned, theirs] {
        remote
            .broker()
            .js
            .publish(subject.clone(), payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let ignored = format!("{task}: ignored a control");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while cluster.workers[0].log().matches(&ignored).count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", cluster.logs());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let log = cluster.workers[0].log();
    assert!(log.contains("the control is not signed"), "{log}");
    assert!(log.contains("does not trust"), "{log}");
    let record = remote.record(&task).await.unwrap().unwrap();
    assert_eq!(record.state, TaskState::Running, "{record:?}");
    // The submitter's own stop is obeyed.
    remote
        .send(&task, fleet_remote::Control::Stop)
        .await
        .unwrap();
    let record = wait_record(&remote, &task, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Killed, "{}", cluster.logs());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_plan_on_a_default_worker_still_cannot_run_unasked_commands() {
    let model = server(Scenario::queue([
        Rule::tool_use(
            "ExitPlanMode",
            serde_json::json!({"plan": "Plan: write a file"}),
        )
        .when_tool_result(false)
        .once(),
        Rule::tool_use(
            "Bash",
            serde_json::json!({"command": "echo executed > plan.txt", "description": "x"}),
        )
        .when_tool_result(true)
        .once(),
        Rule::text("PLAN-DONE").when_tool_result(true),
    ]))
    .await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(1, &[]).await;
    let remote = cluster.remote().await;
    let mut plan = job("[case:plan] plan the change");
    plan.kind = JobKind::Ultraplan;
    plan.permission_mode = "plan".into();
    let submitted = remote.submit(plan).await.unwrap();
    let task = submitted.task_id;
    wait_record(&remote, &task, |r| r.state == TaskState::PlanReady).await;
    remote
        .send(&task, fleet_remote::Control::Approve)
        .await
        .unwrap();
    let record = wait_record(&remote, &task, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Completed, "{}", cluster.logs());
    // The approval set acceptEdits, the worker's maximum: the Bash step reached the worker
    // as a question and was refused, where a bypassPermissions worker would have allowed it.
    let refused = model.requests().iter().any(|r| {
        r.body
            .to_string()
            .contains("No one can answer permission questions")
    });
    assert!(refused, "{:#?}", model.requests().last().map(|r| &r.body));
}
