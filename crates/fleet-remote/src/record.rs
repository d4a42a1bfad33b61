//! What the KV buckets and the control stream hold: a task's state, a worker's heartbeat, and
//! the requests a caller sends a running task.

use crate::job::JobKind;
use serde::{Deserialize, Serialize};

/// Where a remote task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Published, no worker has it yet.
    Queued,
    /// A worker runs it.
    Running,
    /// The session ended a turn and waits for input (Ultraplan `needs_input`).
    Idle,
    /// An Ultraplan session submitted a plan and waits for approve / reject / teleport.
    PlanReady,
    /// An approved plan is being carried out on the worker.
    Executing,
    Completed,
    Failed,
    Killed,
    /// Stopped and put away (an Ultraplan session that was teleported, stopped or gave up).
    Archived,
    /// A state this fleet does not know (a newer worker's): the record stays readable, and
    /// the task counts as neither ended nor failed.
    #[serde(other)]
    Unknown,
}

impl TaskState {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Killed | Self::Archived
        )
    }

    /// Every state this fleet knows, as written.
    pub const KNOWN: [TaskState; 9] = [
        Self::Queued,
        Self::Running,
        Self::Idle,
        Self::PlanReady,
        Self::Executing,
        Self::Completed,
        Self::Failed,
        Self::Killed,
        Self::Archived,
    ];

    /// The state named `name`; `None` for a name this fleet does not know.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::KNOWN.into_iter().find(|state| state.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Idle => "idle",
            Self::PlanReady => "plan_ready",
            Self::Executing => "executing",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Killed => "killed",
            Self::Archived => "archived",
            Self::Unknown => "unknown",
        }
    }
}

/// A result branch in the object store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultBranch {
    /// The object holding the bundle (`result-<task>.bundle`).
    pub object: String,
    /// The branch name inside the bundle (`fleet/remote-<id8>`).
    pub branch: String,
    /// The commit the branch points at.
    pub commit: String,
    /// The commit it was made on (the job's snapshot).
    pub base: String,
}

/// Counters of the job's agent.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RemoteUsage {
    pub total_tokens: u64,
    pub tool_uses: u64,
    pub duration_ms: u64,
    /// `None` when the model's price is unknown (never invented).
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

/// One task's state in `fleet_tasks` (key: the task id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub kind: JobKind,
    pub description: String,
    pub state: TaskState,
    /// The worker running it (the last one, after it ends).
    #[serde(default)]
    pub worker: Option<String>,
    /// Which delivery this is (1 on the first).
    #[serde(default)]
    pub attempt: u32,
    /// An Ultraplan session's latest plan.
    #[serde(default)]
    pub plan: Option<String>,
    /// The final text, or what went wrong.
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub branch: Option<ResultBranch>,
    #[serde(default)]
    pub usage: RemoteUsage,
    /// Events published so far for this attempt (a poller compares counts to tell "idle"
    /// from "working").
    #[serde(default)]
    pub events: u64,
    pub queued_ms: u64,
    #[serde(default)]
    pub started_ms: Option<u64>,
    #[serde(default)]
    pub ended_ms: Option<u64>,
    pub updated_ms: u64,
    /// Who asked (host and folder).
    #[serde(default)]
    pub origin: String,
}

impl TaskRecord {
    /// The record of `job` as published, before any worker has it.
    pub fn queued(job: &crate::job::Job) -> Self {
        Self {
            task_id: job.task_id.clone(),
            kind: job.kind,
            description: job.description.clone(),
            state: TaskState::Queued,
            worker: None,
            attempt: 0,
            plan: None,
            result: None,
            branch: None,
            usage: RemoteUsage::default(),
            events: 0,
            queued_ms: job.queued_ms,
            started_ms: None,
            ended_ms: None,
            updated_ms: crate::now_ms(),
            origin: job.origin.clone(),
        }
    }
}

/// One worker's heartbeat in `fleet_workers` (key: the worker id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRecord {
    pub id: String,
    pub host: String,
    pub pid: u32,
    pub slots: u32,
    /// The task ids it runs now.
    #[serde(default)]
    pub running: Vec<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    pub started_ms: u64,
    pub heartbeat_ms: u64,
}

/// A request to a running task, on `fleet.control.<task>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Control {
    /// Stop the job and kill its processes (TaskStop, `fleet ultraplan stop`).
    Stop,
    /// Carry out the submitted plan on the worker and return a branch.
    Approve,
    /// Revise the plan: the feedback goes to the session as the answer to its ExitPlanMode.
    Reject { feedback: String },
    /// Hand the plan back to the caller and archive the session.
    Teleport,
    /// A message to a session waiting for input.
    Reply { text: String },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_record_in_a_state_this_fleet_does_not_know_stays_readable_and_not_ended() {
        let text = r#"{"task_id": "t1", "kind": "agent", "description": "d",
                       "state": "reviewing", "queued_ms": 1, "updated_ms": 2}"#;
        let record: TaskRecord = serde_json::from_str(text).unwrap();
        assert_eq!(record.state, TaskState::Unknown);
        assert!(!record.state.is_terminal());
        for state in TaskState::KNOWN {
            let written = serde_json::to_string(&state).unwrap();
            assert_eq!(written, format!("\"{}\"", state.as_str()));
            assert_eq!(serde_json::from_str::<TaskState>(&written).unwrap(), state);
            assert_eq!(TaskState::from_name(state.as_str()), Some(state));
        }
        assert_eq!(TaskState::from_name("reviewing"), None);
    }
}
