//! A session with subagents against the fake server, and helpers to read its events.

use super::common::client;
use fleet_model::Catalog;
use fleet_protocol::{AgentEvent, EventKind, Message};
use fleet_runtime::definitions::AgentCatalog;
use fleet_runtime::session::EVENT_BUFFER;
use fleet_runtime::subagent::{Features, MainAgent, Orchestration, TranscriptTarget};
use fleet_runtime::{Agent, AgentConfig, EventSink, Session, SpawnLimits, Spawner, SpawnerConfig};
use fleet_store::FleetHome;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::{PermissionMode, Permissions, RuleKind, RuleSet};
use fleet_tools::{Tool, ToolContext, ToolPool, Workspace};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

pub(crate) const PARENT: &str = "PARENT-SYSTEM";
pub(crate) const CHILD: &str = "running as a subagent";

/// A session with subagents: the spawner, the main agent and the stream they share.
pub(crate) struct Tree {
    pub spawner: Arc<Spawner>,
    pub agent: Agent,
    pub sink: EventSink,
    pub events: tokio::sync::mpsc::Receiver<AgentEvent>,
}

pub(crate) struct Setup<'a> {
    pub mode: PermissionMode,
    pub deny: Vec<&'a str>,
    pub limits: SpawnLimits,
    pub extra_tools: Vec<Arc<dyn Tool>>,
    pub budget: Option<f64>,
    pub agents: Option<AgentCatalog>,
    pub model_override: Option<String>,
    pub orchestration: Orchestration,
    /// Teams on: `Agent` with `name` starts a teammate.
    pub teams: bool,
    /// The main agent's live controls.
    pub controls: Option<fleet_runtime::SessionControls>,
    /// Remote workers for `isolation: "remote"`.
    pub remote: Option<Arc<dyn fleet_runtime::remote::RemoteLauncher>>,
    /// The event stream's depth (the session's default unless set).
    pub event_buffer: Option<usize>,
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
            orchestration: Orchestration::Plain,
            teams: false,
            controls: None,
            remote: None,
            event_buffer: None,
        }
    }
}

pub(crate) fn tree(server: &FakeModelServer, dir: &Path, home: &Path, setup: Setup<'_>) -> Tree {
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
    let (sink, events) = EventSink::channel(setup.event_buffer.unwrap_or(EVENT_BUFFER));
    let mut config = SpawnerConfig::new(
        client(server),
        catalog.clone(),
        Arc::new(setup.agents.unwrap_or_else(AgentCatalog::builtin_only)),
        workspace.clone(),
    );
    config.children.base_tools = base;
    config.children.shared_system = vec!["ENVIRONMENT".into()];
    config.children.features = Features {
        orchestration: setup.orchestration,
        ..Features::default()
    };
    config.limits.spawn = setup.limits;
    config.limits.max_budget_usd = setup.budget;
    config.models.model_override = setup.model_override;
    config.models.max_tokens = Some(1024);
    config.services.teams = setup.teams.then(|| fleet_runtime::teams::TeamSettings {
        home: FleetHome::at(home),
        session_id: "5e55a0a1-0000-4000-8000-000000000001".into(),
        auto_approve_plans: false,
        listen: false,
        panes: None,
    });
    config.services.remote = setup.remote;
    config.places.transcripts = Some(TranscriptTarget {
        home: FleetHome::at(home),
        project: dir.to_path_buf(),
        session_id: "sess-1".into(),
    });
    let spawner = Spawner::new(config, sink.clone());
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
    config.context.system = vec![PARENT.into()];
    spawner.attach_main(&mut config);
    config.stop.max_budget_usd = setup.budget;
    config.controls = setup.controls;
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
pub(crate) async fn run(tree: Tree, prompt: &str) -> (Vec<AgentEvent>, Arc<Spawner>) {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(Message::user_text(prompt)).await.unwrap();
    drop(tx);
    let spawner = tree.spawner.clone();
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
        events.push(event);
    }
    (events, spawner)
}

/// Like [`run`], in a project folder and fleet home that are gone afterwards.
pub(crate) async fn run_throwaway(
    server: &FakeModelServer,
    setup: Setup<'_>,
    prompt: &str,
) -> (Vec<AgentEvent>, Arc<Spawner>) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    run(tree(server, dir.path(), home.path(), setup), prompt).await
}

pub(crate) fn main_results(events: &[AgentEvent]) -> Vec<&fleet_protocol::RunResult> {
    events
        .iter()
        .filter(|e| e.agent.is_main())
        .filter_map(|e| match &e.kind {
            EventKind::Finished(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub(crate) fn agent_call(input: serde_json::Value) -> Rule {
    Rule::tool_use("Agent", input)
}

pub(crate) fn tool_results_of(
    events: &[AgentEvent],
    main: bool,
) -> Vec<fleet_protocol::ToolResultEvent> {
    events
        .iter()
        .filter(|e| e.agent.is_main() == main)
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn background_scenario(child_delay_ms: u64, child: Rule) -> Scenario {
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

/// Child rules, then the parent's two turns: one making the Agent call `call`, and "DONE"
/// once it has the result.
pub(crate) fn delegation(
    child: impl IntoIterator<Item = Rule>,
    call: serde_json::Value,
) -> Scenario {
    Scenario::with_rules(
        child.into_iter().chain([
            agent_call(call)
                .when_system_contains(PARENT)
                .when_tool_result(false),
            Rule::text("DONE")
                .when_system_contains(PARENT)
                .when_tool_result(true),
        ]),
    )
}

/// A child's last turn: it reports once its tool calls are answered.
pub(crate) fn child_done() -> Rule {
    Rule::text("child done")
        .when_system_contains(CHILD)
        .when_tool_result(true)
}
