//! What a subagent's events leave behind besides the session stream: its transcript on disk
//! and, for a background task, the progress the task list shows.

use super::admission::StartPermit;
use crate::sink::EventTap;
use crate::tasks::TaskRegistry;
use crate::transcript;
use fleet_protocol::{AgentEvent, CommittedMessage, ContentBlock, EventKind};
use fleet_store::SidechainWriter;
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) struct ChildTap {
    pub transcript: Option<Mutex<SidechainWriter>>,
    /// The first transcript error, reported with the child's result: the run goes on (the
    /// conversation itself is intact), but the caller must learn the file is incomplete.
    pub transcript_error: Mutex<Option<String>>,
    /// Set when the child runs as a background task.
    pub task: OnceLock<(Arc<TaskRegistry>, String)>,
    /// Held until the model first answers the child (see [`super::admission`]).
    pub start: StartPermit,
}

impl EventTap for ChildTap {
    fn observe(&self, event: &AgentEvent) {
        if answered(&event.kind) {
            self.start.release();
        }
        match &event.kind {
            EventKind::MessageCommitted(committed) => {
                self.record(committed);
                if let (Some((tasks, id)), Some(reply)) = (self.task.get(), &committed.reply) {
                    let tokens = reply.usage.input_tokens
                        + reply.usage.output_tokens
                        + reply.usage.cache_read()
                        + reply.usage.cache_creation();
                    tasks.update_progress(id, |p| {
                        p.turns += 1;
                        p.total_tokens += tokens;
                    });
                }
            }
            EventKind::AssistantBlock { block, .. } => {
                let Some((tasks, id)) = self.task.get() else {
                    return;
                };
                let activity = match block {
                    ContentBlock::ToolUse { name, input, .. } => {
                        Some(format!("{name} {}", brief_input(input)))
                    }
                    ContentBlock::Thinking { .. } => Some("thinking".to_string()),
                    ContentBlock::Text { .. } => Some("writing".to_string()),
                    _ => None,
                };
                if let Some(activity) = activity {
                    tasks.update_progress(id, |p| p.last_activity = Some(activity));
                }
            }
            EventKind::CompactBoundary(boundary) => {
                for entry in transcript::boundary_entries(boundary) {
                    self.append(entry);
                }
            }
            EventKind::ToolResult(_) => {
                if let Some((tasks, id)) = self.task.get() {
                    tasks.update_progress(id, |p| p.tool_uses += 1);
                }
            }
            _ => {}
        }
    }
}

impl ChildTap {
    /// Appends one message to the transcript; the first failure is kept for the result.
    pub fn record(&self, committed: &CommittedMessage) {
        self.append(transcript::entry(committed));
    }

    fn append(&self, entry: fleet_store::TranscriptEntry) {
        let Some(writer) = &self.transcript else {
            return;
        };
        let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(err) = writer.append(entry) {
            tracing::warn!(path = %writer.path().display(), "subagent transcript: {err}");
            let mut slot = self
                .transcript_error
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(|| err.to_string());
        }
    }

    pub fn take_error(&self) -> Option<String> {
        self.transcript_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// Whether the event shows the model answered the child (anything but its own prompt being
/// recorded, which comes before the request).
fn answered(kind: &EventKind) -> bool {
    !matches!(kind, EventKind::MessageCommitted(c) if c.reply.is_none())
}

/// The most telling field of a tool input, shortened: a path, a pattern or a command.
fn brief_input(input: &serde_json::Value) -> String {
    const KEYS: [&str; 5] = ["file_path", "path", "pattern", "command", "description"];
    let text = KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
        .unwrap_or_default();
    let mut short: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        short.push('…');
    }
    short
}
