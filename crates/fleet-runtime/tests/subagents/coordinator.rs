//! Coordinator mode in the runtime: the coordinator's tools, and workers that always run in
//! the background and cannot direct other agents.

use super::harness::*;
use fleet_protocol::EventKind;
use fleet_runtime::subagent::Orchestration;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_coordinator_orchestrates_and_its_workers_only_work() {
    let scenario = Scenario::with_rules([
        Rule::text("worker report").when_system_contains(CHILD),
        Rule::text("COORDINATOR-DONE")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("COORDINATOR-WAITING")
            .when_system_contains(PARENT)
            .when_tool_result(true),
        // Asks for the foreground; a coordinator's workers run in the background regardless.
        agent_call(
            json!({"description": "research", "prompt": "find it", "run_in_background": false}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
    ]);
    let server = FakeModelServer::start(scenario).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let setup = Setup {
        orchestration: Orchestration::Coordinator,
        ..Setup::default()
    };
    let tree = tree(&server, dir.path(), home.path(), setup);
    let offered: Vec<String> = tree
        .agent
        .config()
        .tools
        .pool
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(offered, ["Agent", "SendMessage", "TaskStop"]);
    let (events, _) = run(tree, "go").await;

    let requests = server.requests();
    let coordinator = requests
        .iter()
        .find(|r| r.body.to_string().contains(PARENT))
        .unwrap();
    assert_eq!(
        tool_names(&coordinator.body),
        ["Agent", "SendMessage", "TaskStop"]
    );
    let agent_schema = coordinator.body["tools"][0]["input_schema"]["properties"].clone();
    assert!(agent_schema.get("run_in_background").is_none());
    let worker = requests
        .iter()
        .find(|r| r.body["system"].to_string().contains(CHILD))
        .unwrap();
    let worker_tools = tool_names(&worker.body);
    for tool in ["Read", "Edit", "Bash", "Grep"] {
        assert!(worker_tools.iter().any(|t| t == tool), "{worker_tools:?}");
    }
    for tool in ["Agent", "SendMessage", "TaskStop", "TaskOutput"] {
        assert!(!worker_tools.iter().any(|t| t == tool), "{worker_tools:?}");
    }

    let launch = tool_results_of(&events, true).remove(0);
    assert_eq!(launch.structured.unwrap()["status"], "async_launched");
    // The launch text names only what the coordinator can do about the worker.
    assert!(
        launch
            .content
            .contains("Use SendMessage to give it more instructions or TaskStop to stop it."),
        "{}",
        launch.content
    );
    assert!(!launch.content.contains("TaskOutput"), "{}", launch.content);
    assert!(events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::TaskNotified(n) if n.result == "worker report")));
    assert_eq!(
        main_results(&events).last().unwrap().result,
        "COORDINATOR-DONE"
    );
}
