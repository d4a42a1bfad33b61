//! `fleet -p … --dashboard`: the URL on stderr, a fan-out's agents arriving over server-sent
//! events, a background task stopped through the API, a permission question answered on the
//! page — the real binary, real HTTP on loopback, the fake model server.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::dashboard_common;

use common::{server, Project};
use dashboard_common::{
    client, connect, first_event, follow, origin_of, user, user_line, Run, CHILD,
};
use fleet_dashboard::api::{
    ActionResult, AgentKind, AgentState, PermissionRequest, Snapshot, TranscriptEntry,
    TranscriptPage,
};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

fn fan_out() -> Scenario {
    let mut rules: Vec<Rule> = (0..3)
        .map(|n| {
            Rule::text(format!("subtask {n} done"))
                .when_system_contains(CHILD)
                .when_last_user_contains(format!("SUBTASK-{n}"))
        })
        .collect();
    let call = |n: u32| {
        json!({"description": format!("subtask {n}"), "prompt": format!("Do SUBTASK-{n} now"),
               "subagent_type": "general-purpose", "run_in_background": false})
    };
    rules.push(Rule::text("all subtasks finished").when_tool_result(true));
    rules.push(
        Rule::tool_use("Agent", call(0))
            .then_tool_use("Agent", call(1))
            .then_tool_use("Agent", call(2))
            .when_last_user_contains("fan out"),
    );
    rules.push(Rule::text("ready"));
    Scenario::with_rules(rules)
}

#[tokio::test]
async fn a_sessions_stream_delivers_the_agents_of_its_fan_out() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(fan_out()).await;
    let id = "5a1e5a1e-0000-4000-8000-000000000001";
    // stream-json input keeps the session open until stdin closes: the page can follow it.
    // (The first message comes before the URL: the run reads its input before it starts.)
    let mut run = Run::start_with(
        &project,
        &server,
        &[
            "-p",
            "--dashboard",
            "--session-id",
            id,
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        &user_line("hello"),
    )
    .await;
    assert!(run.url.starts_with("http://127.0.0.1:"), "{}", run.url);
    let events = connect(&run.api(&format!("/api/sessions/{id}/events"))).await;
    // Only now the work starts: the page sees it happen, batch by batch.
    user(&mut run, "fan out").await;
    let tree = follow(events, |tree| {
        let done = tree
            .agents
            .values()
            .filter(|a| a.kind != AgentKind::Main && a.state == AgentState::Done)
            .count();
        done == 3 && tree.agents.contains_key("main")
    })
    .await;
    let mut described: Vec<_> = tree
        .agents
        .values()
        .filter_map(|a| a.description.clone())
        .collect();
    described.sort();
    assert_eq!(described, ["subtask 0", "subtask 1", "subtask 2"]);
    for agent in tree.agents.values().filter(|a| a.id != "main") {
        assert_eq!(agent.parent_id.as_deref(), Some("main"), "{agent:?}");
    }
    assert!(
        tree.batches > 0,
        "the agents came in batches, not only the snapshot"
    );
    // A subagent's conversation, as the transcript panel reads it: a page, then a stream.
    let child = tree
        .agents
        .values()
        .find(|a| a.description.as_deref() == Some("subtask 1"))
        .unwrap();
    let path = format!("/api/sessions/{id}/agents/{}/transcript", child.id);
    let page: TranscriptPage = client()
        .get(run.api(&path))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let said = |page: &TranscriptPage| {
        page.entries
            .iter()
            .filter_map(|e| match e {
                TranscriptEntry::User { text, .. } | TranscriptEntry::Assistant { text, .. } => {
                    Some(text.clone())
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let words = said(&page).join("\n");
    assert!(words.contains("Do SUBTASK-1 now"), "{page:?}");
    assert!(words.contains("subtask 1 done"), "{page:?}");
    let streamed = connect(&run.api(&format!("{path}/events"))).await;
    let first = first_event(streamed, "entries").await;
    let first: TranscriptPage = serde_json::from_str(&first).unwrap();
    assert_eq!(said(&first), said(&page));
    let missing = client()
        .get(run.api(&format!("/api/sessions/{id}/agents/nobody/transcript")))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let (status, out) = run.finish().await;
    assert!(status.success(), "{out}");
    assert!(out.contains("all subtasks finished"), "{out}");
}

fn slow_background() -> Scenario {
    let job = |n: u32| {
        json!({"description": format!("slow job {n}"), "prompt": format!("Do slow job {n}"),
               "subagent_type": "general-purpose", "run_in_background": true})
    };
    Scenario::with_rules([
        // The background agents would answer in ten minutes: only a stop ends them in time.
        Rule::text("CHILD-NEVER")
            .when_system_contains(CHILD)
            .delay_ms(600_000),
        Rule::text("MAIN-SAW-NOTIFICATION").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use("Agent", job(0))
            .then_tool_use("Agent", job(1))
            .when_tool_result(false),
    ])
}

/// POSTs a stop of `task` to `run`'s page.
async fn stop(run: &Run, id: &str, task: &str) -> reqwest::Response {
    client()
        .post(run.api(&format!("/api/sessions/{id}/tasks/{task}/stop")))
        .header("Origin", origin_of(&run.url))
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_background_task_is_stopped_through_the_api() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(slow_background()).await;
    let id = "5a1e5a1e-0000-4000-8000-000000000002";
    let run = Run::start(
        &project,
        &server,
        &[
            "-p",
            "start the slow jobs",
            "--dashboard",
            "--session-id",
            id,
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    let events = connect(&run.api(&format!("/api/sessions/{id}/events"))).await;
    let running = |tree: &dashboard_common::Tree| -> Vec<String> {
        let mut tasks: Vec<String> = tree
            .agents
            .values()
            .filter(|a| a.ended_ms.is_none())
            .filter_map(|a| a.task_id.clone())
            .collect();
        tasks.sort();
        tasks
    };
    let tree = follow(events, |tree| running(tree).len() == 2).await;
    let tasks = running(&tree);
    let snapshot: Snapshot = client()
        .get(run.api(&format!("/api/sessions/{id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(snapshot.actions.stop_task, "{:?}", snapshot.actions);
    let first = stop(&run, id, &tasks[0]).await;
    assert_eq!(first.status(), 200);
    let stopped: ActionResult = first.json().await.unwrap();
    assert!(stopped.ok, "{stopped:?}");
    // Stopped twice: it is not running any more (the other one keeps the session going).
    let again = stop(&run, id, &tasks[0]).await;
    assert_eq!(again.status(), 409, "{:?}", again.text().await);
    let unknown = stop(&run, id, "no-such-task").await;
    assert_eq!(unknown.status(), 404, "{:?}", unknown.text().await);
    assert_eq!(stop(&run, id, &tasks[1]).await.status(), 200);
    // The session sees its tasks stopped and ends (it no longer waits ten minutes).
    let (status, out) = run.finish().await;
    assert!(status.success(), "{out}");
    let stopped: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["subtype"] == "task_notification")
        .collect();
    assert_eq!(stopped.len(), 2, "{out}");
    for notification in stopped {
        assert_eq!(notification["status"], "stopped", "{notification}");
    }
    assert!(out.contains("MAIN-SAW-NOTIFICATION"), "{out}");
}

fn asks_to_write(path: &str) -> Scenario {
    Scenario::with_rules([
        Rule::text("AFTER-WRITE").when_tool_result(true),
        Rule::tool_use(
            "Write",
            json!({"file_path": path, "content": "from the page\n"}),
        )
        .when_tool_result(false),
    ])
}

/// `fleet -p "write the file" --dashboard` asking to write `new.txt`: the run, and the question
/// as the page sees it.
async fn asking_run(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
    id: &str,
) -> (Run, PermissionRequest) {
    let run = Run::start(
        project,
        server,
        &[
            "-p",
            "write the file",
            "--dashboard",
            "--session-id",
            id,
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    let events = connect(&run.api(&format!("/api/sessions/{id}/events"))).await;
    let tree = tokio::spawn(follow(events, |tree| !tree.pending.is_empty())).await;
    let Ok(tree) = tree else {
        let (_, out) = run.finish().await;
        panic!("no question on the page; the run said: {out}");
    };
    let question = tree.pending[0].clone();
    assert_eq!(question.tool, "Write");
    assert!(question.summary.contains("new.txt"), "{question:?}");
    (run, question)
}

/// Answers question `request` of session `id` on `run`'s page.
async fn answer(run: &Run, id: &str, request: &str, body: Value) -> reqwest::Response {
    client()
        .post(run.api(&format!("/api/sessions/{id}/permissions/{request}")))
        .header("Origin", origin_of(&run.url))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_permission_question_is_answered_on_the_page() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let target = project.path("new.txt");
    let server = server(asks_to_write(&target)).await;
    let id = "5a1e5a1e-0000-4000-8000-000000000003";
    let (run, question) = asking_run(&project, &server, id).await;
    assert!(
        !std::path::Path::new(&target).exists(),
        "nothing written before the answer"
    );
    let allow = json!({"decision": "allow", "message": null});
    let unknown = answer(&run, id, "no-such-question", allow.clone()).await;
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        answer(&run, id, &question.id, allow.clone()).await.status(),
        200
    );
    // Answered once: a second answer finds nothing waiting.
    assert_eq!(answer(&run, id, &question.id, allow).await.status(), 404);
    let (status, out) = run.finish().await;
    assert!(status.success(), "{out}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "from the page\n");
    assert!(out.contains("AFTER-WRITE"), "{out}");
    assert!(out.contains("\"permission_denials\":[]"), "{out}");
}

#[tokio::test]
async fn a_refusal_on_the_page_reaches_the_model_with_its_reason() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let target = project.path("new.txt");
    let server = server(asks_to_write(&target)).await;
    let id = "5a1e5a1e-0000-4000-8000-000000000004";
    let (run, question) = asking_run(&project, &server, id).await;
    let deny = json!({"decision": "deny", "message": "write it under docs/ instead"});
    assert_eq!(answer(&run, id, &question.id, deny).await.status(), 200);
    let (status, out) = run.finish().await;
    assert!(status.success(), "{out}");
    assert!(!std::path::Path::new(&target).exists(), "{out}");
    assert!(
        out.contains("write it under docs/ instead"),
        "the model reads why: {out}"
    );
    assert!(
        !out.contains("\"permission_denials\":[]"),
        "the refusal is counted: {out}"
    );
}
