//! Ctrl+B: `SessionControls::move_to_background` moves the main agent's foreground subagent or
//! Bash command to the background while it runs — the call answers at once, the work goes on
//! as a background task, and its `<task-notification>` reaches the main agent later.
#![allow(clippy::unwrap_used)]

use crate::harness;

use fleet_protocol::{AgentEvent, EventKind, Message, TaskStarted, TaskStatus};
use fleet_runtime::controls::ControlOptions;
use fleet_runtime::session::SessionHandle;
use fleet_runtime::tasks::{TaskKind, TaskOutputTool, TaskRegistry};
use fleet_runtime::{Session, SessionControls};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::{ToolContext, TypedTool, Workspace};
use harness::*;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A shell loop that ends once `gate` exists.
fn wait_for(gate: &Path) -> String {
    format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display())
}

fn controlled() -> (Setup<'static>, SessionControls) {
    let controls = SessionControls::new(ControlOptions::default());
    let setup = Setup {
        controls: Some(controls.clone()),
        ..Setup::default()
    };
    (setup, controls)
}

fn started(events: &[AgentEvent]) -> Vec<&TaskStarted> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskStarted(s) => Some(s),
            _ => None,
        })
        .collect()
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

/// Calls `move_to_background` until a call is there to move (the call enrols a moment after
/// the event the test saw); returns how many moved.
async fn move_once_enrolled(controls: &SessionControls) -> usize {
    for _ in 0..2_000 {
        let moved = controls.move_to_background().await;
        if moved > 0 {
            return moved;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    0
}

/// The parent runs one Bash call with `input`, goes on once it is moved, and answers the
/// moved command's notification.
async fn bash_server(input: serde_json::Value) -> FakeModelServer {
    FakeModelServer::start(Scenario::with_rules([
        Rule::text("MAIN-SAW-NOTIFICATION")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-GOES-ON")
            .when_system_contains(PARENT)
            .when_tool_result_contains("moved this command to the background"),
        Rule::tool_use("Bash", input)
            .when_system_contains(PARENT)
            .when_tool_result(false),
    ]))
    .await
    .unwrap()
}

/// A session on "go" whose Bash command has begun (the `begun` file exists) and has been
/// moved to the background.
async fn moved_bash(
    server: &FakeModelServer,
    dir: &Path,
    home: &Path,
    begun: &Path,
) -> (SessionHandle, SessionControls, Arc<TaskRegistry>) {
    let (setup, controls) = controlled();
    let tree = tree(server, dir, home, setup);
    let tasks = tree.spawner.tasks().clone();
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text("go")).await.unwrap();
    drop(tx);
    let handle = Session::spawn_with(tree.agent, rx, tree.sink, tree.events, Some(tree.spawner));
    fleet_testkit::wait_until_async(fleet_testkit::WAIT, "the command to begin", || {
        begun.exists()
    })
    .await;
    assert_eq!(move_once_enrolled(&controls).await, 1);
    (handle, controls, tasks)
}

/// A sync subagent that waits on `gate`; the main agent goes on once it is moved, and
/// answers its notification.
fn subagent_scenario(gate: &Path) -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-RESULT-42")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        Rule::tool_use("Bash", json!({"command": wait_for(gate)}))
            .when_system_contains(CHILD)
            .when_tool_result(false),
        Rule::text("MAIN-SAW-NOTIFICATION")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-GOES-ON")
            .when_system_contains(PARENT)
            .when_tool_result_contains("backgrounded by the user"),
        agent_call(json!({"description": "slow job", "prompt": "Wait for the gate"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
    ])
}

/// Runs the subagent scenario; `interrupt` interrupts the main turn right after the move.
async fn move_a_subagent(interrupt: bool) -> Vec<AgentEvent> {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let server = FakeModelServer::start(subagent_scenario(&gate))
        .await
        .unwrap();
    let (setup, controls) = controlled();
    let tree = tree(&server, dir.path(), home.path(), setup);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text("go")).await.unwrap();
    let mut handle =
        Session::spawn_with(tree.agent, rx, tree.sink, tree.events, Some(tree.spawner));
    let mut events = Vec::new();
    let mut moved = false;
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        let from_child = !event.agent.is_main();
        let main_finished = event.agent.is_main() && matches!(event.kind, EventKind::Finished(_));
        let notified = matches!(event.kind, EventKind::TaskNotified(_));
        events.push(event);
        if from_child && !moved {
            // The child is running (its Agent call enrolled before it started).
            assert_eq!(controls.move_to_background().await, 1);
            assert_eq!(controls.move_to_background().await, 0, "a call moves once");
            moved = true;
            if interrupt {
                assert!(controls.interrupt());
            }
        }
        if main_finished && main_results(&events).len() == 1 {
            // The main agent went on while the child still waits for its gate.
            assert!(
                task_statuses(&events).is_empty(),
                "the child is still running"
            );
            std::fs::write(&gate, "").unwrap();
        }
        if notified && interrupt {
            // The interrupt ended the waiting too; a new prompt reads the notification.
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
    server.shutdown().await;
    events
}

#[tokio::test]
async fn a_moved_subagent_runs_on_and_its_notification_reaches_the_parent() {
    let events = move_a_subagent(false).await;
    let starts = started(&events);
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert_eq!(starts[0].task_id, starts[1].task_id, "the same task, moved");
    assert!(!starts[0].is_backgrounded && starts[1].is_backgrounded);
    assert_eq!(starts[1].task_type, "local_agent");
    let running_after_move = events.iter().any(|e| {
        matches!(&e.kind, EventKind::BackgroundTasksChanged(tasks)
            if tasks.iter().any(|t| t.task_id == starts[0].task_id))
    });
    assert!(
        running_after_move,
        "a reader sees it among the background tasks"
    );

    let result = tool_results_of(&events, true)
        .into_iter()
        .find(|r| r.tool_use_id == starts[0].tool_use_id)
        .expect("the Agent call's result");
    assert!(!result.is_error);
    assert!(
        result.content.contains("backgrounded by the user"),
        "{}",
        result.content
    );
    assert!(
        result.content.contains(&starts[0].task_id),
        "{}",
        result.content
    );

    assert_eq!(task_statuses(&events), [TaskStatus::Completed]);
    let notification = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TaskNotified(n) => Some(n),
            _ => None,
        })
        .unwrap();
    assert_eq!(notification.result, "CHILD-RESULT-42");
    let results = main_results(&events);
    assert_eq!(results[0].result, "MAIN-GOES-ON");
    assert_eq!(results[1].result, "MAIN-SAW-NOTIFICATION");
}

#[tokio::test]
async fn an_interrupt_after_the_move_does_not_stop_the_moved_subagent() {
    let events = move_a_subagent(true).await;
    assert_eq!(
        task_statuses(&events),
        [TaskStatus::Completed],
        "the child finished its work: it was not killed"
    );
    let notification = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TaskNotified(n) => Some(n),
            _ => None,
        })
        .unwrap();
    assert_eq!(notification.result, "CHILD-RESULT-42");
    assert_eq!(main_results(&events)[1].result, "MAIN-SAW-NOTIFICATION");
}

#[tokio::test]
async fn nothing_in_the_foreground_moves_nothing() {
    let controls = SessionControls::new(ControlOptions::default());
    assert_eq!(controls.move_to_background().await, 0, "no session");

    // A session that only answers: nothing is ever there to move.
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("HELLO")]))
        .await
        .unwrap();
    let (setup, controls) = controlled();
    let (events, _) = run_throwaway(&server, setup, "hi").await;
    assert_eq!(main_results(&events)[0].result, "HELLO");
    assert_eq!(controls.move_to_background().await, 0, "after the session");
    assert!(started(&events).is_empty());
}

#[tokio::test]
async fn a_moved_bash_command_runs_on_as_a_shell_task() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (gate, begun) = (dir.path().join("gate"), dir.path().join("begun"));
    let command = format!(
        "echo EARLY-LINE; touch {}; {}; echo LATER-LINE",
        begun.display(),
        wait_for(&gate)
    );
    let server = bash_server(json!({"command": command, "description": "slow build"})).await;
    let (mut handle, _controls, tasks) = moved_bash(&server, dir.path(), home.path(), &begun).await;

    let mut events = Vec::new();
    let mut task_id = None;
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        if let EventKind::TaskStarted(s) = &event.kind {
            task_id = Some(s.task_id.clone());
        }
        let main_finished = event.agent.is_main() && matches!(event.kind, EventKind::Finished(_));
        events.push(event);
        if main_finished && main_results(&events).len() == 1 {
            let id = task_id.clone().expect("the shell task was announced");
            let snapshot = tasks.get(&id).unwrap();
            assert_eq!(snapshot.kind, TaskKind::Shell);
            assert_eq!(snapshot.status, TaskStatus::Running, "the command runs on");
            // What it printed before the move is in its output file already.
            let so_far = std::fs::read_to_string(&snapshot.output_file).unwrap();
            assert!(so_far.contains("EARLY-LINE"), "{so_far}");
            let output = TaskOutputTool::new(tasks.clone());
            let ctx = ToolContext::new(dir.path().into(), Arc::new(Workspace::new(dir.path())));
            let look = output
                .run(
                    serde_json::from_value(json!({"task_id": id, "block": false})).unwrap(),
                    &ctx,
                )
                .await
                .unwrap();
            assert!(look.content.contains("Still running"), "{}", look.content);
            assert!(look.content.contains("EARLY-LINE"), "{}", look.content);
            std::fs::write(&gate, "").unwrap();
            let done = output
                .run(
                    serde_json::from_value(json!({"task_id": id})).unwrap(),
                    &ctx,
                )
                .await
                .unwrap();
            assert!(done.content.contains("completed"), "{}", done.content);
            assert!(done.content.contains("LATER-LINE"), "{}", done.content);
            let file = std::fs::read_to_string(&snapshot.output_file).unwrap();
            assert!(
                file.contains("EARLY-LINE") && file.contains("LATER-LINE"),
                "{file}"
            );
        }
    }
    let starts = started(&events);
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert_eq!(starts[0].task_type, "local_bash");
    assert!(starts[0].is_backgrounded);
    assert_eq!(starts[0].description, "slow build");
    let result = tool_results_of(&events, true).remove(0);
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.contains(&starts[0].task_id),
        "{}",
        result.content
    );
    assert_eq!(task_statuses(&events), [TaskStatus::Completed]);
    let results = main_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].result, "MAIN-GOES-ON");
    assert_eq!(results[1].result, "MAIN-SAW-NOTIFICATION");
    server.shutdown().await;
}

#[tokio::test]
async fn a_moved_bash_command_stops_with_task_stop() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (gate, begun, after, shell) = (
        dir.path().join("gate"),
        dir.path().join("begun"),
        dir.path().join("after"),
        dir.path().join("shell.pid"),
    );
    let command = format!(
        "echo $$ > {}; touch {}; {}; touch {}",
        shell.display(),
        begun.display(),
        wait_for(&gate),
        after.display()
    );
    let server = bash_server(json!({"command": command})).await;
    let (mut handle, controls, _) = moved_bash(&server, dir.path(), home.path(), &begun).await;
    let mut events = Vec::new();
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        if let EventKind::TaskStarted(s) = &event.kind {
            let stopped = controls.stop_task(&s.task_id).await.unwrap();
            assert_eq!(stopped.status, "killed");
        }
        events.push(event);
    }
    assert_eq!(task_statuses(&events), [TaskStatus::Killed]);
    // The process group goes: once the command's shell has exited, opening the gate lets
    // nothing run on (no fixed sleep: the wait is on the shell's exit).
    let shell: u32 = std::fs::read_to_string(&shell)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    fleet_testkit::wait_until_async(
        fleet_testkit::WAIT,
        "the stopped command's shell to exit",
        || fleet_testkit::process_gone(shell),
    )
    .await;
    std::fs::write(&gate, "").unwrap();
    assert!(!after.exists(), "the stopped command must not run on");
    assert_eq!(main_results(&events).len(), 2);
    server.shutdown().await;
}
