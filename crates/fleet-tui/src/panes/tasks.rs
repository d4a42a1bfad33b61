//! The session's tasks as the UI knows them from events: background agents, background
//! shells, teammates, with live turn and token counters. Feeds the footer pills and the task
//! panel.

use fleet_protocol::AgentEvent;

#[derive(Debug, Clone, PartialEq)]
pub struct TaskEntry {
    pub task_id: String,
    /// The Agent call that started it, when an agent did.
    pub tool_use_id: String,
    /// `local_agent`, `local_bash`, `in_process_teammate`…
    pub task_type: String,
    pub subagent_type: String,
    pub description: String,
    /// `running`, `completed`, `failed`, `killed`.
    pub status: String,
    pub backgrounded: bool,
    pub turns: u32,
    pub tokens: u64,
}

#[derive(Debug, Default)]
pub struct TaskBoard {
    tasks: Vec<TaskEntry>,
}

impl TaskBoard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn apply(&mut self, event: &AgentEvent) {
        let _ = event;
    }

    /// All tasks seen, oldest first.
    pub fn tasks(&self) -> &[TaskEntry] {
        &self.tasks
    }

    /// Tasks still running (foreground subagents included).
    pub fn running(&self) -> usize {
        self.tasks.iter().filter(|t| t.status == "running").count()
    }

    /// Background tasks still running (what quitting would leave behind).
    pub fn running_background(&self) -> usize {
        self.tasks
            .iter()
            .filter(|t| t.status == "running" && t.backgrounded)
            .count()
    }

    /// Finished tasks stop showing as pills once the person moves on.
    pub fn acknowledge_finished(&mut self) {}
}
