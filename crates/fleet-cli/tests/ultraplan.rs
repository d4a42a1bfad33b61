//! Ultraplan end to end: a real nats-server, a real `fleet worker` process, the fake model
//! scripted as the remote planning session, and `fleet ultraplan` as a person runs it.
//!
//! - a round trip: plan A, a rejection with feedback (which the model's next request
//!   carries), plan B, approval, the remote writes a file, and its branch arrives here;
//! - a teleport: the plan comes back, the remote session is archived, and the plan runs here
//!   as a local `fleet -p` session against the fake model.

use crate::common;

use common::{stderr, stdout, Project};
use fleet_remote::{Remote, TaskState};
use fleet_testkit::{FakeModelServer, NatsServer, Rule, Scenario};
use serde_json::json;
use std::process::{Child, Command, Output, Stdio};

/// Short poll intervals, so following a session takes fractions of a second.
const QUICK: &[(&str, &str)] = &[
    ("FLEET_ULTRAPLAN_POLL_MS", "100"),
    ("FLEET_ULTRAPLAN_TIMEOUT_MS", "120000"),
];

/// A `fleet worker` that is killed when the test ends, however it ends.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(project: &Project, server: &FakeModelServer, url: &str) -> Worker {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    // An approved plan runs every step it asks for only on a worker whose operator allows
    // bypassPermissions (the default maximum, acceptEdits, would deny its Bash step).
    cmd.args(["worker", "--nats", url, "--slots", "2"])
        .args(["--max-mode", "bypassPermissions"]);
    project.environment(&mut cmd, server);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    Worker(cmd.spawn().expect("fleet worker starts"))
}

async fn ultraplan(
    project: &Project,
    server: &FakeModelServer,
    url: &str,
    args: &[&str],
) -> Output {
    let mut all = vec!["ultraplan", "--nats", url];
    all.extend_from_slice(args);
    project.run_with_env(server, &all, QUICK).await
}

/// The task id in `ultraplan r…: launched`.
fn task_id(out: &str) -> String {
    let at = out.find("ultraplan r").expect("a task id") + "ultraplan ".len();
    out[at..]
        .split(':')
        .next()
        .expect("id before the colon")
        .to_string()
}

fn exit_plan(plan: &str) -> Rule {
    Rule::tool_use("ExitPlanMode", json!({ "plan": plan }))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_with_feedback_a_revision_then_approval_brings_the_branch_home() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let url = nats.url();
    let case = "[case:ultraplan-roundtrip]";
    let scenario = Scenario::new().rules([
        exit_plan("# PLAN-A\n1. write greeting.txt").when_marker(case).when_tool_result(false),
        exit_plan("# PLAN-B\n1. write greeting.txt in English and French")
            .when_marker(case)
            .when_tool_result_contains("FEEDBACK-XYZ")
            .times(1),
        Rule::tool_use(
            "Bash",
            json!({ "command": "printf 'hello\\nbonjour\\n' > greeting.txt", "description": "write it" }),
        )
        .when_marker(case)
        .when_tool_result(true)
        .times(1),
        Rule::text("Wrote greeting.txt.").when_marker(case).when_tool_result(true),
    ]);
    let server = common::server(scenario).await;
    let project = Project::new(&[("README.md", "# app\n")]);
    let _worker = worker(&project, &server, &url);

    let prompt = format!("{case} ultraplan a greeting file");
    let launched = ultraplan(&project, &server, &url, &[&prompt]).await;
    let text = stdout(&launched);
    assert!(launched.status.success(), "{text}\n{}", stderr(&launched));
    let id = task_id(&text);
    assert!(
        text.contains(&format!("ultraplan {id}: plan_ready")),
        "{text}"
    );
    assert!(text.contains("# PLAN-A"), "{text}");
    assert!(
        text.contains(&format!("fleet ultraplan approve {id}")),
        "{text}"
    );
    let first = &server.requests()[0].body;
    assert!(
        first["model"].as_str().unwrap_or("").contains("opus"),
        "{first}"
    );
    assert!(first.to_string().contains("Explore subagents in parallel"));

    let rejected = ultraplan(
        &project,
        &server,
        &url,
        &["reject", &id, "--feedback", "FEEDBACK-XYZ: add French"],
    )
    .await;
    let text = stdout(&rejected);
    assert!(rejected.status.success(), "{text}\n{}", stderr(&rejected));
    assert!(text.contains("# PLAN-B"), "{text}");
    assert!(!text.contains("# PLAN-A"), "{text}");
    let revised = server
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("FEEDBACK-XYZ"));
    assert!(revised, "the feedback reached the remote session's model");

    let approved = ultraplan(&project, &server, &url, &["approve", &id]).await;
    let text = stdout(&approved);
    assert!(approved.status.success(), "{text}\n{}", stderr(&approved));
    assert!(
        text.contains(&format!("ultraplan {id}: completed")),
        "{text}"
    );
    let branch = fleet_remote::names::result_branch(&id);
    assert!(text.contains(&format!("branch: {branch}")), "{text}");
    let greeting = project.git(&["show", &format!("{branch}:greeting.txt")]);
    assert_eq!(greeting, "hello\nbonjour\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_teleported_plan_comes_back_and_runs_here() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let url = nats.url();
    let case = "[case:ultraplan-teleport]";
    let scenario = Scenario::new().rules([
        Rule::text("Ran PLAN-T here.").when_last_user_contains("PLAN-T-STEPS"),
        exit_plan("# PLAN-T\nPLAN-T-STEPS: 1. nothing to change")
            .when_marker(case)
            .when_tool_result(false),
    ]);
    let server = common::server(scenario).await;
    let project = Project::new(&[("README.md", "# app\n")]);
    let _worker = worker(&project, &server, &url);

    let prompt = format!("{case} ultraplan nothing much");
    let launched = ultraplan(&project, &server, &url, &[&prompt]).await;
    let text = stdout(&launched);
    assert!(launched.status.success(), "{text}\n{}", stderr(&launched));
    let id = task_id(&text);
    assert!(text.contains("# PLAN-T"), "{text}");

    let teleported = ultraplan(&project, &server, &url, &["teleport", &id]).await;
    let text = stdout(&teleported);
    assert!(
        teleported.status.success(),
        "{text}\n{}",
        stderr(&teleported)
    );
    assert!(
        text.contains("Ran PLAN-T here."),
        "the local session's answer: {text}"
    );
    let local = server
        .last_request()
        .expect("the local session asked the model")
        .body
        .to_string();
    assert!(
        local.contains("<plan>") && local.contains("PLAN-T-STEPS"),
        "{local}"
    );

    let remote = Remote::connect(&url).await.expect("connect");
    let record = remote.record(&id).await.expect("read").expect("the record");
    assert_eq!(record.state, TaskState::Archived);
}
