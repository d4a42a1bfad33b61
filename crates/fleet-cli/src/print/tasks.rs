//! The `system` lines about tasks: started, updated, notified, and the set still running, in
//! Claude Code's shapes (`task_started`, `task_updated`, `task_notification`,
//! `background_tasks_changed`), each with the `run_id` of the task's run.
//!
//! A task line emitted by a subagent (a helper that started helpers of its own) ends with that
//! subagent's `parent_tool_use_id` and `agent_id`, like every other line it causes.

use super::line::{new_uuid, subagent_keys};
use fleet_protocol::wire::{
    BackgroundTasksChangedLine, RunningTask, TaskNotificationLine, TaskPatch, TaskStartedLine,
    TaskUpdatedLine, TaskUsageLine,
};
use fleet_protocol::{
    AgentRef, BackgroundTask, TaskNotification, TaskStarted, TaskStatus, TaskUsage,
};
use std::collections::HashMap;

/// The `run_id` of each task's current run. fleet's events carry none: a run is one
/// `task_started` (a continued task starts again), so the printer names each run when it is
/// first mentioned (`background_tasks_changed` can come just before `task_started`), and a
/// task first seen later (started before this printer) gets one then.
#[derive(Debug, Default)]
pub(super) struct RunIds(HashMap<String, (String, bool)>);

impl RunIds {
    /// The run `task_started` begins: the one already named for it if its start was not
    /// printed yet, else a new one.
    pub(super) fn start(&mut self, task_id: &str) -> String {
        let entry = self
            .0
            .entry(task_id.to_string())
            .or_insert_with(|| (new_run_id(), false));
        if entry.1 {
            entry.0 = new_run_id();
        }
        entry.1 = true;
        entry.0.clone()
    }

    /// The current run of `task_id`.
    pub(super) fn of(&mut self, task_id: &str) -> String {
        self.0
            .entry(task_id.to_string())
            .or_insert_with(|| (new_run_id(), false))
            .0
            .clone()
    }
}

/// A short id, unique in the session: `run-` and eight hex digits of a fresh uuid.
fn new_run_id() -> String {
    let uuid = new_uuid();
    format!("run-{}", uuid.get(..8).unwrap_or(&uuid))
}

pub(super) fn started(
    agent: &AgentRef,
    task: &TaskStarted,
    run_id: String,
    session_id: &str,
) -> TaskStartedLine {
    TaskStartedLine {
        task_id: task.task_id.clone(),
        run_id,
        tool_use_id: task.tool_use_id.clone(),
        description: task.description.clone(),
        subagent_type: task.subagent_type.clone(),
        is_backgrounded: task.is_backgrounded,
        spawn_depth: task.spawn_depth,
        task_type: task.task_type.clone(),
        prompt: task.prompt.clone(),
        uuid: new_uuid(),
        session_id: session_id.to_string(),
        subagent: subagent_keys(agent),
    }
}

/// Only what changed goes in `patch`: `end_time` appears once the task is over.
pub(super) fn updated(
    agent: &AgentRef,
    task_id: &str,
    run_id: String,
    status: TaskStatus,
    end_time_ms: Option<u64>,
    session_id: &str,
) -> TaskUpdatedLine {
    TaskUpdatedLine {
        task_id: task_id.to_string(),
        run_id,
        patch: TaskPatch {
            status,
            end_time: end_time_ms,
        },
        uuid: new_uuid(),
        session_id: session_id.to_string(),
        subagent: subagent_keys(agent),
    }
}

/// A completed task's `summary` is its report (the agent's final text), as
/// `summary_is_report` says; a failed or killed one has no report, so the one-line account of
/// what happened stands in. A killed task is `stopped` here, as in Claude Code (the SDKs' type
/// for this line knows only completed, failed and stopped), while `task_updated` keeps the
/// raw `killed`.
pub(super) fn notified(
    agent: &AgentRef,
    n: &TaskNotification,
    run_id: String,
    session_id: &str,
) -> TaskNotificationLine {
    let is_report = n.status == TaskStatus::Completed;
    let summary = if is_report { &n.result } else { &n.summary };
    TaskNotificationLine {
        task_id: n.task_id.clone(),
        run_id,
        tool_use_id: n.tool_use_id.clone(),
        status: n.status.into(),
        output_file: n.output_file.clone(),
        summary: summary.clone(),
        summary_is_report: Some(is_report),
        usage: task_usage(&n.usage),
        uuid: new_uuid(),
        session_id: session_id.to_string(),
        subagent: subagent_keys(agent),
    }
}

/// A finished task's totals; `total_tokens` is `null` when no reply of the task reported
/// usage, and the replies that did not are counted when there are any.
fn task_usage(usage: &TaskUsage) -> TaskUsageLine {
    TaskUsageLine {
        total_tokens: (!usage.is_unreported()).then_some(usage.total_tokens),
        tool_uses: usage.tool_uses,
        duration_ms: usage.duration_ms,
        usage_unreported_replies: (usage.unreported_replies > 0)
            .then_some(usage.unreported_replies),
    }
}

/// The whole set still running, so a reader never has to replay earlier lines to know it.
pub(super) fn background_changed(
    agent: &AgentRef,
    tasks: &[BackgroundTask],
    runs: &mut RunIds,
    session_id: &str,
) -> BackgroundTasksChangedLine {
    BackgroundTasksChangedLine {
        tasks: tasks
            .iter()
            .map(|t| RunningTask {
                task_id: t.task_id.clone(),
                run_id: runs.of(&t.task_id),
                task_type: t.task_type.clone(),
                subagent_type: t.subagent_type.clone(),
                description: t.description.clone(),
            })
            .collect(),
        uuid: new_uuid(),
        session_id: session_id.to_string(),
        subagent: subagent_keys(agent),
    }
}
