//! A harness for agent-loop tests: the fake model server, a client for it, small tools with
//! observable behaviour, and a collector for the event stream.
#![allow(dead_code, clippy::unwrap_used)]

use fleet_model::{AnthropicClient, AnthropicConfig, Auth, Catalog, HttpOptions, RetryPolicy};
use fleet_protocol::{AgentEvent, EventKind, Message, RunResult};
use fleet_runtime::{Agent, AgentConfig, Session};
use fleet_testkit::{FakeModelServer, Scenario};
use fleet_tools::permissions::{PermissionMode, Permissions, RuleSet};
use fleet_tools::{
    Access, Tool, ToolContext, ToolError, ToolOutput, ToolPool, TypedTool, Workspace,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

pub fn client(server: &FakeModelServer) -> Arc<AnthropicClient> {
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("sk-test".into()));
    config.http = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            ..RetryPolicy::default()
        },
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        first_token_timeout: Some(Duration::from_secs(10)),
    };
    Arc::new(AnthropicClient::new(config).unwrap())
}

pub fn permissions(dir: &Path, mode: PermissionMode) -> Arc<Permissions> {
    Arc::new(Permissions::new(
        mode,
        RuleSet::default(),
        Arc::new(Workspace::new(dir)),
    ))
}

/// The agent's configuration with these tools in `mode`, to adjust before building it.
pub fn config(dir: &Path, tools: Vec<Arc<dyn Tool>>, mode: PermissionMode) -> AgentConfig {
    AgentConfig::new(
        "claude-sonnet-4-5",
        ToolPool::new(tools),
        permissions(dir, mode),
    )
}

/// An agent working in `dir` with `config`, talking to `server`.
pub fn agent_with(server: &FakeModelServer, dir: &Path, config: AgentConfig) -> Agent {
    let ctx = ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)));
    Agent::new(
        client(server),
        Arc::new(Catalog::builtin()),
        config,
        ctx,
        "test-session",
    )
}

pub fn agent(
    server: &FakeModelServer,
    dir: &Path,
    tools: Vec<Arc<dyn Tool>>,
    mode: PermissionMode,
) -> Agent {
    agent_with(server, dir, config(dir, tools, mode))
}

/// Runs one prompt and returns every event (the last one is `Finished`) and the agent.
pub async fn run(agent: Agent, prompt: &str) -> (Vec<AgentEvent>, Agent) {
    let mut handle = Session::spawn_one(agent, Message::user_text(prompt));
    let mut events = Vec::new();
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.events.recv(),
    )
    .await
    {
        events.push(event);
    }
    (events, handle.task.await.unwrap())
}

/// The last run's result: its `Finished`, followed only by the session going idle.
pub fn result(events: &[AgentEvent]) -> &RunResult {
    let mut tail = events.iter().rev().skip_while(|e| {
        matches!(
            e.kind,
            EventKind::SessionState(fleet_protocol::SessionState::Idle)
        )
    });
    match &tail.next().unwrap().kind {
        EventKind::Finished(result) => result,
        other => panic!("last event is not Finished: {other:?}"),
    }
}

/// `(tool_use_id, content, is_error)` of every tool result event, in order.
pub fn tool_results(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(r) => {
                Some((r.tool_use_id.clone(), r.content.clone(), r.is_error))
            }
            _ => None,
        })
        .collect()
}

/// A read-only tool whose calls finish only when `parties` of them are running at the same
/// time: if the loop ran them one by one, each would give up waiting and report it.
pub struct Rendezvous {
    pub barrier: Arc<Barrier>,
}

#[derive(Deserialize, JsonSchema)]
pub struct RendezvousInput {
    pub name: String,
}

impl TypedTool for Rendezvous {
    type Input = RendezvousInput;
    const NAME: &'static str = "Rendezvous";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Waits for the other calls of the same reply.".into()
    }

    fn access(&self, _input: &RendezvousInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: RendezvousInput,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match tokio::time::timeout(Duration::from_secs(20), self.barrier.wait()).await {
            Ok(_) => Ok(ToolOutput::text(format!("met:{}", input.name))),
            Err(_) => Err(ToolError::failed(format!("{} waited alone", input.name))),
        }
    }
}

/// A tool that changes things (so it is not read-only) and counts to `times`.
pub struct Counter;

#[derive(Deserialize, JsonSchema)]
pub struct CounterInput {
    pub times: u32,
}

impl TypedTool for Counter {
    type Input = CounterInput;
    const NAME: &'static str = "Counter";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Counts.".into()
    }

    fn access(&self, _input: &CounterInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: CounterInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("counted to {}", input.times)))
    }
}

/// A tool that runs until it is cancelled, and says so on `cancelled`.
pub struct Hang {
    pub started: Arc<tokio::sync::Notify>,
}

#[derive(Deserialize, JsonSchema)]
pub struct HangInput {}

impl TypedTool for Hang {
    type Input = HangInput;
    const NAME: &'static str = "Hang";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Never finishes.".into()
    }

    fn access(&self, _input: &HangInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, _input: HangInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.started.notify_one();
        ctx.cancel.cancelled().await;
        Err(ToolError::Cancelled)
    }
}

pub async fn server(scenario: Scenario) -> FakeModelServer {
    FakeModelServer::start(scenario).await.unwrap()
}
