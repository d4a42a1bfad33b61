//! A task as stored in `tasks/<team>/<id>.json` (Claude Code's schema: `id, subject,
//! description, activeForm?, owner?, status, blocks[], blockedBy[], metadata?`), and the shapes
//! of a change to one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// A decimal number as a string (`"3"`), never reused within a list.
    pub id: String,
    pub subject: String,
    #[serde(default)]
    pub description: String,
    /// The present-continuous form shown while it runs ("Writing notes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// The member name that owns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub status: TaskState,
    /// Tasks that wait on this one.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Tasks this one waits on.
    #[serde(default)]
    pub blocked_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Task {
    /// TaskList's line for it: `#1 [completed] Write notes (alpha)`.
    pub fn list_line(&self) -> String {
        let mut line = format!("#{} [{}] {}", self.id, self.status.as_str(), self.subject);
        if let Some(owner) = &self.owner {
            line.push_str(&format!(" ({owner})"));
        }
        line
    }

    /// TaskGet's text: `Task #2: subject`, `Status: …`, `Description: …`, then `Owner`,
    /// `Blocked by: #1` and `Blocks: #3` when there are any.
    pub fn details(&self) -> String {
        let mut text = format!(
            "Task #{}: {}\nStatus: {}\nDescription: {}",
            self.id,
            self.subject,
            self.status.as_str(),
            self.description
        );
        if let Some(owner) = &self.owner {
            text.push_str(&format!("\nOwner: {owner}"));
        }
        let ids = |ids: &[String]| {
            ids.iter()
                .map(|id| format!("#{id}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.blocked_by.is_empty() {
            text.push_str(&format!("\nBlocked by: {}", ids(&self.blocked_by)));
        }
        if !self.blocks.is_empty() {
            text.push_str(&format!("\nBlocks: {}", ids(&self.blocks)));
        }
        text
    }
}

/// A stored task's status (a deleted task has no file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Pending,
    InProgress,
    Completed,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::InProgress => "in_progress",
            TaskState::Completed => "completed",
        }
    }
}

/// The status a TaskUpdate may ask for; `deleted` removes the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchStatus {
    Pending,
    InProgress,
    Completed,
    Deleted,
}

/// TaskCreate's input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewTask {
    pub subject: String,
    pub description: String,
    pub active_form: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

/// TaskUpdate's input: `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPatch {
    pub subject: Option<String>,
    pub description: Option<String>,
    pub active_form: Option<String>,
    pub status: Option<PatchStatus>,
    /// `Some(Some(name))` assigns, `Some(None)` (or an empty name) unassigns.
    pub owner: Option<Option<String>>,
    /// Tasks that will wait on this one.
    pub add_blocks: Vec<String>,
    /// Tasks this one will wait on.
    pub add_blocked_by: Vec<String>,
    /// Merged key by key; a `null` value deletes the key.
    pub metadata: Option<Map<String, Value>>,
}

/// Who is changing the list: claim checks apply to members, and the lead may reassign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The member name (`team-lead`, `alpha`, …).
    pub name: String,
    pub is_lead: bool,
}

impl Actor {
    pub fn lead(name: &str) -> Self {
        Self {
            name: name.to_string(),
            is_lead: true,
        }
    }

    pub fn member(name: &str) -> Self {
        Self {
            name: name.to_string(),
            is_lead: false,
        }
    }
}

/// What an update did.
#[derive(Debug, Clone, PartialEq)]
pub struct Updated {
    /// The task as written; `None` when it was deleted.
    pub task: Option<Task>,
    /// The fields that changed, named as in TaskUpdate's result ("Updated task #2 owner,
    /// status"): `subject, description, activeForm, owner, status, blocks, blockedBy, metadata`,
    /// or just `deleted`. Empty when the patch changed nothing.
    pub changed: Vec<&'static str>,
    /// Set when the owner changed to someone: the caller sends that member a
    /// `task_assignment`.
    pub new_owner: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_texts_have_claude_codes_shape() {
        let mut task = Task {
            id: "2".into(),
            subject: "TASK-B second".into(),
            description: "do B after A".into(),
            active_form: None,
            owner: None,
            status: TaskState::Pending,
            blocks: vec![],
            blocked_by: vec!["1".into()],
            metadata: None,
        };
        assert_eq!(
            task.details(),
            "Task #2: TASK-B second\nStatus: pending\nDescription: do B after A\nBlocked by: #1"
        );
        assert_eq!(task.list_line(), "#2 [pending] TASK-B second");
        task.owner = Some("alpha".into());
        task.status = TaskState::Completed;
        assert_eq!(task.list_line(), "#2 [completed] TASK-B second (alpha)");
    }
}
