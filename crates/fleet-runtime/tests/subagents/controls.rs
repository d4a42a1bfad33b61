//! Session controls with subagents: stopping a background agent from outside, and an
//! interrupt that leaves background agents running.

use super::harness::*;
use fleet_protocol::{AgentEvent, EventKind, Message, ResultSubtype, TaskStatus};
use fleet_runtime::controls::{ControlError, ControlOptions};
use fleet_runtime::{Session, SessionControls};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;

fn controlled(setup: Setup<'_>) -> (Setup<'_>, SessionControls) {
    let controls = SessionControls::new(ControlOptions::default());
    (
        Setup {
            controls: Some(controls.clone()),
            ..setup
        },
        controls,
    )
}

fn task_statuses(events: &[AgentEvent]) -> Vec<TaskStatus> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskUpdated { status, .. } => Some(*status),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn stop_task_stops_a_background_agent_and_its_parent_hears_of_it() {
    // The child would wait a long time for its reply; only the stop ends it.
    let server = FakeModelServer::start(background_scenario(30_000, Rule::text("NEVER")))
        .await
        .unwrap();
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (setup, controls) = controlled(Setup::default());
    let tree = tree(&server, dir.path(), home.path(), setup);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text("go")).await.unwrap();
    drop(tx);
    let mut handle =
        Session::spawn_with(tree.agent, rx, tree.sink, tree.events, Some(tree.spawner));
    let mut events = Vec::new();
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        if let EventKind::TaskStarted(started) = &event.kind {
            let unknown = controls.stop_task("no-such-task").await.unwrap_err();
            assert!(matches!(unknown, ControlError::Task(_)), "{unknown}");
            assert!(unknown.to_string().contains(&started.task_id), "{unknown}");
            let stopped = controls.stop_task(&started.task_id).await.unwrap();
            assert_eq!(stopped.status, "killed");
            assert_eq!(stopped.description, "background job");
        }
        events.push(event);
    }
    assert_eq!(task_statuses(&events), [TaskStatus::Killed]);
    let results = main_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1].result, "MAIN-SAW-NOTIFICATION");
}

#[tokio::test]
async fn an_interrupt_while_settling_leaves_the_background_agent_running() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    // The child finishes only once the test opens the gate, after the interrupt.
    let scenario = Scenario::with_rules([
        Rule::text("CHILD-RESULT-42")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        Rule::tool_use(
            "Bash",
            json!({"command": format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display())}),
        )
        .when_system_contains(CHILD),
        Rule::text("MAIN-SAW-NOTIFICATION")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING")
            .when_system_contains(PARENT)
            .when_tool_result_contains("Started background agent"),
        agent_call(json!({"description": "background job", "prompt": "Wait for the gate", "run_in_background": true}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
    ]);
    let server = FakeModelServer::start(scenario).await.unwrap();
    let (setup, controls) = controlled(Setup::default());
    let tree = tree(&server, dir.path(), home.path(), setup);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text("go")).await.unwrap();
    let mut handle =
        Session::spawn_with(tree.agent, rx, tree.sink, tree.events, Some(tree.spawner));
    let mut events = Vec::new();
    let mut interrupted = false;
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        let main_finished = event.agent.is_main() && matches!(event.kind, EventKind::Finished(_));
        let notified = matches!(event.kind, EventKind::TaskNotified(_));
        events.push(event);
        if main_finished && !interrupted {
            // The run is over; the session waits for its background agent.
            assert!(controls.is_running());
            assert!(controls.interrupt());
            interrupted = true;
            fleet_testkit::wait_until_async(
                fleet_testkit::WAIT,
                "the interrupted turn to stop running",
                || !controls.is_running(),
            )
            .await;
            std::fs::write(&gate, "").unwrap();
        }
        if notified {
            tx.send(Message::user_text("anything new?")).await.unwrap();
        }
        if main_results(&events).len() == 2 {
            break;
        }
    }
    drop(tx);
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        events.push(event);
    }
    assert_eq!(task_statuses(&events), [TaskStatus::Completed]);
    let results = main_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].result, "MAIN-WAITING");
    assert_eq!(results[1].subtype, ResultSubtype::Success);
    assert_eq!(results[1].result, "MAIN-SAW-NOTIFICATION");
}
