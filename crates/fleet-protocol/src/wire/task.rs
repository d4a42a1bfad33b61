//! The `system` lines about tasks (subagents, foreground and background): started, updated,
//! notified, and the set still running. Each carries `run_id`, which names one run of a task
//! (a task continued later runs again under a new id), as Claude Code's do.

use super::SubagentKeys;
use crate::TaskStatus;
use serde::{Deserialize, Serialize};

/// `system/task_started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStartedLine {
    pub task_id: String,
    #[serde(default)]
    pub run_id: String,
    pub tool_use_id: String,
    pub description: String,
    pub subagent_type: String,
    pub is_backgrounded: bool,
    pub spawn_depth: u32,
    pub task_type: String,
    pub prompt: String,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// `system/task_updated`: only what changed is in `patch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskUpdatedLine {
    pub task_id: String,
    #[serde(default)]
    pub run_id: String,
    pub patch: TaskPatch,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskPatch {
    pub status: TaskStatus,
    /// Milliseconds since the epoch; there once the task is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<u64>,
}

/// `system/task_notification`: a task is over. A completed task's `summary` is its report
/// (`summary_is_report`); a failed or stopped one's is the account of what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNotificationLine {
    pub task_id: String,
    #[serde(default)]
    pub run_id: String,
    pub tool_use_id: String,
    pub status: NotificationStatus,
    pub output_file: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_is_report: Option<bool>,
    pub usage: TaskUsageLine,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

/// How a task ended, as `task_notification` says it: a killed task is `stopped`, as in
/// Claude Code (the SDKs know only these three).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationStatus {
    Completed,
    Failed,
    Stopped,
    #[serde(untagged)]
    Other(String),
}

impl From<TaskStatus> for NotificationStatus {
    fn from(status: TaskStatus) -> Self {
        match status {
            TaskStatus::Completed => Self::Completed,
            TaskStatus::Failed => Self::Failed,
            TaskStatus::Killed => Self::Stopped,
            other => Self::Other(other.as_str().to_string()),
        }
    }
}

/// A finished task's totals; `total_tokens` is `null` when no reply of the task reported
/// usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskUsageLine {
    pub total_tokens: Option<u64>,
    pub tool_uses: u64,
    pub duration_ms: u64,
    /// How many of the task's replies reported no usage, when any did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_unreported_replies: Option<u64>,
}

/// `system/background_tasks_changed`: the whole set still running, so a reader never has to
/// replay earlier lines to know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundTasksChangedLine {
    pub tasks: Vec<RunningTask>,
    #[serde(default)]
    pub uuid: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(flatten)]
    pub subagent: SubagentKeys,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningTask {
    pub task_id: String,
    #[serde(default)]
    pub run_id: String,
    pub task_type: String,
    pub subagent_type: String,
    pub description: String,
}
