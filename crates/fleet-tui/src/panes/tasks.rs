//! The session's tasks as the UI knows them from events: background agents, background
//! shells, teammates, with live turn and token counters. Feeds the footer pills and the task
//! panel.
//!
//! Everything comes from the event stream, so what the board says is what a headless reader
//! could have worked out too. Live counters come from the task's own agent (events whose
//! `parent_tool_use_id` is the task's Agent call); the final figures from its notification.

use fleet_protocol::{AgentEvent, EventKind, Role, TaskStatus, TeamEvent};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The task type teammates get on the board (they are not in the task registry).
pub const TEAMMATE: &str = "in_process_teammate";

#[derive(Debug, Clone, PartialEq)]
pub struct TaskEntry {
    pub task_id: String,
    /// The Agent call that started it, when an agent did.
    pub tool_use_id: String,
    /// `local_agent`, `local_bash`, `in_process_teammate`…
    pub task_type: String,
    pub subagent_type: String,
    pub description: String,
    /// `running`, `completed`, `failed`, `killed` (and `pending`, `idle` for a teammate).
    pub status: String,
    pub backgrounded: bool,
    pub turns: u32,
    pub tokens: u64,
    /// The agent running it, once one of its events was seen (a teammate's from the start).
    pub agent_id: Option<String>,
    /// Known once it ended (from its notification).
    pub duration_ms: Option<u64>,
    /// Known once the agent's run finished (its result, or the tree totals).
    pub cost_usd: Option<f64>,
}

impl TaskEntry {
    /// Still running (or about to): what the pills and "x agents running" count.
    pub fn is_live(&self) -> bool {
        matches!(self.status.as_str(), "running" | "pending" | "idle")
    }

    /// What a person calls it: the agent type (`Explore`), else the kind of task.
    pub fn kind_label(&self) -> &str {
        if !self.subagent_type.is_empty() {
            &self.subagent_type
        } else {
            match self.task_type.as_str() {
                "local_bash" => "Bash",
                TEAMMATE => "teammate",
                other => other,
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct TaskBoard {
    tasks: Vec<TaskEntry>,
    /// When each task was first seen, for the running duration.
    started: Vec<(String, Instant)>,
    /// Finished tasks the person has seen in the footer already (the next prompt).
    acknowledged: HashSet<String>,
    /// Tasks whose end was inferred from the running set, not reported: a later report wins.
    inferred: HashSet<String>,
    /// A fixed "now" for tests and replays, instead of the wall clock.
    clock: Option<Instant>,
}

impl TaskBoard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn apply(&mut self, event: &AgentEvent) {
        match &event.kind {
            EventKind::TaskStarted(s) => {
                let entry = self.entry(&s.task_id);
                entry.tool_use_id.clone_from(&s.tool_use_id);
                entry.task_type.clone_from(&s.task_type);
                entry.subagent_type.clone_from(&s.subagent_type);
                entry.description.clone_from(&s.description);
                entry.backgrounded |= s.is_backgrounded;
            }
            EventKind::TaskUpdated {
                task_id, status, ..
            } => self.set_status(task_id, *status),
            EventKind::TaskNotified(n) => {
                self.set_status(&n.task_id, n.status);
                let entry = self.entry(&n.task_id);
                if entry.tool_use_id.is_empty() {
                    entry.tool_use_id.clone_from(&n.tool_use_id);
                }
                entry.tokens = entry.tokens.max(n.usage.total_tokens);
                entry.duration_ms = Some(n.usage.duration_ms);
            }
            EventKind::BackgroundTasksChanged(running) => {
                let ids: HashSet<&str> = running.iter().map(|t| t.task_id.as_str()).collect();
                for t in running {
                    let entry = self.entry(&t.task_id);
                    entry.backgrounded = true;
                    if entry.task_type.is_empty() {
                        entry.task_type.clone_from(&t.task_type);
                        entry.subagent_type.clone_from(&t.subagent_type);
                        entry.description.clone_from(&t.description);
                    }
                }
                // Only registry tasks are in the set: foreground children and teammates are
                // never listed, so their absence says nothing.
                for entry in &mut self.tasks {
                    if entry.backgrounded
                        && entry.task_type != TEAMMATE
                        && entry.is_live()
                        && !ids.contains(entry.task_id.as_str())
                    {
                        entry.status = TaskStatus::Completed.as_str().to_string();
                        self.inferred.insert(entry.task_id.clone());
                    }
                }
            }
            EventKind::Team(team) => self.apply_team(team),
            EventKind::TreeTotals(tree) => self.apply_tree(tree),
            EventKind::Finished(result) => {
                if let Some(tree) = &result.tree {
                    self.apply_tree(tree);
                }
                let cost = result.reported_cost_usd();
                if let (Some(entry), Some(cost)) = (self.owner_of(event), cost) {
                    entry.cost_usd = Some(entry.cost_usd.unwrap_or(0.0) + cost);
                }
            }
            EventKind::MessageCommitted(committed) => {
                if let Some(entry) = self.owner_of(event) {
                    if committed.message.role == Role::Assistant {
                        entry.turns += 1;
                        if let Some(reply) = &committed.reply {
                            entry.tokens += reply.usage.total();
                        }
                    }
                }
            }
            _ => {
                self.owner_of(event);
            }
        }
    }

    /// The task whose own agent emitted `event` (its id is noted on the way).
    fn owner_of(&mut self, event: &AgentEvent) -> Option<&mut TaskEntry> {
        let agent = &event.agent;
        let entry = self
            .tasks
            .iter_mut()
            .find(|t| match &agent.parent_tool_use_id {
                Some(parent) if !t.tool_use_id.is_empty() => *parent == t.tool_use_id,
                _ => t.agent_id.as_deref() == Some(agent.agent_id.as_str()),
            })?;
        if entry.agent_id.is_none() {
            entry.agent_id = Some(agent.agent_id.clone());
        }
        Some(entry)
    }

    fn apply_tree(&mut self, tree: &fleet_protocol::TreeReport) {
        for usage in &tree.agents {
            let found = self
                .tasks
                .iter_mut()
                .find(|t| t.agent_id.as_deref() == Some(usage.agent_id.as_str()));
            if let Some(entry) = found {
                entry.cost_usd = usage.cost_usd;
            }
        }
    }

    fn apply_team(&mut self, event: &TeamEvent) {
        match event {
            TeamEvent::TeammateSpawned {
                name,
                agent_id,
                agent_type,
                ..
            } => {
                let entry = self.entry(agent_id);
                entry.task_type = TEAMMATE.to_string();
                entry.subagent_type.clone_from(agent_type);
                entry.description.clone_from(name);
                entry.agent_id = Some(agent_id.clone());
                entry.backgrounded = true;
                entry.status = "running".to_string();
            }
            TeamEvent::TeammateIdle { agent_id, .. } => {
                if let Some(entry) = self.tasks.iter_mut().find(|t| t.task_id == *agent_id) {
                    entry.status = "idle".to_string();
                }
            }
            TeamEvent::TeammateTerminated { agent_id, .. } => {
                if let Some(entry) = self.tasks.iter_mut().find(|t| t.task_id == *agent_id) {
                    entry.status = TaskStatus::Completed.as_str().to_string();
                }
            }
            _ => {}
        }
    }

    /// A final status never goes back to running; an inferred end gives way to the report.
    fn set_status(&mut self, task_id: &str, status: TaskStatus) {
        let inferred = self.inferred.remove(task_id);
        let entry = self.entry(task_id);
        let current = TaskStatus::parse(&entry.status);
        let terminal = current.is_some_and(TaskStatus::is_terminal);
        if !terminal || (inferred && status.is_terminal()) {
            entry.status = status.as_str().to_string();
        }
    }

    /// The entry for `task_id`, made (running) when first heard of.
    fn entry(&mut self, task_id: &str) -> &mut TaskEntry {
        let index = match self.tasks.iter().position(|t| t.task_id == task_id) {
            Some(i) => i,
            None => {
                let now = self.now();
                self.started.push((task_id.to_string(), now));
                self.tasks.push(TaskEntry {
                    task_id: task_id.to_string(),
                    tool_use_id: String::new(),
                    task_type: String::new(),
                    subagent_type: String::new(),
                    description: String::new(),
                    status: TaskStatus::Running.as_str().to_string(),
                    backgrounded: false,
                    turns: 0,
                    tokens: 0,
                    agent_id: None,
                    duration_ms: None,
                    cost_usd: None,
                });
                self.tasks.len() - 1
            }
        };
        &mut self.tasks[index]
    }

    /// All tasks seen, oldest first.
    pub fn tasks(&self) -> &[TaskEntry] {
        &self.tasks
    }

    pub fn get(&self, task_id: &str) -> Option<&TaskEntry> {
        self.tasks.iter().find(|t| t.task_id == task_id)
    }

    /// The task's cost once its agent's run reported one.
    pub fn cost_usd(&self, task_id: &str) -> Option<f64> {
        self.get(task_id).and_then(|t| t.cost_usd)
    }

    /// How long it ran (final), or has run so far.
    pub fn elapsed(&self, task_id: &str) -> Option<Duration> {
        let entry = self.get(task_id)?;
        if let (Some(ms), false) = (entry.duration_ms, entry.is_live()) {
            return Some(Duration::from_millis(ms));
        }
        let (_, start) = self.started.iter().find(|(id, _)| id == task_id)?;
        Some(self.now().saturating_duration_since(*start))
    }

    /// Tasks still running (foreground subagents included).
    pub fn running(&self) -> usize {
        self.tasks.iter().filter(|t| t.is_live()).count()
    }

    /// Background tasks still running (what quitting would leave behind).
    pub fn running_background(&self) -> usize {
        self.tasks
            .iter()
            .filter(|t| t.is_live() && t.backgrounded)
            .count()
    }

    /// What the footer shows: running background tasks, then finished ones the person has
    /// not had a prompt since.
    pub fn footer(&self) -> Vec<&TaskEntry> {
        let background = || self.tasks.iter().filter(|t| t.backgrounded);
        background()
            .filter(|t| t.is_live())
            .chain(background().filter(|t| !t.is_live() && !self.acknowledged.contains(&t.task_id)))
            .collect()
    }

    /// The person sent the next prompt: finished tasks leave the footer.
    pub fn acknowledge_finished(&mut self) {
        for t in &self.tasks {
            if !t.is_live() {
                self.acknowledged.insert(t.task_id.clone());
            }
        }
    }

    /// Measures time from `now` instead of the wall clock (tests, replays); later starts
    /// are stamped with it too.
    pub fn pin_clock(&mut self, now: Instant) {
        self.clock = Some(now);
    }

    fn now(&self) -> Instant {
        self.clock.unwrap_or_else(Instant::now)
    }
}
