//! Which background tasks a session's transcript says were started and never reported.
//!
//! A background task lives in the memory of the process that runs it; when that process dies
//! (kill -9, a crash, a power cut) the task dies with it and its `<task-notification>` never
//! comes. The transcript still holds both halves of the story the model was told: the launch
//! answer (`async_launched`, `remote_launched`, a moved shell's `backgroundTaskId`, a stopped
//! agent `resumed` by a message) and every notification it received. A launch with no
//! notification after it is a task the model is still waiting for, and a resumed session must
//! tell it that the task will not report (see `fleet_runtime::tasks::interrupted`).
//!
//! The transcript is the record of what the model saw, so it is also what keeps a notification
//! from being sent twice: once the interrupted notification is written to the transcript, the
//! next resume finds it like any other.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use fleet_protocol::notification::{CLOSE_TAG, OPEN_TAG};
use fleet_protocol::{ContentBlock, MessageContent, Role, TaskNotification, ToolResultContent};
use serde_json::{Map, Value};

use super::{EntryKind, LoadedTranscript, TranscriptEntry};

/// What ran in a launched task, as its launch answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchKind {
    /// A background subagent (or fork), in the session's process.
    Agent,
    /// A Bash command the user moved to the background.
    Shell,
    /// An agent on a remote worker, followed by the session's process.
    Remote,
}

/// A background task the transcript says was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchedTask {
    pub task_id: String,
    /// The tool call whose answer started it (the one its notification names); empty when
    /// the transcript does not say which call it was.
    pub tool_use_id: String,
    pub kind: LaunchKind,
    /// What it was for, as the caller described it (may be empty).
    pub description: String,
    /// The agent type, for an agent.
    pub agent_type: Option<String>,
    /// Where its output goes (a subagent's transcript, a shell's output file), as recorded.
    pub output_file: Option<PathBuf>,
}

impl LoadedTranscript {
    /// The background tasks started in this session whose notification the transcript does
    /// not hold, in the order they were started. Each launch is matched by task id and the
    /// call that started it, so a compaction that writes kept turns again does not bring back
    /// a task that already reported, and an agent resumed by a message owes one notification
    /// per run.
    pub fn unreported_tasks(&self) -> Vec<LaunchedTask> {
        // By task id, with the order of its launch: a fan-out may start thousands.
        let mut launched: HashMap<String, (usize, LaunchedTask)> = HashMap::new();
        let mut order = 0usize;
        let mut reported: HashSet<(String, String)> = HashSet::new();
        // The input of every tool call, for a shell's description.
        let mut calls: Map<String, Value> = Map::new();
        for entry in &self.entries {
            let Some(message) = &entry.message else {
                continue;
            };
            match (&entry.kind, message.role) {
                (EntryKind::Assistant, Role::Assistant) => {
                    for call in message.tool_uses() {
                        calls.insert(call.id.to_owned(), call.input.clone());
                    }
                }
                (EntryKind::User, Role::User) => {
                    for launch in launches_of(entry, &calls) {
                        let key = (launch.task_id.clone(), launch.tool_use_id.clone());
                        if reported.contains(&key) {
                            continue;
                        }
                        order += 1;
                        launched.insert(launch.task_id.clone(), (order, launch));
                    }
                    for note in notifications_in(&message.content) {
                        launched.remove(&note.task_id);
                        reported.insert((note.task_id, note.tool_use_id));
                    }
                }
                _ => {}
            }
        }
        let mut unreported: Vec<(usize, LaunchedTask)> = launched.into_values().collect();
        unreported.sort_by_key(|(order, _)| *order);
        unreported.into_iter().map(|(_, task)| task).collect()
    }
}

/// Every `<task-notification>` in a user message's own text (not in tool results: a file the
/// model read may quote one).
pub(crate) fn notifications_in(content: &MessageContent) -> Vec<TaskNotification> {
    let texts: Vec<&str> = match content {
        MessageContent::Text(text) => vec![text.as_str()],
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
    };
    let mut found = Vec::new();
    for text in texts {
        let mut rest = text;
        while let Some(at) = rest.find(OPEN_TAG) {
            let from = &rest[at..];
            if let Some(note) = TaskNotification::parse(from) {
                found.push(note);
            }
            let Some(end) = from.find(CLOSE_TAG) else {
                break;
            };
            rest = &from[end + CLOSE_TAG.len()..];
        }
    }
    found
}

/// The tasks a user entry's tool results started, from their structured answers
/// (`toolUseResult` for one result, `toolUseResults` keyed by call id for several).
fn launches_of(entry: &TranscriptEntry, calls: &Map<String, Value>) -> Vec<LaunchedTask> {
    let results = result_blocks(entry);
    let mut found = Vec::new();
    if let Some(Value::Object(many)) = entry.extra.get("toolUseResults") {
        for (tool_use_id, record) in many {
            found.extend(launch_from(record, tool_use_id, calls));
        }
    }
    if let Some(record) = entry.extra.get("toolUseResult") {
        // One structured answer: the call it answers is the only result, or the one whose
        // text names the task.
        let id = task_id_of(record).unwrap_or_default();
        let tool_use_id = match results.as_slice() {
            [(only, _)] => only.clone(),
            _ => results
                .iter()
                .find(|(_, text)| !id.is_empty() && text.contains(&id))
                .map(|(call, _)| call.clone())
                .unwrap_or_default(),
        };
        found.extend(launch_from(record, &tool_use_id, calls));
    }
    found
}

/// The id of the task a structured answer started, if it started one.
fn task_id_of(record: &Value) -> Option<String> {
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    match record.get("status").and_then(Value::as_str) {
        Some("async_launched" | "resumed") => text("agentId"),
        Some("remote_launched") => text("taskId"),
        _ => text("backgroundTaskId"),
    }
}

fn launch_from(
    record: &Value,
    tool_use_id: &str,
    calls: &Map<String, Value>,
) -> Option<LaunchedTask> {
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    let status = record.get("status").and_then(Value::as_str);
    let kind = match status {
        Some("async_launched" | "resumed") => LaunchKind::Agent,
        Some("remote_launched") => LaunchKind::Remote,
        _ if record.get("backgroundTaskId").is_some() => LaunchKind::Shell,
        _ => return None,
    };
    let task_id = task_id_of(record).filter(|id| !id.is_empty())?;
    let input = calls.get(tool_use_id);
    let from_input = |key: &str| {
        input
            .and_then(|i| i.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let description = text("description")
        .or_else(|| from_input("description"))
        .or_else(|| text("name"))
        .or_else(|| from_input("command"))
        .unwrap_or_default();
    Some(LaunchedTask {
        task_id,
        tool_use_id: tool_use_id.to_owned(),
        kind,
        description,
        agent_type: text("agentType"),
        output_file: text("outputFile")
            .filter(|f| !f.is_empty())
            .map(PathBuf::from),
    })
}

/// The tool results of a user entry as (call id, text).
fn result_blocks(entry: &TranscriptEntry) -> Vec<(String, String)> {
    let Some(MessageContent::Blocks(blocks)) = entry.message.as_ref().map(|m| &m.content) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.clone(), result_text(content.as_ref()))),
            _ => None,
        })
        .collect()
}

fn result_text(content: Option<&ToolResultContent>) -> String {
    match content {
        Some(ToolResultContent::Text(text)) => text.clone(),
        Some(ToolResultContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
        None => String::new(),
    }
}
