//! Subagents against the fake model server: the Agent tool in the foreground and in the
//! background, notifications, TaskStop, limits, tool restrictions, transcripts and costs.
#![allow(clippy::unwrap_used)]

mod common;

use common::{client, result, Rendezvous};
use fleet_model::Catalog;
use fleet_protocol::{AgentEvent, EventKind, Message, TaskStatus};
use fleet_runtime::definitions::AgentCatalog;
use fleet_runtime::session::EVENT_BUFFER;
use fleet_runtime::subagent::{Features, MainAgent, TranscriptTarget};
use fleet_runtime::{Agent, AgentConfig, EventSink, Session, SpawnLimits, Spawner, SpawnerConfig};
use fleet_store::FleetHome;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::{PermissionMode, Permissions, RuleKind, RuleSet};
use fleet_tools::{Tool, ToolContext, ToolPool, Workspace};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

const PARENT: &str = "PARENT-SYSTEM";
const CHILD: &str = "running as a subagent";

/// A session with subagents: the spawner, the main agent and the stream they share.
struct Tree {
    spawner: Arc<Spawner>,
    agent: Agent,
    sink: EventSink,
    events: tokio::sync::mpsc::Receiver<AgentEvent>,
}

struct Setup<'a> {
    mode: PermissionMode,
    deny: Vec<&'a str>,
    limits: SpawnLimits,
    extra_tools: Vec<Arc<dyn Tool>>,
    budget: Option<f64>,
    agents: Option<AgentCatalog>,
    model_override: Option<String>,
}

impl Default for Setup<'_> {
    fn default() -> Self {
        Self {
            mode: PermissionMode::BypassPermissions,
            deny: Vec::new(),
            limits: SpawnLimits::default(),
            extra_tools: Vec::new(),
            budget: None,
            agents: None,
            model_override: None,
        }
    }
}

fn tree(server: &FakeModelServer, dir: &Path, home: &Path, setup: Setup<'_>) -> Tree {
    let workspace = Arc::new(Workspace::new(dir));
    let mut rules = RuleSet::default();
    for rule in &setup.deny {
        rules
            .add(RuleKind::Deny, rule, dir.to_path_buf(), "test")
            .unwrap();
    }
    let permissions = Arc::new(Permissions::new(setup.mode, rules, workspace.clone()));
    let mut base = ToolPool::builtin();
    for tool in setup.extra_tools {
        base.insert(tool);
    }
    let catalog = Arc::new(Catalog::builtin());
    let (sink, events) = EventSink::channel(EVENT_BUFFER);
    let spawner = Spawner::new(
        SpawnerConfig {
            client: client(server),
            catalog: catalog.clone(),
            agents: Arc::new(setup.agents.unwrap_or_else(AgentCatalog::builtin_only)),
            base_tools: base,
            shared_system: vec!["ENVIRONMENT".into()],
            workspace: workspace.clone(),
            limits: setup.limits,
            max_budget_usd: setup.budget,
            model_override: setup.model_override,
            resolve_aliases: true,
            features: Features::default(),
            max_tokens: 1024,
            transcripts: Some(TranscriptTarget {
                home: FleetHome::at(home),
                project: dir.to_path_buf(),
                session_id: "sess-1".into(),
            }),
        },
        sink.clone(),
    );
    let tools = spawner.main_tools(
        MainAgent {
            model: "claude-sonnet-4-5".into(),
            permissions: permissions.clone(),
            approver: None,
            cwd: dir.to_path_buf(),
        },
        |_| true,
    );
    let mut config = AgentConfig::new("claude-sonnet-4-5", tools, permissions);
    config.system = vec![PARENT.into()];
    config.inbox = Some(spawner.main_inbox().clone());
    config.ledger = Some(spawner.ledger().clone());
    config.max_budget_usd = setup.budget;
    let ctx = ToolContext::new(dir.to_path_buf(), workspace);
    let agent = Agent::new(client(server), catalog, config, ctx, "sess-1");
    Tree {
        spawner,
        agent,
        sink,
        events,
    }
}

/// Runs `prompt` through a session with subagents; returns every event and the spawner.
async fn run(tree: Tree, prompt: &str) -> (Vec<AgentEvent>, Arc<Spawner>) {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text(prompt)).await.unwrap();
    drop(tx);
    let spawner = tree.spawner.clone();
    let mut handle =
        Session::spawn_with(tree.agent, rx, tree.sink, tree.events, Some(tree.spawner));
    let mut events = Vec::new();
    let mut done = false;
    loop {
        tokio::select! {
            event = handle.events.recv() => match event {
                Some(event) => events.push(event),
                None => break,
            },
            _ = &mut handle.task, if !done => {
                done = true;
                handle.events.close();
            }
        }
    }
    (events, spawner)
}

fn main_results(events: &[AgentEvent]) -> Vec<&fleet_protocol::RunResult> {
    events
        .iter()
        .filter(|e| e.agent.is_main())
        .filter_map(|e| match &e.kind {
            EventKind::Finished(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn agent_call(input: serde_json::Value) -> Rule {
    Rule::tool_use("Agent", input)
}

#[tokio::test]
async fn a_foreground_subagent_runs_reports_and_leaves_a_transcript() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("CHILD-ANSWER: the bug is in parse.rs").when_system_contains(CHILD),
        agent_call(json!({"description": "find bug", "prompt": "Find the bug", "subagent_type": "general-purpose"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE").when_system_contains(PARENT).when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, spawner) = run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;

    let results = main_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].result, "DONE");
    // The child's events come through, stamped with the call that started it.
    let call_id = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::AssistantBlock {
                block: fleet_protocol::ContentBlock::ToolUse { id, .. },
                ..
            } if e.agent.is_main() => Some(id.clone()),
            _ => None,
        })
        .unwrap();
    let child: Vec<&AgentEvent> = events.iter().filter(|e| !e.agent.is_main()).collect();
    assert!(!child.is_empty());
    assert!(child
        .iter()
        .all(|e| e.agent.parent_tool_use_id.as_deref() == Some(call_id.as_str())));
    let label = child[0].agent.subagent.as_ref().unwrap();
    assert_eq!(
        (label.subagent_type.as_str(), label.description.as_str()),
        ("general-purpose", "find bug")
    );
    // The parent got the child's answer as the tool result.
    let tool_result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult(r) if e.agent.is_main() => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!tool_result.is_error);
    assert!(tool_result.content.contains("CHILD-ANSWER"));
    let structured = tool_result.structured.unwrap();
    assert_eq!(structured["status"], "completed");
    assert_eq!(structured["result"], "CHILD-ANSWER: the bug is in parse.rs");
    let child_id = structured["agentId"].as_str().unwrap().to_string();
    assert_eq!(child[0].agent.agent_id, child_id);

    // The child's conversation is on disk under the session.
    let path = fleet_store::SidechainWriter::path_for(
        &FleetHome::at(home.path()),
        dir.path(),
        "sess-1",
        &child_id,
    );
    let loaded = fleet_store::Transcript::load(&path).unwrap();
    let messages = loaded.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].text(), "Find the bug");

    // Cost is kept per agent and rolled up.
    let tree = results[0].tree.clone().unwrap();
    assert_eq!(tree.agents.len(), 2);
    let sum: f64 = tree.agents.iter().map(|a| a.cost_usd).sum();
    assert!(sum > 0.0);
    assert!((tree.total_cost_usd - sum).abs() < 1e-9);
    assert!(
        tree.total_cost_usd > results[0].total_cost_usd,
        "the tree costs more than the main agent alone"
    );
    assert_eq!(tree.subagent_stats.spawned, 1);
    assert_eq!(tree.subagent_stats.completed, 1);
    assert_eq!(tree.subagent_stats.by_type.get("general-purpose"), Some(&1));
    assert_eq!(
        spawner.ledger().agent(&child_id).unwrap().status,
        "completed"
    );
}

#[tokio::test]
async fn the_invoking_request_id_goes_with_the_childs_first_request_only() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use("Glob", json!({"pattern": "*.none"}))
            .when_system_contains(CHILD)
            .when_tool_result(false),
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        agent_call(json!({"description": "look", "prompt": "Look around"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;
    let log = server.requests();
    let is_child = |r: &fleet_testkit::RecordedRequest| r.body.to_string().contains(CHILD);
    let parent_first = log.iter().find(|r| !is_child(r)).unwrap();
    // The fake server's request ids are `req_fake_<seq>`.
    let parent_request_id = format!("req_fake_{:06}", parent_first.seq);
    let child: Vec<_> = log.iter().filter(|r| is_child(r)).collect();
    assert_eq!(child.len(), 2);
    assert_eq!(
        child[0].header("x-fleet-invoking-request-id"),
        Some(parent_request_id.as_str())
    );
    assert_eq!(child[1].header("x-fleet-invoking-request-id"), None);
    assert!(log
        .iter()
        .filter(|r| !is_child(r))
        .all(|r| r.header("x-fleet-invoking-request-id").is_none()));
}

fn tool_results_of(events: &[AgentEvent], main: bool) -> Vec<fleet_protocol::ToolResultEvent> {
    events
        .iter()
        .filter(|e| e.agent.is_main() == main)
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

fn background_scenario(child_delay_ms: u64, child: Rule) -> Scenario {
    Scenario::with_rules([
        child.when_system_contains(CHILD).delay_ms(child_delay_ms),
        Rule::text("MAIN-SAW-NOTIFICATION")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING")
            .when_system_contains(PARENT)
            .when_tool_result_contains("Started background agent"),
        agent_call(json!({"description": "background job", "prompt": "Do BGTASK-1 and report", "run_in_background": true}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
    ])
}

#[tokio::test]
async fn a_background_subagent_notifies_its_parent_which_answers() {
    let server = FakeModelServer::start(background_scenario(300, Rule::text("CHILD-RESULT-42")))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, spawner) = run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;

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
    while let Some(event) = events.recv().await {
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
async fn spawning_deeper_than_the_limit_is_refused_with_a_clear_result() {
    let server = FakeModelServer::start(Scenario::with_rules([
        agent_call(json!({"description": "deeper", "prompt": "go deeper"}))
            .when_system_contains(CHILD)
            .when_tool_result(false),
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        agent_call(json!({"description": "first", "prompt": "start"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let setup = Setup {
        limits: SpawnLimits {
            max_depth: 1,
            max_concurrent: 20,
        },
        ..Setup::default()
    };
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let refused = tool_results_of(&events, false).remove(0);
    assert!(refused.is_error);
    assert!(
        refused.content.contains("nesting limit is 1"),
        "{}",
        refused.content
    );
    let stats = spawner.ledger().stats();
    assert_eq!(
        (stats.spawned, stats.refused.depth_limit, stats.max_depth),
        (1, 1, 1)
    );
    assert_eq!(main_results(&events)[0].result, "DONE");
}

#[tokio::test]
async fn agent_calls_of_one_reply_run_together_up_to_the_concurrency_limit() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let three = |n: usize| {
        (0..n).fold(Rule::new(), |rule, i| {
            rule.then_tool_use(
                "Agent",
                json!({"description": format!("job {i}"), "prompt": format!("job {i}")}),
            )
        })
    };
    // Limit 3: the three children meet at a 3-party barrier, which only works if they overlap.
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use("Rendezvous", json!({"name": "x"}))
            .when_system_contains(CHILD)
            .when_tool_result(false),
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        three(3)
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let barrier: Arc<dyn Tool> = Arc::new(Rendezvous {
        barrier: Arc::new(Barrier::new(3)),
    });
    let setup = Setup {
        extra_tools: vec![barrier],
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let met: Vec<String> = tool_results_of(&events, false)
        .into_iter()
        .map(|r| r.content)
        .collect();
    assert_eq!(met, ["met:x", "met:x", "met:x"]);

    // Limit 2: the third call of the same reply is refused, the others complete.
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done")
            .when_system_contains(CHILD)
            .delay_ms(400),
        three(3)
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let setup = Setup {
        limits: SpawnLimits {
            max_depth: 3,
            max_concurrent: 2,
        },
        ..Setup::default()
    };
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let results = tool_results_of(&events, true);
    let refused: Vec<_> = results.iter().filter(|r| r.is_error).collect();
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].content.contains("2 are already running"),
        "{}",
        refused[0].content
    );
    let stats = spawner.ledger().stats();
    assert_eq!((stats.completed, stats.refused.concurrency_limit), (2, 1));
}

#[tokio::test]
async fn a_child_holds_no_more_permission_than_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "precious").unwrap();
    let child_write = json!({"file_path": dir.path().join("new.txt"), "content": "x"});
    let scenario = |child_call: Rule| {
        Scenario::with_rules([
            child_call.when_system_contains(CHILD).when_tool_result(false),
            Rule::text("child done").when_system_contains(CHILD).when_tool_result(true),
            agent_call(json!({"description": "work", "prompt": "work", "subagent_type": "general-purpose"}))
                .when_system_contains(PARENT)
                .when_tool_result(false),
            Rule::text("DONE").when_system_contains(PARENT).when_tool_result(true),
        ])
    };

    // A plan-mode parent's child cannot write.
    let server = FakeModelServer::start(scenario(Rule::tool_use("Write", child_write.clone())))
        .await
        .unwrap();
    let setup = Setup {
        mode: PermissionMode::Plan,
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let denied = tool_results_of(&events, false).remove(0);
    assert!(denied.is_error, "{}", denied.content);
    assert!(!dir.path().join("new.txt").exists());

    // The parent's deny rule binds the child even in bypassPermissions.
    let server = FakeModelServer::start(scenario(Rule::tool_use(
        "Bash",
        json!({"command": "rm -f keep.txt", "description": "remove"}),
    )))
    .await
    .unwrap();
    let setup = Setup {
        deny: vec!["Bash(rm *)"],
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let denied = tool_results_of(&events, false).remove(0);
    assert!(denied.is_error, "{}", denied.content);
    assert!(dir.path().join("keep.txt").exists());
}

#[tokio::test]
async fn explore_is_not_given_tools_that_change_things() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use(
            "Edit",
            json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
        )
        .when_system_contains(CHILD)
        .when_tool_result(false),
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        agent_call(
            json!({"description": "explore", "prompt": "explore", "subagent_type": "Explore"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, _) = run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;
    let child_request = server
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains(CHILD))
        .unwrap();
    let tools: Vec<String> = child_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for read_only in ["Read", "Glob", "Grep"] {
        assert!(tools.iter().any(|t| t == read_only), "{tools:?}");
    }
    for changing in ["Edit", "Write", "Agent"] {
        assert!(!tools.iter().any(|t| t == changing), "{tools:?}");
    }
    let refused = tool_results_of(&events, false).remove(0);
    assert!(
        refused.is_error && refused.content.contains("No such tool"),
        "{}",
        refused.content
    );
    // Explore runs on the fast model.
    assert!(child_request.body["model"]
        .as_str()
        .unwrap()
        .contains("haiku"));
}

#[tokio::test]
async fn an_unknown_agent_type_lists_the_available_ones() {
    let server = FakeModelServer::start(Scenario::with_rules([
        agent_call(json!({"description": "x", "prompt": "x", "subagent_type": "nope"}))
            .when_tool_result(false),
        Rule::text("DONE").when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, _) = run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;
    let err = tool_results_of(&events, true).remove(0);
    assert!(err.is_error);
    for name in ["general-purpose", "Explore", "Plan", "verification"] {
        assert!(err.content.contains(name), "{}", err.content);
    }
}

#[tokio::test]
async fn the_budget_binds_the_whole_tree() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(json!({"description": "x", "prompt": "x"}))
            .when_system_contains(PARENT)
            .when_tool_result(false)
            .input_tokens(100_000),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let setup = Setup {
        budget: Some(0.01),
        ..Setup::default()
    };
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(
        refused.is_error && refused.content.contains("budget"),
        "{}",
        refused.content
    );
    assert_eq!(spawner.ledger().stats().refused.budget, 1);
    assert_eq!(
        result(&events).subtype,
        fleet_protocol::ResultSubtype::ErrorMaxBudgetUsd
    );
}

#[tokio::test]
async fn a_tools_entry_with_a_specifier_limits_the_tool_to_it() {
    use fleet_runtime::definitions::{AgentDefinition, AgentSource, ToolEntry};
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use(
            "Bash",
            json!({"command": "git status --short", "description": "status"}),
        )
        .then_tool_use(
            "Bash",
            json!({"command": "rm keep.txt", "description": "remove"}),
        )
        .when_system_contains(CHILD)
        .when_tool_result(false),
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        agent_call(json!({"description": "git", "prompt": "look", "subagent_type": "git-only"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let mut def = AgentDefinition::new(
        "git-only",
        "Git helper",
        "You run git.",
        AgentSource::CommandLine,
    );
    def.tools = Some(vec![ToolEntry {
        name: "Bash".into(),
        specifier: Some("git *".into()),
    }]);
    let mut defs = vec![def];
    defs.extend(fleet_runtime::definitions::builtin_agents());
    let setup = Setup {
        agents: Some(AgentCatalog::from_definitions(defs)),
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let results = tool_results_of(&events, false);
    assert_eq!(results.len(), 2);
    assert!(
        !results[0].content.contains("may use Bash only"),
        "{}",
        results[0].content
    );
    assert!(
        results[1].is_error && results[1].content.contains("git *"),
        "{}",
        results[1].content
    );
    assert!(dir.path().join("keep.txt").exists());
}

#[tokio::test]
async fn a_definition_asking_for_isolation_is_refused_until_fleet_can_isolate() {
    use fleet_runtime::definitions::{AgentDefinition, AgentSource, Isolation};
    let server = FakeModelServer::start(Scenario::with_rules([
        agent_call(json!({"description": "x", "prompt": "x", "subagent_type": "isolated"}))
            .when_tool_result(false),
        Rule::text("DONE").when_tool_result(true),
    ]))
    .await
    .unwrap();
    let mut def = AgentDefinition::new(
        "isolated",
        "Works apart",
        "You work apart.",
        AgentSource::CommandLine,
    );
    def.isolation = Some(Isolation::Worktree);
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let setup = Setup {
        agents: Some(AgentCatalog::from_definitions(vec![def])),
        ..Setup::default()
    };
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(
        refused.is_error && refused.content.contains("isolation"),
        "{}",
        refused.content
    );
    assert_eq!(spawner.ledger().stats().spawned, 0);
    assert_eq!(server.request_count(), 2, "no child request was made");
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
    let mut running = Vec::new();
    for _ in 0..400 {
        running = spawner.tasks().running();
        if !running.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
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

#[tokio::test]
async fn fleet_subagent_model_wins_over_the_call_and_the_definition() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(
            json!({"description": "x", "prompt": "x", "subagent_type": "Explore", "model": "opus"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The call's model beats the definition's (Explore: haiku).
    run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;
    let child_model = |server: &FakeModelServer| {
        server
            .requests()
            .into_iter()
            .find(|r| r.body.to_string().contains(CHILD))
            .map(|r| r.body["model"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        child_model(&server).contains("opus"),
        "{}",
        child_model(&server)
    );
    // FLEET_SUBAGENT_MODEL beats both.
    let server2 = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(
            json!({"description": "x", "prompt": "x", "subagent_type": "Explore", "model": "opus"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let setup = Setup {
        model_override: Some("claude-custom-1".into()),
        ..Setup::default()
    };
    run(tree(&server2, dir.path(), home.path(), setup), "go").await;
    assert_eq!(child_model(&server2), "claude-custom-1");
}
