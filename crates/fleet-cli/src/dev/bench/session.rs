//! The session both benchmarks run: a main agent against the fake server, in bypass mode, with
//! a spawner each benchmark shapes, started on one prompt.

use anyhow::Context;
use fleet_model::{AnthropicClient, AnthropicConfig, Auth, Catalog};
use fleet_protocol::{AgentEvent, Message};
use fleet_runtime::definitions::AgentCatalog;
use fleet_runtime::session::EVENT_BUFFER;
use fleet_runtime::subagent::MainAgent;
use fleet_runtime::{
    Agent, AgentConfig, EventSink, Session, SessionHandle, Spawner, SpawnerConfig,
};
use fleet_tools::permissions::{PermissionMode, Permissions, RuleSet};
use fleet_tools::{ToolContext, Workspace};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub(super) const MODEL: &str = "claude-sonnet-4-5";

/// A session built but not started, so a benchmark can take its baseline in between.
pub(super) struct Prepared {
    pub spawner: Arc<Spawner>,
    agent: Agent,
    sink: EventSink,
    events: mpsc::Receiver<AgentEvent>,
}

/// Builds the session in `project`: `shape` adjusts the spawner's configuration (limits,
/// features, transcripts), which starts from the built-in agents and 1024 output tokens.
pub(super) fn prepare(
    base_url: &str,
    project: &Path,
    system: &str,
    shape: impl FnOnce(SpawnerConfig) -> SpawnerConfig,
) -> anyhow::Result<Prepared> {
    prepare_with(base_url, project, system, Catalog::builtin(), shape)
}

/// [`prepare`] with the model figures of `catalog` (a benchmark may give the model a smaller
/// window than the real one).
pub(super) fn prepare_with(
    base_url: &str,
    project: &Path,
    system: &str,
    catalog: Catalog,
    shape: impl FnOnce(SpawnerConfig) -> SpawnerConfig,
) -> anyhow::Result<Prepared> {
    let workspace = Arc::new(Workspace::new(project));
    let permissions = Arc::new(Permissions::new(
        PermissionMode::BypassPermissions,
        RuleSet::default(),
        workspace.clone(),
    ));
    let mut config = AnthropicConfig::new(base_url, Auth::ApiKey("bench".into()));
    config.http.idle_timeout = Duration::from_secs(120);
    let client = Arc::new(AnthropicClient::new(config)?);
    let catalog = Arc::new(catalog);
    let (sink, events) = EventSink::channel(EVENT_BUFFER);
    let spawner = Spawner::new(
        shape({
            let mut config = SpawnerConfig::new(
                client.clone(),
                catalog.clone(),
                Arc::new(AgentCatalog::builtin_only()),
                workspace.clone(),
            );
            config.models.max_tokens = Some(1024);
            config
        }),
        sink.clone(),
    );
    let tools = spawner.main_tools(
        MainAgent {
            model: MODEL.into(),
            permissions: permissions.clone(),
            approver: None,
            cwd: project.to_path_buf(),
        },
        |_| true,
    );
    let mut agent_config = AgentConfig::new(MODEL, tools, permissions);
    agent_config.model.max_tokens = 1024;
    agent_config.context.system = vec![system.to_string()];
    spawner.attach_main(&mut agent_config);
    let agent = Agent::new(
        client,
        catalog,
        agent_config,
        ToolContext::new(project.to_path_buf(), workspace),
        "bench",
    );
    Ok(Prepared {
        spawner,
        agent,
        sink,
        events,
    })
}

impl Prepared {
    /// Starts the session on `prompt`; it ends once the main agent has settled.
    pub async fn start(self, prompt: &str) -> anyhow::Result<SessionHandle> {
        let (tx, rx) = mpsc::channel(1);
        tx.send(Message::user_text(prompt))
            .await
            .context("starting the session")?;
        drop(tx);
        Ok(Session::spawn_with(
            self.agent,
            rx,
            self.sink,
            self.events,
            Some(self.spawner),
        ))
    }
}
