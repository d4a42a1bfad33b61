//! The `system` lines about background tasks: started, updated, notified, and the set still
//! running. Shapes follow Claude Code's (`task_started`, `task_updated`, `task_notification`,
//! `background_tasks_changed`) minus its `run_id`, which fleet has no counterpart for.
//!
//! A task line emitted by a subagent (a helper that started helpers of its own) ends with that
//! subagent's `parent_tool_use_id` and `agent_id`, like every other line it causes.

use super::line::Line;
use fleet_protocol::{
    AgentRef, BackgroundTask, TaskNotification, TaskStarted, TaskStatus, TaskUsage,
};
use serde_json::{json, Map, Value};

pub(super) fn started(agent: &AgentRef, task: &TaskStarted, session_id: &str) -> Value {
    Line::new(json!({
        "type": "system",
        "subtype": "task_started",
        "task_id": task.task_id,
        "tool_use_id": task.tool_use_id,
        "description": task.description,
        "subagent_type": task.subagent_type,
        "is_backgrounded": task.is_backgrounded,
        "spawn_depth": task.spawn_depth,
        "task_type": task.task_type,
        "prompt": task.prompt,
    }))
    .stamped(session_id)
    .subagent(agent)
    .into_value()
}

/// Only what changed goes in `patch`: `end_time` appears once the task is over.
pub(super) fn updated(
    agent: &AgentRef,
    task_id: &str,
    status: TaskStatus,
    end_time_ms: Option<u64>,
    session_id: &str,
) -> Value {
    let mut patch = Map::new();
    patch.insert("status".into(), json!(status));
    if let Some(end) = end_time_ms {
        patch.insert("end_time".into(), json!(end));
    }
    Line::new(json!({
        "type": "system",
        "subtype": "task_updated",
        "task_id": task_id,
        "patch": patch,
    }))
    .stamped(session_id)
    .subagent(agent)
    .into_value()
}

/// A completed task's `summary` is its report (the agent's final text), as
/// `summary_is_report` says; a failed or killed one has no report, so the one-line account of
/// what happened stands in. A killed task is `stopped` here, as in Claude Code (the SDKs' type
/// for this line knows only completed, failed and stopped), while `task_updated` keeps the
/// raw `killed`.
pub(super) fn notified(agent: &AgentRef, n: &TaskNotification, session_id: &str) -> Value {
    let is_report = n.status == TaskStatus::Completed;
    let summary = if is_report { &n.result } else { &n.summary };
    let status = match n.status {
        TaskStatus::Killed => "stopped",
        other => other.as_str(),
    };
    Line::new(json!({
        "type": "system",
        "subtype": "task_notification",
        "task_id": n.task_id,
        "tool_use_id": n.tool_use_id,
        "status": status,
        "output_file": n.output_file,
        "summary": summary,
        "summary_is_report": is_report,
        "usage": task_usage(&n.usage),
    }))
    .stamped(session_id)
    .subagent(agent)
    .into_value()
}

/// A finished task's totals; `total_tokens` is `null` when no reply of the task reported
/// usage, and the replies that did not are counted when there are any.
fn task_usage(usage: &TaskUsage) -> Value {
    let mut value = json!({
        "total_tokens": (!usage.is_unreported()).then_some(usage.total_tokens),
        "tool_uses": usage.tool_uses,
        "duration_ms": usage.duration_ms,
    });
    if let (true, Some(map)) = (usage.unreported_replies > 0, value.as_object_mut()) {
        map.insert(
            "usage_unreported_replies".into(),
            usage.unreported_replies.into(),
        );
    }
    value
}

/// The whole set still running, so a reader never has to replay earlier lines to know it.
pub(super) fn background_changed(
    agent: &AgentRef,
    tasks: &[BackgroundTask],
    session_id: &str,
) -> Value {
    let tasks: Vec<Value> = tasks
        .iter()
        .map(|t| {
            json!({
                "task_id": t.task_id,
                "task_type": t.task_type,
                "subagent_type": t.subagent_type,
                "description": t.description,
            })
        })
        .collect();
    Line::new(json!({
        "type": "system",
        "subtype": "background_tasks_changed",
        "tasks": tasks,
    }))
    .stamped(session_id)
    .subagent(agent)
    .into_value()
}
