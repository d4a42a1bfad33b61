//! TaskStop and TaskOutput: what an agent can do about the background tasks it started.

use super::{TaskError, TaskKind, TaskRegistry, TaskSnapshot};
use crate::context::AgentContext;
use fleet_protocol::{KilledBy, TaskStatus};
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How long TaskOutput waits by default, and at most.
const DEFAULT_WAIT_MS: u64 = 30_000;
const MAX_WAIT_MS: u64 = 600_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopInput {
    /// The id of the background task to stop (the agentId the Agent tool returned), or the
    /// agent's name.
    pub task_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputInput {
    /// The id of the background task (the agentId the Agent tool returned), or the agent's
    /// name.
    pub task_id: String,
    /// Wait for the task to finish before answering (default true).
    #[serde(default)]
    pub block: Option<bool>,
    /// How long to wait, in milliseconds (default 30000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// The calling agent's id: tasks belong to the agent that started them.
fn caller_id() -> String {
    AgentContext::current()
        .map(|c| c.agent_id().to_string())
        .unwrap_or_else(|| "main".to_string())
}

/// The task `task_id` if the caller started it: an agent may not touch another agent's
/// tasks, so a subagent cannot stop its siblings.
fn owned(registry: &TaskRegistry, task_id: &str) -> Result<TaskSnapshot, ToolError> {
    let snapshot = registry.get(task_id).map_err(task_error)?;
    if snapshot.owner_id == caller_id() {
        Ok(snapshot)
    } else {
        Err(ToolError::failed(format!(
            "Task {} was started by another agent; you can only stop or read tasks you started.",
            snapshot.task_id
        )))
    }
}

fn task_error(err: TaskError) -> ToolError {
    ToolError::failed(err.to_string())
}

/// Stops a teammate by name or `name@team`, returning what to report; `None` when no running
/// teammate has that name. Teams live above the task registry, so they plug in here.
pub type StopTeammate = Arc<dyn Fn(&str) -> Option<serde_json::Value> + Send + Sync>;

pub struct TaskStopTool {
    registry: Arc<TaskRegistry>,
    teammates: Option<StopTeammate>,
}

impl TaskStopTool {
    pub fn new(registry: Arc<TaskRegistry>) -> Self {
        Self {
            registry,
            teammates: None,
        }
    }

    /// Lets the lead stop a teammate by name too.
    pub fn with_teammates(mut self, stop: StopTeammate) -> Self {
        self.teammates = Some(stop);
        self
    }
}

impl TypedTool for TaskStopTool {
    type Input = StopInput;
    const NAME: &'static str = "TaskStop";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Stops a running background task (a background agent you started), together with \
         every tool it is running. Use it when the task is no longer needed or has gone wrong; \
         its notification will report it as killed."
            .into()
    }

    fn access(&self, _input: &StopInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: StopInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if self.registry.get(&input.task_id).is_err() && caller_id() == "main" {
            if let Some(stopped) = self
                .teammates
                .as_ref()
                .and_then(|stop| stop(input.task_id.trim()))
            {
                let text = stopped["message"].as_str().unwrap_or_default().to_string();
                return Ok(ToolOutput::text(text).with_structured(stopped));
            }
        }
        let task = owned(&self.registry, &input.task_id)?;
        let stopped = self
            .registry
            .stop(&task.task_id, KilledBy::Parent)
            .await
            .map_err(task_error)?;
        Ok(ToolOutput::text(format!(
            "Stopped task {} ({}).",
            stopped.task_id, stopped.description
        ))
        .with_structured(json!({
            "task_id": stopped.task_id,
            "status": stopped.status.as_str(),
            "description": stopped.description,
        })))
    }
}

pub struct TaskOutputTool {
    registry: Arc<TaskRegistry>,
}

impl TaskOutputTool {
    pub fn new(registry: Arc<TaskRegistry>) -> Self {
        Self { registry }
    }
}

impl TypedTool for TaskOutputTool {
    type Input = OutputInput;
    const NAME: &'static str = "TaskOutput";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Reads the status and output of a background task you started. By default waits (up \
         to `timeout` ms) for it to finish; pass block=false to look without waiting. You do \
         not need this to learn that a task finished: a <task-notification> arrives on its own."
            .into()
    }

    fn access(&self, _input: &OutputInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: OutputInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let current = owned(&self.registry, &input.task_id)?;
        let snapshot = if input.block.unwrap_or(true) && !current.status.is_terminal() {
            let wait =
                Duration::from_millis(input.timeout.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS));
            tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                done = self.registry.wait(&current.task_id, wait) => done.map_err(task_error)?,
            }
        } else {
            current
        };
        let live = match (snapshot.kind, snapshot.status.is_terminal()) {
            (TaskKind::Shell, false) => super::shells::output_tail(&snapshot.output_file).await,
            _ => None,
        };
        Ok(render(&snapshot, live.as_deref()))
    }
}

/// `live`: the latest output of a shell task still running.
fn render(s: &TaskSnapshot, live: Option<&str>) -> ToolOutput {
    let mut text = format!("Task {} ({}): {}\n", s.task_id, s.description, s.status);
    match (&s.result, s.status) {
        (Some(result), _) => {
            text.push('\n');
            text.push_str(result);
        }
        (None, TaskStatus::Pending | TaskStatus::Running) if s.kind == TaskKind::Shell => {
            text.push_str("Still running. Latest output:\n");
            text.push_str(live.unwrap_or("(no output yet)"));
        }
        (None, TaskStatus::Pending | TaskStatus::Running) => {
            text.push_str(&format!(
                "Still running: {} turns, {} tool uses, {} tokens so far{}.",
                s.progress.turns,
                s.progress.tool_uses,
                s.progress.total_tokens,
                s.progress
                    .last_activity
                    .as_deref()
                    .map(|a| format!("; last: {a}"))
                    .unwrap_or_default()
            ));
        }
        (None, _) => {}
    }
    ToolOutput::text(text).with_structured(json!({
        "task_id": s.task_id,
        "status": s.status.as_str(),
        "description": s.description,
        "task_type": s.kind.as_str(),
        "subagent_type": s.subagent_type,
        "result": s.result,
        "progress": s.progress,
        "usage": s.usage,
        "output_file": s.output_file,
    }))
}
