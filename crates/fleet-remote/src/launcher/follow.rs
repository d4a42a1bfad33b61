//! Following one launched job: its events become the task's progress, its `ended` event the
//! task's ending (with the result branch fetched into the caller's repository), and a cancel
//! a stop request to its worker.

use crate::client::{Remote, RemoteEvent};
use crate::event::{RemoteState, WorkerEvent};
use crate::record::{Control, TaskRecord, TaskState};
use fleet_protocol::{TaskStatus, TaskUsage};
use fleet_runtime::remote::{RemoteEnding, RemoteUpdate};
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a stopped job's worker has to confirm before the task ends as killed anyway.
const STOP_WAIT: Duration = Duration::from_secs(10);

pub(super) struct Follower {
    pub remote: Remote,
    pub task_id: String,
    /// The caller's repository, when the job took a snapshot of one (its branch comes back).
    pub repo: Option<PathBuf>,
    pub updates: mpsc::Sender<RemoteUpdate>,
    pub cancel: CancellationToken,
}

/// What the current delivery of the job has done so far. A redelivery starts it over.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub attempt: u32,
    /// Tokens per model message (a message may come as several lines with the same usage).
    tokens: HashMap<String, u64>,
    tool_uses: HashSet<String>,
    pub last_activity: Option<String>,
}

impl Counters {
    pub fn total_tokens(&self) -> u64 {
        self.tokens.values().sum()
    }

    pub fn tool_uses(&self) -> u64 {
        self.tool_uses.len() as u64
    }

    /// Starts over if `attempt` is a later delivery; false for a line of an earlier one.
    pub fn enter(&mut self, attempt: u32) -> bool {
        if attempt < self.attempt {
            return false;
        }
        if attempt > self.attempt {
            *self = Self {
                attempt,
                ..Self::default()
            };
        }
        true
    }

    /// Counts an assistant line's tool calls and tokens; true if it was one.
    pub fn count(&mut self, line: &Value) -> bool {
        if line.get("type").and_then(Value::as_str) != Some("assistant") {
            return false;
        }
        let message = &line["message"];
        let id = message["id"].as_str().unwrap_or_default().to_string();
        let usage = &message["usage"];
        let tokens: u64 = [
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .filter_map(|key| usage[*key].as_u64())
        .sum();
        if tokens > 0 {
            self.tokens.insert(id, tokens);
        }
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    let name = block["name"].as_str().unwrap_or("a tool");
                    // A block repeated on another line of the same message counts once.
                    let key = match block["id"].as_str().filter(|id| !id.is_empty()) {
                        Some(id) => id.to_string(),
                        None => format!("unnamed-{}", self.tool_uses.len()),
                    };
                    self.tool_uses.insert(key);
                    self.last_activity = Some(name.to_string());
                }
                Some("text") => self.last_activity = Some("writing".into()),
                Some("thinking") => self.last_activity = Some("thinking".into()),
                _ => {}
            }
        }
        true
    }
}

impl Follower {
    pub async fn run(self) {
        let ending = self.follow().await;
        let _ = self.updates.send(RemoteUpdate::Ended(ending)).await;
    }

    async fn follow(&self) -> RemoteEnding {
        let mut events = match self.remote.events(&self.task_id, 0).await {
            Ok(events) => events,
            Err(err) => return ending(TaskStatus::Failed, err.to_string(), TaskUsage::default()),
        };
        let mut counters = Counters::default();
        let mut stop_by: Option<tokio::time::Instant> = None;
        loop {
            let deadline = async {
                match stop_by {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.cancel.cancelled(), if stop_by.is_none() => {
                    stop_by = Some(tokio::time::Instant::now() + STOP_WAIT);
                    if let Some(ended) = self.stop().await {
                        return self.ending_from(ended, None, &counters).await;
                    }
                }
                () = deadline => {
                    return ending(
                        TaskStatus::Killed,
                        "The remote job was stopped; its worker did not confirm it within 10 s."
                            .into(),
                        usage_of(&counters),
                    );
                }
                event = events.next() => match event {
                    Some(Ok(event)) => {
                        if let Some(ended) = self.take(event, &mut counters).await {
                            return ended;
                        }
                    }
                    Some(Err(err)) => tracing::warn!("remote task {}: {err}", self.task_id),
                    None => {
                        return ending(
                            TaskStatus::Failed,
                            "The remote job's events stopped coming.".into(),
                            usage_of(&counters),
                        )
                    }
                }
            }
        }
    }

    /// Asks the worker to stop the job; the record when the job has already ended (stopped
    /// while still queued: no worker will report it).
    async fn stop(&self) -> Option<TaskRecord> {
        if let Err(err) = self.remote.send(&self.task_id, Control::Stop).await {
            tracing::warn!("remote task {}: the stop was not sent: {err}", self.task_id);
        }
        let record = self.remote.record(&self.task_id).await.ok().flatten()?;
        record.state.is_terminal().then_some(record)
    }

    /// Handles one event; the ending when it was the job's last.
    async fn take(&self, event: RemoteEvent, counters: &mut Counters) -> Option<RemoteEnding> {
        match event.worker_event() {
            Some(WorkerEvent::Started { worker, attempt }) => {
                if counters.enter(attempt) {
                    let _ = self
                        .updates
                        .send(RemoteUpdate::Started { worker, attempt })
                        .await;
                }
                None
            }
            Some(WorkerEvent::Ended { state, result }) => {
                let ended = Ended { state, result };
                let record = self.remote.record(&self.task_id).await.ok().flatten();
                Some(match record {
                    Some(record) => self.ending_from(record, Some(&ended), counters).await,
                    None => from_event(&ended, counters),
                })
            }
            // A plan, a pause notice, or an event this fleet does not know: the task goes on.
            Some(_) => None,
            None => {
                if counters.enter(event.attempt) && counters.count(&event.line) {
                    let _ = self
                        .updates
                        .send(RemoteUpdate::Progress {
                            tool_uses: counters.tool_uses(),
                            total_tokens: counters.total_tokens(),
                            last_activity: counters.last_activity.clone(),
                        })
                        .await;
                }
                None
            }
        }
    }

    /// The ending a finished record describes, with its branch fetched into the caller's
    /// repository. A fetch that fails is said in the result; the work is still on the broker.
    async fn ending_from(
        &self,
        record: TaskRecord,
        ended: Option<&Ended>,
        counters: &Counters,
    ) -> RemoteEnding {
        let state = if record.state.is_terminal() {
            RemoteState::Known(record.state)
        } else {
            ended.map_or(RemoteState::Known(TaskState::Failed), |e| e.state.clone())
        };
        let mut result = record
            .result
            .clone()
            .or_else(|| ended.and_then(|e| e.result.clone()))
            .unwrap_or_default();
        note_unknown(&state, &mut result);
        let mut branch = None;
        if let (Some(_), Some(repo)) = (&record.branch, &self.repo) {
            match self.remote.fetch_branch(&self.task_id, repo).await {
                Ok(fetched) => branch = fetched,
                Err(err) => result.push_str(&format!(
                    "\n\n(The job's branch could not be fetched: {err}. `fleet remote logs {}` \
                     shows what it did.)",
                    self.task_id
                )),
            }
        }
        let usage = TaskUsage {
            total_tokens: nonzero(record.usage.total_tokens, counters.total_tokens()),
            tool_uses: nonzero(record.usage.tool_uses, counters.tool_uses()),
            duration_ms: record.usage.duration_ms,
            unreported_replies: 0,
        };
        RemoteEnding {
            status: ending_status(&state),
            result,
            usage,
            branch,
        }
    }
}

/// What the worker's `ended` event said.
struct Ended {
    state: RemoteState,
    result: Option<String>,
}

/// The ending an `ended` event describes, when the record cannot be read.
fn from_event(ended: &Ended, counters: &Counters) -> RemoteEnding {
    let mut result = ended.result.clone().unwrap_or_default();
    note_unknown(&ended.state, &mut result);
    ending(ending_status(&ended.state), result, usage_of(counters))
}

/// How a task ends for a job's final state; a put-away session counts as stopped.
pub(crate) fn status_of(state: TaskState) -> TaskStatus {
    match state {
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Killed | TaskState::Archived => TaskStatus::Killed,
        // An ending this fleet cannot name is not taken for a failure (see `ending_status`).
        TaskState::Unknown => TaskStatus::Completed,
        _ => TaskStatus::Failed,
    }
}

/// How a task ends for the state its `ended` event reported. A state this fleet does not
/// know (a newer worker's) ends the task as completed, with the state named in the result:
/// the worker said the job ended, and did not say it failed.
pub(crate) fn ending_status(state: &RemoteState) -> TaskStatus {
    match state {
        RemoteState::Known(state) => status_of(*state),
        RemoteState::Unknown(_) => TaskStatus::Completed,
    }
}

/// Says in the result that the job ended in a state this fleet does not know.
fn note_unknown(state: &RemoteState, result: &mut String) {
    if let RemoteState::Unknown(name) = state {
        if !result.is_empty() {
            result.push_str("\n\n");
        }
        result.push_str(&format!(
            "(The remote job ended in state {name:?}, which this fleet does not know.)"
        ));
    }
}

fn nonzero(reported: u64, counted: u64) -> u64 {
    if reported > 0 {
        reported
    } else {
        counted
    }
}

fn usage_of(counters: &Counters) -> TaskUsage {
    TaskUsage {
        total_tokens: counters.total_tokens(),
        tool_uses: counters.tool_uses(),
        duration_ms: 0,
        unreported_replies: 0,
    }
}

fn ending(status: TaskStatus, result: String, usage: TaskUsage) -> RemoteEnding {
    RemoteEnding {
        status,
        result,
        usage,
        branch: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_put_away_session_counts_as_stopped_and_an_unfinished_one_as_failed() {
        assert_eq!(status_of(TaskState::Completed), TaskStatus::Completed);
        assert_eq!(status_of(TaskState::Killed), TaskStatus::Killed);
        assert_eq!(status_of(TaskState::Archived), TaskStatus::Killed);
        assert_eq!(status_of(TaskState::Failed), TaskStatus::Failed);
        assert_eq!(status_of(TaskState::Running), TaskStatus::Failed);
    }

    #[test]
    fn an_unknown_ending_state_is_named_and_not_reported_as_failed() {
        let line = json!({"type": "fleet_remote", "event": "ended", "state": "reviewing",
                          "result": "waiting for a person"});
        let Some(WorkerEvent::Ended { state, result }) = WorkerEvent::from_line(&line) else {
            panic!("not an ended event")
        };
        let ended = from_event(&Ended { state, result }, &Counters::default());
        assert_ne!(ended.status, TaskStatus::Failed);
        assert_eq!(ended.status, TaskStatus::Completed);
        assert!(
            ended.result.starts_with("waiting for a person"),
            "{}",
            ended.result
        );
        assert!(ended.result.contains("\"reviewing\""), "{}", ended.result);
        // A known failure is still one.
        let failed = json!({"type": "fleet_remote", "event": "ended", "state": "failed",
                            "result": "boom"});
        let Some(WorkerEvent::Ended { state, result }) = WorkerEvent::from_line(&failed) else {
            panic!("not an ended event")
        };
        let ended = from_event(&Ended { state, result }, &Counters::default());
        assert_eq!(
            (ended.status, ended.result.as_str()),
            (TaskStatus::Failed, "boom")
        );
    }

    #[test]
    fn counters_count_each_message_and_call_once_and_start_over_on_a_later_attempt() {
        let mut counters = Counters::default();
        let line = json!({"type": "assistant", "message": {"id": "m1",
            "content": [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {}},
                        {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100}}});
        assert!(counters.enter(1));
        assert!(counters.count(&line));
        assert!(counters.count(&line));
        assert_eq!((counters.tool_uses(), counters.total_tokens()), (2, 115));
        assert_eq!(counters.last_activity.as_deref(), Some("Read"));
        assert!(!counters.count(&json!({"type": "user"})));
        assert!(counters.enter(2));
        assert_eq!((counters.tool_uses(), counters.total_tokens()), (0, 0));
        assert!(
            !counters.enter(1),
            "a line of an earlier delivery is left out"
        );
    }
}
