//! `isolation: "remote"`: the call becomes a job for the session's remote launcher and a
//! background task here (progress, TaskStop, a notification with the fetched branch). The
//! launcher is scripted; the NATS one is tested in fleet-remote and end to end.

use super::harness::*;
use fleet_protocol::{EventKind, TaskStatus, TaskUsage};
use fleet_runtime::definitions::{AgentCatalog, AgentDefinition, AgentSource, Isolation};
use fleet_runtime::definitions::{ModelSetting, ToolEntry};
use fleet_runtime::remote::RemoteUpdate;
use fleet_runtime::remote::{
    LaunchError, RemoteEnding, RemoteLaunched, RemoteLauncher, RemoteRequest,
};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use fleet_tools::{Tool, ToolContext, Workspace};
use futures::future::BoxFuture;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What the scripted launcher does with a job.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Script {
    /// Started, some progress, then completed with a branch.
    Finish,
    /// Started and some progress, then waits to be cancelled and reports it killed.
    UntilStopped,
    /// Refuses to launch.
    Refuse,
}

#[derive(Debug)]
struct FakeLauncher {
    script: Script,
    requests: Mutex<Vec<RemoteRequest>>,
    cancelled: Arc<AtomicBool>,
}

impl FakeLauncher {
    fn new(script: Script) -> Arc<Self> {
        Arc::new(Self {
            script,
            requests: Mutex::new(Vec::new()),
            cancelled: Arc::default(),
        })
    }

    fn requests(&self) -> Vec<RemoteRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl RemoteLauncher for FakeLauncher {
    fn launch(
        &self,
        request: RemoteRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<RemoteLaunched, LaunchError>> {
        self.requests.lock().unwrap().push(request.clone());
        let script = self.script;
        let cancelled = self.cancelled.clone();
        Box::pin(async move {
            if script == Script::Refuse {
                return Err(LaunchError::Connect(Box::new(std::io::Error::other(
                    "the broker at nats://nowhere is down",
                ))));
            }
            let (tx, updates) = tokio::sync::mpsc::channel(8);
            let short: String = request.task_id.chars().skip(1).take(8).collect();
            tokio::spawn(async move {
                let started = RemoteUpdate::Started {
                    worker: "box-1".into(),
                    attempt: 2,
                };
                let progress = RemoteUpdate::Progress {
                    tool_uses: 3,
                    total_tokens: 1234,
                    last_activity: Some("Bash".into()),
                };
                let _ = tx.send(started).await;
                let _ = tx.send(progress).await;
                let ending = match script {
                    Script::UntilStopped => {
                        cancel.cancelled().await;
                        cancelled.store(true, Ordering::SeqCst);
                        RemoteEnding {
                            status: TaskStatus::Killed,
                            result: "stopped on the worker".into(),
                            usage: TaskUsage::default(),
                            branch: None,
                        }
                    }
                    _ => RemoteEnding {
                        status: TaskStatus::Completed,
                        result: "REMOTE-RESULT".into(),
                        usage: TaskUsage {
                            total_tokens: 1500,
                            tool_uses: 4,
                            duration_ms: 900,
                            unreported_replies: 0,
                        },
                        branch: Some(format!("fleet/remote-{short}")),
                    },
                };
                let _ = tx.send(RemoteUpdate::Ended(ending)).await;
            });
            Ok(RemoteLaunched {
                session_url: format!("nats://fake fleet.events.{}", request.task_id),
                updates,
            })
        })
    }
}

fn remote_scenario(call: serde_json::Value) -> Scenario {
    Scenario::with_rules([
        Rule::text("MAIN-SAW-NOTIFICATION")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING")
            .when_system_contains(PARENT)
            .when_tool_result_contains("Started remote agent"),
        Rule::text("MAIN-SAW-ERROR").when_tool_result(true),
        agent_call(call).when_tool_result(false),
    ])
}

fn notification(events: &[fleet_protocol::AgentEvent]) -> fleet_protocol::TaskNotification {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TaskNotified(n) => Some(n.clone()),
            _ => None,
        })
        .expect("a notification")
}

#[tokio::test]
async fn a_remote_call_launches_a_job_and_its_branch_arrives_in_the_notification() {
    let server = FakeModelServer::start(remote_scenario(json!({
        "description": "remote job", "prompt": "Do REMOTE-1", "isolation": "remote"})))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let launcher = FakeLauncher::new(Script::Finish);
    let setup = Setup {
        mode: PermissionMode::AcceptEdits,
        deny: vec!["Bash(rm *)"],
        remote: Some(launcher.clone()),
        ..Setup::default()
    };
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), setup), "go").await;

    let launch = tool_results_of(&events, true).remove(0);
    assert!(!launch.is_error, "{}", launch.content);
    let structured = serde_json::Value::clone(launch.structured.as_ref().unwrap());
    let task_id = structured["taskId"].as_str().unwrap().to_string();
    assert!(task_id.starts_with('r') && task_id.len() == 17, "{task_id}");
    assert_eq!(
        structured,
        json!({"status": "remote_launched", "taskId": task_id,
               "sessionUrl": format!("nats://fake fleet.events.{task_id}"),
               "description": "remote job", "prompt": "Do REMOTE-1"})
    );
    assert!(launch
        .content
        .contains(&format!("fleet remote logs {task_id}")));

    let request = launcher.requests().remove(0);
    assert_eq!(request.task_id, task_id);
    assert_eq!(request.agent_type, "general-purpose");
    assert_eq!(request.prompt, "Do REMOTE-1");
    assert_eq!(request.permission_mode, PermissionMode::AcceptEdits);
    assert_eq!(request.deny, vec!["Bash(rm *)".to_string()]);
    assert_eq!(request.model, "claude-sonnet-4-5");
    assert_eq!(request.cwd, dir.path());
    assert!(request.definition["prompt"]
        .as_str()
        .is_some_and(|p| !p.is_empty()));

    let started = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TaskStarted(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (started.task_id.as_str(), started.task_type.as_str()),
        (task_id.as_str(), "remote_agent")
    );
    let notified = notification(&events);
    assert_eq!(notified.status, TaskStatus::Completed);
    let branch = format!("fleet/remote-{}", &task_id[1..9]);
    assert!(
        notified.result.starts_with("REMOTE-RESULT"),
        "{}",
        notified.result
    );
    assert!(
        notified.result.contains(&format!("on branch {branch}")),
        "{}",
        notified.result
    );
    assert!(notified.worktree.unwrap().contains(&branch));
    assert_eq!(
        (notified.usage.total_tokens, notified.usage.tool_uses),
        (1500, 4)
    );

    let results = main_results(&events);
    assert_eq!(results.last().unwrap().result, "MAIN-SAW-NOTIFICATION");
    // Nothing ran here: only the main agent asked the model.
    assert_eq!(server.request_count(), 3);
    assert_eq!(spawner.ledger().stats().spawned, 0);
}

#[tokio::test]
async fn a_definition_saying_remote_goes_remote_with_its_own_definition_and_a_narrower_mode() {
    let server = FakeModelServer::start(remote_scenario(json!({
        "description": "review", "prompt": "Review it", "subagent_type": "remote-reviewer"})))
    .await
    .unwrap();
    let mut def = AgentDefinition::new(
        "remote-reviewer",
        "Reviews on a worker",
        "You review code.",
        AgentSource::CommandLine,
    );
    def.isolation = Some(Isolation::Remote);
    def.tools = Some(vec![ToolEntry::new("Read"), ToolEntry::new("Grep")]);
    def.model = Some(ModelSetting::Named("claude-haiku-4-5".into()));
    def.permission_mode = Some(PermissionMode::Plan);
    let launcher = FakeLauncher::new(Script::Finish);
    let setup = Setup {
        mode: PermissionMode::AcceptEdits,
        agents: Some(AgentCatalog::from_definitions(vec![def])),
        remote: Some(launcher.clone()),
        ..Setup::default()
    };
    let (events, _) = run_throwaway(&server, setup, "go").await;
    assert_eq!(notification(&events).status, TaskStatus::Completed);
    let request = launcher.requests().remove(0);
    assert_eq!(request.agent_type, "remote-reviewer");
    assert_eq!(request.permission_mode, PermissionMode::Plan);
    assert_eq!(
        request.definition,
        json!({"description": "Reviews on a worker", "prompt": "You review code.",
               "tools": ["Read", "Grep"], "model": "claude-haiku-4-5",
               "permissionMode": "plan"})
    );
    assert_eq!(request.model, "claude-haiku-4-5");
}

#[tokio::test]
async fn without_workers_a_remote_call_is_refused_naming_how_to_get_them() {
    let server = FakeModelServer::start(remote_scenario(json!({
        "description": "x", "prompt": "x", "isolation": "remote"})))
    .await
    .unwrap();
    let (events, spawner) = run_throwaway(&server, Setup::default(), "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(refused.is_error);
    for needed in ["FLEET_NATS_URL", "remote.natsUrl", "fleet worker"] {
        assert!(refused.content.contains(needed), "{}", refused.content);
    }
    assert!(spawner.tasks().running().is_empty());
}

#[tokio::test]
async fn a_launch_that_fails_is_the_calls_error_and_leaves_no_task() {
    let server = FakeModelServer::start(remote_scenario(json!({
        "description": "x", "prompt": "x", "isolation": "remote"})))
    .await
    .unwrap();
    let setup = Setup {
        remote: Some(FakeLauncher::new(Script::Refuse)),
        ..Setup::default()
    };
    let (events, _) = run_throwaway(&server, setup, "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(refused.is_error);
    assert!(
        refused
            .content
            .contains("Cannot start the remote agent: the broker at nats://nowhere is down"),
        "{}",
        refused.content
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e.kind, EventKind::TaskStarted(_))));
}

#[tokio::test]
async fn progress_shows_on_the_task_and_task_stop_reaches_the_launcher() {
    let server = FakeModelServer::start(remote_scenario(json!({
        "description": "long job", "prompt": "x", "isolation": "remote"})))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let launcher = FakeLauncher::new(Script::UntilStopped);
    let setup = Setup {
        remote: Some(launcher.clone()),
        ..Setup::default()
    };
    let tree = tree(&server, dir.path(), home.path(), setup);
    let spawner = tree.spawner.clone();
    let session = tokio::spawn(run(tree, "go"));

    let mut seen = None;
    for _ in 0..600 {
        let running = spawner.tasks().running();
        if let Some(task) = running.first() {
            let snapshot = spawner.tasks().get(&task.task_id).unwrap();
            if snapshot.progress.tool_uses == 3 {
                seen = Some(snapshot);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let snapshot = seen.expect("the job's progress reached its task");
    assert_eq!(snapshot.status, TaskStatus::Running);
    assert_eq!(snapshot.progress.total_tokens, 1234);
    assert_eq!(snapshot.progress.last_activity.as_deref(), Some("Bash"));

    let stop = fleet_runtime::TaskStopTool::new(spawner.tasks().clone());
    let ctx = ToolContext::new(
        dir.path().to_path_buf(),
        Arc::new(Workspace::new(dir.path())),
    );
    Tool::call(&stop, json!({"task_id": snapshot.task_id}), &ctx)
        .await
        .unwrap();
    let (events, _) = session.await.unwrap();
    assert_eq!(notification(&events).status, TaskStatus::Killed);
    assert!(
        launcher.cancelled.load(Ordering::SeqCst),
        "the launcher was told to stop the job"
    );
}
