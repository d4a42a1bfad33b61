//! The task registry: every background task of a session, its state, and the notification
//! it sends its owner when it ends.
//!
//! State changes go through [`TaskStatus::can_become`], so however the ending races (a stop
//! arriving as the agent completes), a task ends exactly once and its owner hears exactly
//! once. Waiting (TaskOutput with `block`, the session settling) sleeps on a notifier instead
//! of polling.

use crate::inbox::Inbox;
use crate::ledger::Ledger;
use crate::sink::EventSink;
use fleet_protocol::{
    BackgroundTask, EventKind, IllegalTransition, KilledBy, Message, TaskNotification,
    TaskProgress, TaskStarted, TaskStatus, TaskUsage,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Why a task operation could not be done.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TaskError {
    #[error("No task with id {id:?}. {known}")]
    Unknown { id: String, known: String },
    #[error("Task {id} is not running: it already {status}.")]
    NotRunning { id: String, status: TaskStatus },
    #[error(transparent)]
    Transition(#[from] IllegalTransition),
}

/// What registering a task needs to know.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub task_id: String,
    /// The agent's `name`, which the task tools accept in place of the id.
    pub name: Option<String>,
    pub owner_id: String,
    pub owner_inbox: Arc<Inbox>,
    pub tool_use_id: String,
    pub description: String,
    pub subagent_type: String,
    pub prompt: String,
    pub model: String,
    pub depth: u32,
    pub output_file: String,
    pub cancel: CancellationToken,
}

/// What runs in a task: the kinds Claude Code's task events name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskKind {
    /// A background subagent (`local_agent`).
    #[default]
    Agent,
    /// A Bash command the user moved to the background (`local_bash`).
    Shell,
    /// An agent running on a remote worker (`remote_agent`).
    Remote,
}

impl TaskKind {
    /// The `task_type` task events carry.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Agent => "local_agent",
            TaskKind::Shell => "local_bash",
            TaskKind::Remote => "remote_agent",
        }
    }
}

/// A copy of one task's state, for TaskOutput and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSnapshot {
    pub task_id: String,
    pub kind: TaskKind,
    pub owner_id: String,
    pub description: String,
    pub subagent_type: String,
    pub status: TaskStatus,
    pub progress: TaskProgress,
    pub result: Option<String>,
    pub usage: TaskUsage,
    pub output_file: String,
    pub elapsed_ms: u64,
}

#[derive(Debug)]
struct Entry {
    seq: u64,
    kind: TaskKind,
    task: NewTask,
    status: TaskStatus,
    progress: TaskProgress,
    result: Option<String>,
    usage: TaskUsage,
    started: Instant,
    /// Whether the owner's inbox has the notification: until then the task still counts as
    /// outstanding, so a waiting owner cannot conclude there is nothing more to come.
    delivered: bool,
    /// The kept worktree of an isolated agent, as JSON, for its notification.
    worktree: Option<String>,
}

#[derive(Debug)]
pub struct TaskRegistry {
    entries: Mutex<HashMap<String, Entry>>,
    next_seq: Mutex<u64>,
    changed: Notify,
    /// Where task events go (the session's stream).
    sink: EventSink,
    ledger: Arc<Ledger>,
}

impl TaskRegistry {
    pub fn new(sink: EventSink, ledger: Arc<Ledger>) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            next_seq: Mutex::new(0),
            changed: Notify::new(),
            sink,
            ledger,
        }
    }

    /// Registers a pending task and announces it.
    pub async fn register(&self, task: NewTask) {
        self.register_kind(task, TaskKind::Agent).await;
    }

    /// Registers a pending task of `kind` and announces it.
    pub async fn register_kind(&self, task: NewTask, kind: TaskKind) {
        let started = TaskStarted {
            task_id: task.task_id.clone(),
            tool_use_id: task.tool_use_id.clone(),
            description: task.description.clone(),
            subagent_type: task.subagent_type.clone(),
            prompt: task.prompt.clone(),
            model: task.model.clone(),
            is_backgrounded: true,
            spawn_depth: task.depth,
            task_type: kind.as_str().into(),
            output_file: task.output_file.clone(),
        };
        let seq = {
            let mut next = self.next_seq.lock().unwrap_or_else(|e| e.into_inner());
            *next += 1;
            *next
        };
        self.lock().insert(
            task.task_id.clone(),
            Entry {
                seq,
                kind,
                task,
                status: TaskStatus::Pending,
                progress: TaskProgress::default(),
                result: None,
                usage: TaskUsage::default(),
                started: Instant::now(),
                delivered: false,
                worktree: None,
            },
        );
        self.sink
            .emit(EventKind::BackgroundTasksChanged(self.running()))
            .await;
        self.sink.emit(EventKind::TaskStarted(started)).await;
    }

    /// Records the worktree an isolated agent left, for its notification.
    pub fn set_worktree(&self, task_id: &str, worktree: String) {
        if let Some(entry) = self.lock().get_mut(task_id) {
            entry.worktree = Some(worktree);
        }
    }

    pub fn set_running(&self, task_id: &str) -> Result<(), TaskError> {
        let mut entries = self.lock();
        let entry = entries
            .get_mut(task_id)
            .ok_or_else(|| unknown(task_id, &[]))?;
        move_to(entry, TaskStatus::Running)
    }

    /// Updates a running task's progress.
    pub fn update_progress(&self, task_id: &str, update: impl FnOnce(&mut TaskProgress)) {
        if let Some(entry) = self.lock().get_mut(task_id) {
            update(&mut entry.progress);
        }
    }

    /// Ends a task: records the outcome, queues the notification for its owner and announces
    /// the change. Fails (and changes nothing) if the task already ended, e.g. was stopped.
    pub async fn finish(
        &self,
        task_id: &str,
        status: TaskStatus,
        result: String,
        usage: TaskUsage,
        killed_by: Option<KilledBy>,
    ) -> Result<(), TaskError> {
        let (notification, inbox) = {
            let mut entries = self.lock();
            let entry = entries
                .get_mut(task_id)
                .ok_or_else(|| unknown(task_id, &[]))?;
            move_to(entry, status)?;
            entry.usage = TaskUsage {
                duration_ms: millis(entry.started.elapsed()),
                ..usage
            };
            entry.result = Some(result.clone());
            let notification = TaskNotification {
                task_id: task_id.to_string(),
                tool_use_id: entry.task.tool_use_id.clone(),
                status,
                summary: match entry.kind {
                    TaskKind::Agent | TaskKind::Remote => {
                        summary(&entry.task.description, status, &result)
                    }
                    TaskKind::Shell => shell_summary(&entry.task.description, status),
                },
                result,
                usage: entry.usage,
                output_file: entry.task.output_file.clone(),
                worktree: entry.worktree.clone(),
            };
            (notification, entry.task.owner_inbox.clone())
        };
        self.ledger.finish(task_id, status, killed_by);
        self.changed.notify_waiters();
        // The stream says the task ended before the owner can react to it.
        let end_time_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(millis)
            .ok();
        self.sink
            .emit(EventKind::TaskUpdated {
                task_id: task_id.to_string(),
                status,
                end_time_ms,
            })
            .await;
        self.sink
            .emit(EventKind::TaskNotified(notification.clone()))
            .await;
        self.sink
            .emit(EventKind::BackgroundTasksChanged(self.running()))
            .await;
        {
            let mut entries = self.lock();
            inbox.push(Message::user_text(notification.render()));
            if let Some(entry) = entries.get_mut(task_id) {
                entry.delivered = true;
            }
        }
        Ok(())
    }

    /// Stops a pending or running task: its cancellation token fires (its tools die with it)
    /// and it ends as killed.
    pub async fn stop(&self, task_id: &str, by: KilledBy) -> Result<TaskSnapshot, TaskError> {
        let cancel = {
            let entries = self.lock();
            let Some(entry) = entries.get(task_id) else {
                let known: Vec<&str> = entries.keys().map(String::as_str).collect();
                return Err(unknown(task_id, &known));
            };
            if entry.status.is_terminal() {
                return Err(TaskError::NotRunning {
                    id: task_id.to_string(),
                    status: entry.status,
                });
            }
            entry.task.cancel.clone()
        };
        cancel.cancel();
        let (usage, result) = {
            let entries = self.lock();
            let entry = entries.get(task_id);
            let progress = entry.map(|e| e.progress.clone()).unwrap_or_default();
            (
                TaskUsage {
                    total_tokens: progress.total_tokens,
                    tool_uses: progress.tool_uses,
                    duration_ms: 0,
                    unreported_replies: 0,
                },
                "The task was stopped before it finished.".to_string(),
            )
        };
        self.finish(task_id, TaskStatus::Killed, result, usage, Some(by))
            .await?;
        self.snapshot(task_id).ok_or_else(|| unknown(task_id, &[]))
    }

    /// Stops every task still pending or running; returns how many.
    pub async fn stop_all(&self, by: KilledBy) -> usize {
        self.stop_where(by, |_| true).await
    }

    /// Stops the tasks `owner_id` started that are still running (its own run is ending).
    pub async fn stop_owned_by(&self, owner_id: &str, by: KilledBy) -> usize {
        self.stop_where(by, |task| task.owner_id == owner_id).await
    }

    async fn stop_where(&self, by: KilledBy, select: impl Fn(&NewTask) -> bool) -> usize {
        let ids: Vec<String> = self
            .lock()
            .values()
            .filter(|e| !e.status.is_terminal() && select(&e.task))
            .map(|e| e.task.task_id.clone())
            .collect();
        let mut stopped = 0;
        for id in ids {
            if self.stop(&id, by).await.is_ok() {
                stopped += 1;
            }
        }
        stopped
    }

    /// The state of the task with this id (or agent name), or an error listing the tasks
    /// there are.
    pub fn get(&self, task_id: &str) -> Result<TaskSnapshot, TaskError> {
        let entries = self.lock();
        let named = || {
            entries
                .values()
                .filter(|e| e.task.name.as_deref() == Some(task_id))
                .max_by_key(|e| e.seq)
        };
        match entries.get(task_id).or_else(named) {
            Some(entry) => Ok(snapshot(entry)),
            None => {
                let known: Vec<&str> = entries.keys().map(String::as_str).collect();
                Err(unknown(task_id, &known))
            }
        }
    }

    pub fn snapshot(&self, task_id: &str) -> Option<TaskSnapshot> {
        self.lock().get(task_id).map(snapshot)
    }

    /// Waits until the task has ended or `timeout` passed, and returns its state then.
    pub async fn wait(&self, task_id: &str, timeout: Duration) -> Result<TaskSnapshot, TaskError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let current = self.get(task_id)?;
            if current.status.is_terminal() {
                return Ok(current);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Ok(current);
            }
        }
    }

    /// Tasks of `owner_id` whose notification has not reached its inbox yet (running, or
    /// ending right now).
    pub fn outstanding(&self, owner_id: &str) -> usize {
        self.lock()
            .values()
            .filter(|e| e.task.owner_id == owner_id && !e.delivered)
            .count()
    }

    /// The tasks still pending or running, oldest first.
    pub fn running(&self) -> Vec<BackgroundTask> {
        let entries = self.lock();
        let mut live: Vec<&Entry> = entries
            .values()
            .filter(|e| !e.status.is_terminal())
            .collect();
        live.sort_by_key(|e| e.seq);
        live.into_iter()
            .map(|e| BackgroundTask {
                task_id: e.task.task_id.clone(),
                task_type: e.kind.as_str().into(),
                subagent_type: e.task.subagent_type.clone(),
                description: e.task.description.clone(),
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn move_to(entry: &mut Entry, next: TaskStatus) -> Result<(), TaskError> {
    if !entry.status.can_become(next) {
        if entry.status.is_terminal() {
            return Err(TaskError::NotRunning {
                id: entry.task.task_id.clone(),
                status: entry.status,
            });
        }
        return Err(IllegalTransition {
            task_id: entry.task.task_id.clone(),
            from: entry.status,
            to: next,
        }
        .into());
    }
    entry.status = next;
    Ok(())
}

fn snapshot(entry: &Entry) -> TaskSnapshot {
    TaskSnapshot {
        task_id: entry.task.task_id.clone(),
        kind: entry.kind,
        owner_id: entry.task.owner_id.clone(),
        description: entry.task.description.clone(),
        subagent_type: entry.task.subagent_type.clone(),
        status: entry.status,
        progress: entry.progress.clone(),
        result: entry.result.clone(),
        usage: entry.usage,
        output_file: entry.task.output_file.clone(),
        elapsed_ms: millis(entry.started.elapsed()),
    }
}

fn unknown(id: &str, known: &[&str]) -> TaskError {
    let known = if known.is_empty() {
        "There are no tasks.".to_string()
    } else {
        let mut known = known.to_vec();
        known.sort_unstable();
        format!("Known tasks: {}.", known.join(", "))
    };
    TaskError::Unknown {
        id: id.to_string(),
        known,
    }
}

/// One line for people (and the model) on how the task ended.
pub(crate) fn summary(description: &str, status: TaskStatus, result: &str) -> String {
    match status {
        TaskStatus::Completed => format!("Agent \"{description}\" completed"),
        TaskStatus::Failed => {
            let first = result.lines().next().unwrap_or_default();
            format!("Agent \"{description}\" failed: {first}")
        }
        TaskStatus::Killed => format!("Agent \"{description}\" was stopped"),
        TaskStatus::Pending | TaskStatus::Running => format!("Agent \"{description}\" is running"),
    }
}

/// One line on how a background shell command ended.
fn shell_summary(description: &str, status: TaskStatus) -> String {
    match status {
        TaskStatus::Completed => format!("Background command \"{description}\" completed"),
        TaskStatus::Failed => format!("Background command \"{description}\" failed"),
        TaskStatus::Killed => format!("Background command \"{description}\" was stopped"),
        TaskStatus::Pending | TaskStatus::Running => {
            format!("Background command \"{description}\" is running")
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
