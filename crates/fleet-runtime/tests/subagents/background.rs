//! Background subagents: notifications, independence from the parent, TaskStop, TaskOutput.

use super::harness::*;
use fleet_protocol::{EventKind, Message, TaskStatus};
use fleet_testkit::{FakeModelServer, Rule};
use fleet_tools::{Tool, ToolContext, Workspace};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_background_subagent_notifies_its_parent_which_answers() {
    let server = FakeModelServer::start(background_scenario(300, Rule::text("CHILD-RESULT-42")))
        .await
        .unwrap();
    let (events, spawner) = run_throwaway(&server, Setup::default(), "go").await;

    let launch = tool_results_of(&events, true).remove(0);
    let structured = launch.structured.unwrap();
    assert_eq!(structured["status"], "async_launched");
    let task_id = structured["agentId"].as_str().unwrap().to_string();
    assert!(structured["outputFile"]
        .as_str()
        .unwrap()
        .ends_with(&format!("agent-{task_id}.jsonl")));

    // The run that launched it ends first; a second run answers the notification.
    let results = main_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].result, "MAIN-WAITING");
    assert_eq!(results[1].result, "MAIN-SAW-NOTIFICATION");
    let origin = results[1].origin.clone().unwrap();
    assert_eq!(
        (origin.kind.as_str(), origin.task_ids),
        ("task-notification", vec![task_id.clone()])
    );

    // Task events in order: started, then completed with its notification, then no tasks left.
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskStarted(t) => {
                assert_eq!(t.task_id, task_id);
                assert!(t.is_backgrounded);
                Some("started")
            }
            EventKind::TaskUpdated { status, .. } => {
                assert_eq!(*status, TaskStatus::Completed);
                Some("updated")
            }
            EventKind::TaskNotified(n) => {
                assert_eq!(n.result, "CHILD-RESULT-42");
                assert_eq!(n.tool_use_id, launch.tool_use_id);
                Some("notified")
            }
            EventKind::BackgroundTasksChanged(list) => {
                Some(if list.is_empty() { "none" } else { "some" })
            }
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["some", "started", "updated", "notified", "none"]);

    // The parent's model read the notification, marked as not coming from the user.
    let last = server
        .requests()
        .into_iter()
        .rfind(|r| r.body.to_string().contains(PARENT))
        .unwrap();
    let body = last.body.to_string();
    assert!(body.contains("<status>completed</status>"));
    assert!(body.contains("CHILD-RESULT-42"));
    assert!(body.contains("not a message from the user"));

    let stats = spawner.ledger().stats();
    assert_eq!(
        (
            stats.spawned,
            stats.started_in_background,
            stats.requested.background,
            stats.completed
        ),
        (1, 1, 1, 1)
    );
}

#[tokio::test]
async fn interrupting_the_parent_does_not_stop_a_background_child() {
    let server = FakeModelServer::start(background_scenario(300, Rule::text("CHILD-RESULT-42")))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let Tree {
        spawner,
        mut agent,
        sink,
        mut events,
    } = tree(&server, dir.path(), home.path(), Setup::default());
    let cancel = tokio_util::sync::CancellationToken::new();
    let parent_cancel = cancel.clone();
    let parent = tokio::spawn(async move {
        agent
            .run(Message::user_text("go"), &sink, &parent_cancel)
            .await
    });
    let mut task_id = None;
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        events.recv(),
    )
    .await
    {
        if let EventKind::TaskStarted(t) = &event.kind {
            task_id = Some(t.task_id.clone());
            cancel.cancel();
            break;
        }
    }
    let task_id = task_id.unwrap();
    // Keep the stream drained while the child works.
    let drain = tokio::spawn(async move { while events.recv().await.is_some() {} });
    let parent_result = parent.await.unwrap();
    assert!(parent_result.is_error(), "the parent was interrupted");
    let done = spawner
        .tasks()
        .wait(&task_id, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.as_deref(), Some("CHILD-RESULT-42"));
    drain.abort();
}

#[tokio::test]
async fn task_stop_kills_a_running_child_and_its_bash() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sleep.pid");
    let command = format!("sleep 300 & echo $! > {} ; wait", pid_file.display());
    let server = FakeModelServer::start(background_scenario(
        0,
        Rule::tool_use("Bash", json!({"command": command, "description": "sleep"}))
            .when_tool_result(false),
    ))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let tree = tree(&server, dir.path(), home.path(), Setup::default());
    let spawner = tree.spawner.clone();
    let session = tokio::spawn(run(tree, "go"));

    // Wait until the child's Bash has started its sleep.
    let mut pid = None;
    for _ in 0..600 {
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            pid = Some(p);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = pid.expect("the child's command started");
    let task_id = spawner.tasks().running()[0].task_id.clone();
    let stop = fleet_runtime::TaskStopTool::new(spawner.tasks().clone());
    let ctx = ToolContext::new(
        dir.path().to_path_buf(),
        Arc::new(Workspace::new(dir.path())),
    );
    let out = Tool::call(&stop, json!({"task_id": task_id}), &ctx)
        .await
        .unwrap();
    assert!(out.content.contains("Stopped task"), "{}", out.content);

    let (events, _) = session.await.unwrap();
    let notified = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TaskNotified(n) => Some(n.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(notified.status, TaskStatus::Killed);
    assert_eq!(
        main_results(&events).last().unwrap().result,
        "MAIN-SAW-NOTIFICATION"
    );
    // The sleep died with its agent.
    let mut gone = false;
    for _ in 0..200 {
        if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "sleep {pid} still runs after TaskStop");
    let stats = spawner.ledger().stats();
    assert_eq!(stats.killed.parent, 1);
    // Stopping it again is a clear error.
    let again = Tool::call(&stop, json!({"task_id": task_id}), &ctx)
        .await
        .unwrap_err();
    assert!(again.to_string().contains("not running"), "{again}");
}

#[tokio::test]
async fn task_output_shows_progress_and_waits_for_the_result() {
    let server = FakeModelServer::start(background_scenario(600, Rule::text("CHILD-RESULT-42")))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tree = tree(&server, dir.path(), home.path(), Setup::default());
    let spawner = tree.spawner.clone();
    let session = tokio::spawn(run(tree, "go"));
    let running =
        fleet_testkit::wait_for_async(fleet_testkit::WAIT, "the background task to run", || {
            Some(spawner.tasks().running()).filter(|r| !r.is_empty())
        })
        .await;
    let task_id = running[0].task_id.clone();
    let output = fleet_runtime::TaskOutputTool::new(spawner.tasks().clone());
    let ctx = ToolContext::new(
        dir.path().to_path_buf(),
        Arc::new(Workspace::new(dir.path())),
    );
    let peek = Tool::call(&output, json!({"task_id": task_id, "block": false}), &ctx)
        .await
        .unwrap();
    let status = peek.structured.as_ref().unwrap()["status"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(status == "running" || status == "pending", "{status}");
    assert!(peek.structured.unwrap()["result"].is_null());
    let done = Tool::call(&output, json!({"task_id": task_id, "timeout": 20000}), &ctx)
        .await
        .unwrap();
    assert_eq!(done.structured.as_ref().unwrap()["status"], "completed");
    assert!(done.content.contains("CHILD-RESULT-42"), "{}", done.content);
    let unknown = Tool::call(&output, json!({"task_id": "nope"}), &ctx)
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains("No task"), "{unknown}");
    session.await.unwrap();
}
