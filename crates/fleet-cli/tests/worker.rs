//! `fleet worker` end to end: real `fleet worker` processes on a real nats-server, each job
//! run by the real `fleet` binary against the fake model server. Jobs are published straight
//! on the bus (as the caller's side does), and records and events read back from it.
#![allow(clippy::unwrap_used)]

#[path = "worker/bus.rs"]
mod bus;
use crate::common;
#[path = "worker/repo_and_faults.rs"]
mod repo_and_faults;

use bus::{agent_job, pids_with_arg, Bus, Workers};
use common::server;
use fleet_remote::{Control, JobKind, TaskState};
use fleet_testkit::{NatsServer, Rule, Scenario};
use serde_json::json;
use std::collections::BTreeSet;

#[tokio::test]
async fn a_job_runs_to_completed_with_the_models_text_and_its_events_replay() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::queue([Rule::text("REMOTE-DONE")])).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let job = agent_job("[case:one] say done");
    bus.publish(&job).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(
        record.state,
        TaskState::Completed,
        "{record:?}\n{}",
        workers.logs()
    );
    assert_eq!(record.result.as_deref(), Some("REMOTE-DONE"));
    assert_eq!(record.attempt, 1);
    assert_eq!(record.worker.as_deref(), Some(workers.id(0).as_str()));
    assert!(record.usage.total_tokens > 0, "{record:?}");

    let events = bus.events(&job.task_id).await;
    let kinds: Vec<String> = events
        .iter()
        .map(|(_, line)| match line["type"].as_str().unwrap() {
            "fleet_remote" => format!("fleet_remote:{}", line["event"].as_str().unwrap()),
            other => other.to_string(),
        })
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("fleet_remote:started")
    );
    assert_eq!(kinds.last().map(String::as_str), Some("fleet_remote:ended"));
    assert!(kinds.iter().any(|k| k == "assistant"), "{kinds:?}");
    let result = events.iter().find(|(_, l)| l["type"] == "result").unwrap();
    assert_eq!(result.1["result"], "REMOTE-DONE");
    let ended = &events.last().unwrap().1;
    assert_eq!(ended["state"], "completed");
    assert_eq!(ended["result"], "REMOTE-DONE");
    assert!(events.iter().all(|(attempt, _)| *attempt == 1));
    // The record counts every event of the attempt.
    assert_eq!(record.events, events.len() as u64);
}

#[tokio::test]
async fn two_one_slot_workers_share_six_jobs_each_run_once() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    // Each answer takes a moment, so a worker with its one slot busy leaves jobs to the other.
    let fake = server(Scenario::with_rules([Rule::text("ok").delay_ms(300)])).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    workers.start(1);
    bus.wait_workers(2).await;
    let jobs: Vec<_> = (0..6)
        .map(|i| agent_job(&format!("[case:share-{i}] hi")))
        .collect();
    for job in &jobs {
        bus.publish(job).await;
    }
    let mut ran_on = BTreeSet::new();
    for job in &jobs {
        let record = bus
            .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
            .await;
        assert_eq!(record.state, TaskState::Completed, "{record:?}");
        assert_eq!(record.attempt, 1, "{record:?}");
        ran_on.insert(record.worker.unwrap());
        let started = bus
            .events(&job.task_id)
            .await
            .iter()
            .filter(|(_, l)| l["event"] == "started")
            .count();
        assert_eq!(started, 1, "{} started more than once", job.task_id);
    }
    let both: BTreeSet<String> = [workers.id(0), workers.id(1)].into();
    assert_eq!(ran_on, both, "both workers ran some jobs");
}

/// A job whose agent runs `sleep <seconds>` through Bash, then answers `SURVIVED`.
fn sleeper(seconds: &str) -> Scenario {
    Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": format!("sleep {seconds}")}))
            .when_tool_result(false),
        Rule::text("SURVIVED").when_tool_result(true),
    ])
}

#[tokio::test]
async fn a_worker_killed_mid_job_loses_it_to_another_which_runs_it_again() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    // The first attempt sleeps far longer than the test waits for it to go: only dying
    // with its worker ends it in time. The second attempt sleeps briefly.
    let fake = server(Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": "sleep 1000.25"}))
            .when_call(1)
            .when_tool_result(false),
        Rule::tool_use("Bash", json!({"command": "sleep 7.25"})).when_tool_result(false),
        Rule::text("SURVIVED").when_tool_result(true),
    ]))
    .await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let mut job = agent_job("[case:kill] sleep a while");
    job.allowed_tools = vec!["Bash".into()];
    bus.publish(&job).await;
    bus.wait(&job.task_id, |r| r.state == TaskState::Running, &workers)
        .await;
    let first_attempt = bus.wait_for_pids("1000.25", &workers).await;
    workers.start(1);
    bus.wait_workers(2).await;
    workers.kill(0);
    // The dead worker's job dies with it (its fleet and that fleet's sleep): no orphan runs
    // on beside the attempt that replaces it.
    bus.wait_gone(&first_attempt).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Completed, "{record:?}");
    assert_eq!(record.result.as_deref(), Some("SURVIVED"));
    assert_eq!(record.attempt, 2);
    assert_eq!(record.worker.as_deref(), Some(workers.id(1).as_str()));
    let attempts: BTreeSet<u32> = bus.events(&job.task_id).await.iter().map(|e| e.0).collect();
    assert_eq!(attempts, [1, 2].into());
}

#[tokio::test]
async fn a_job_delivered_more_than_max_deliver_times_fails_saying_why() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(sleeper("7.5")).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let mut job = agent_job("[case:give-up] sleep a while");
    job.allowed_tools = vec!["Bash".into()];
    job.max_deliver = 1;
    bus.publish(&job).await;
    bus.wait_for_pids("7.5", &workers).await;
    workers.start(1);
    bus.wait_workers(2).await;
    workers.kill(0);
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Failed, "{record:?}");
    let reason = record.result.unwrap();
    assert!(reason.contains("delivered 2 times"), "{reason}");
    assert!(reason.contains("max_deliver of 1"), "{reason}");
    assert!(reason.contains("stopped heartbeating"), "{reason}");
    assert!(reason.contains(&workers.id(0)), "{reason}");
}

#[tokio::test]
async fn stop_kills_the_jobs_sleep_and_records_it_killed() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(sleeper("6.75")).await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    workers.start(1);
    let mut job = agent_job("[case:stop] sleep a while");
    job.allowed_tools = vec!["Bash".into()];
    bus.publish(&job).await;
    let sleeps = bus.wait_for_pids("6.75", &workers).await;
    bus.control(&job.task_id, &Control::Stop).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Killed, "{record:?}");
    bus.wait_gone(&sleeps).await;
    assert!(pids_with_arg("6.75").is_empty());
    // The worker goes on.
    assert!(workers.alive(0), "{}", workers.logs());
}

#[tokio::test]
async fn an_ultraplan_job_revises_on_feedback_then_executes_when_approved() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let fake = server(Scenario::queue([
        Rule::tool_use("ExitPlanMode", json!({"plan": "Plan A: edit many files"}))
            .when_tool_result(false)
            .once(),
        Rule::tool_use("ExitPlanMode", json!({"plan": "Plan B: one file"}))
            .when_tool_result_contains("use one file")
            .once(),
        Rule::tool_use("Bash", json!({"command": "echo executed > plan.txt"}))
            .when_tool_result(true)
            .once(),
        Rule::text("PLAN-DONE").when_tool_result(true),
    ]))
    .await;
    let bus = Bus::connect(&nats).await;
    let mut workers = Workers::new(&nats, &fake);
    // The approved plan's Bash step runs unasked only where the operator allows
    // bypassPermissions (under the default maximum it would be denied).
    workers.start_with_args(1, &[], &["--max-mode", "bypassPermissions"]);
    let scratch = tempfile::tempdir().unwrap();
    let mut job = agent_job("[case:plan] plan the change");
    job.kind = JobKind::Ultraplan;
    job.permission_mode = "plan".into();
    job.repo = Some(repo_and_faults::upload_snapshot(&bus, workers.repo(), scratch.path()).await);
    bus.publish(&job).await;
    let ready = |r: &fleet_remote::TaskRecord| r.state == TaskState::PlanReady;
    let record = bus.wait(&job.task_id, ready, &workers).await;
    assert_eq!(record.plan.as_deref(), Some("Plan A: edit many files"));
    bus.control(
        &job.task_id,
        &Control::Reject {
            feedback: "use one file".into(),
        },
    )
    .await;
    let record = bus
        .wait(
            &job.task_id,
            |r| r.state == TaskState::PlanReady && r.plan.as_deref() == Some("Plan B: one file"),
            &workers,
        )
        .await;
    assert_eq!(record.attempt, 1);
    bus.control(&job.task_id, &Control::Approve).await;
    let record = bus
        .wait(&job.task_id, |r| r.state.is_terminal(), &workers)
        .await;
    assert_eq!(record.state, TaskState::Completed, "{record:?}");
    assert_eq!(record.result.as_deref(), Some("PLAN-DONE"));
    let branch = record.branch.expect("the executed plan's branch");
    let text = repo_and_faults::fetched_file(&bus, workers.repo(), &branch, "plan.txt").await;
    assert_eq!(text, "executed");
    let plans = bus
        .events(&job.task_id)
        .await
        .iter()
        .filter(|(_, l)| l["event"] == "plan_ready")
        .count();
    assert_eq!(plans, 2);
}
