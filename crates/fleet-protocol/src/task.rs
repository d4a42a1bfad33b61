//! Background tasks: their states, the legal moves between them, and what a task reports.
//!
//! A task is anything that runs apart from the agent that started it and reports back later
//! (today: a background subagent). Its state only moves forward — pending → running → one of
//! completed, failed or killed — so a late "completed" can never resurrect a killed task.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    Running,
    Completed,
    Failed,
    Killed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "killed" => Self::Killed,
            _ => return None,
        })
    }

    /// Completed, failed and killed are final.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Killed)
    }

    /// Whether a task in this state may move to `next`. A pending task may be killed before
    /// it ever runs; nothing leaves a terminal state.
    pub fn can_become(self, next: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, next),
            (Pending, Running)
                | (Pending, Killed)
                | (Pending, Failed)
                | (Running, Completed)
                | (Running, Failed)
                | (Running, Killed)
        )
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A move the state machine does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task {task_id} cannot go from {from} to {to}")]
pub struct IllegalTransition {
    pub task_id: String,
    pub from: TaskStatus,
    pub to: TaskStatus,
}

/// Who stopped a killed task, for the statistics in the final result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KilledBy {
    /// The agent that owns the task (TaskStop), or its ending.
    Parent,
    /// The person (Ctrl-C).
    User,
    /// fleet itself (shutting down).
    System,
}

/// Progress of a running agent task, as the task list shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskProgress {
    pub turns: u32,
    pub tool_uses: u64,
    pub total_tokens: u64,
    /// What the agent did last, in a few words (`Read src/lib.rs`, `thinking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
}

/// What a task announces when it starts (`system`/`task_started` in stream-json).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStarted {
    pub task_id: String,
    /// The Agent tool call that launched it.
    pub tool_use_id: String,
    pub description: String,
    pub subagent_type: String,
    pub prompt: String,
    pub model: String,
    pub is_backgrounded: bool,
    pub spawn_depth: u32,
    /// `local_agent` for a background subagent.
    pub task_type: String,
    pub output_file: String,
}

/// One entry of the list of tasks still running (`background_tasks_changed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundTask {
    pub task_id: String,
    pub task_type: String,
    pub subagent_type: String,
    pub description: String,
}
