//! What a transcript is made of: cells, each one thing a person reads as a unit (a prompt,
//! a reply, a tool call with its result), and the rendered lines each keeps for the width it
//! was last drawn at, so a frame re-renders only the cells that changed.

use crate::port::NoticeLevel;
use crate::theme::Palette;
use fleet_protocol::TaskStatus;
use ratatui::text::Line;
use serde_json::Value;
use std::sync::Arc;

/// What a cell's rendered lines depend on besides its own content. A cached rendering is
/// reused only while all three are unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RenderKey {
    pub width: u16,
    pub expanded: bool,
    pub palette: Palette,
}

/// One cell: its content and, once drawn, its lines for one [`RenderKey`].
#[derive(Debug)]
pub(crate) struct Cell {
    pub kind: CellKind,
    pub cache: Option<Rendered>,
}

#[derive(Debug)]
pub(crate) struct Rendered {
    pub key: RenderKey,
    pub lines: Vec<Line<'static>>,
}

impl Cell {
    pub fn new(kind: CellKind) -> Self {
        Self { kind, cache: None }
    }

    /// The cached lines when they were drawn for `key`.
    pub fn cached(&self, key: RenderKey) -> Option<&[Line<'static>]> {
        self.cache
            .as_ref()
            .filter(|r| r.key == key)
            .map(|r| r.lines.as_slice())
    }

    /// Rows the cached rendering takes (0 when not drawn yet).
    pub fn cached_height(&self) -> usize {
        self.cache.as_ref().map_or(0, |r| r.lines.len())
    }

    /// Whether the cell still takes text as it streams in.
    pub fn is_open(&self) -> bool {
        matches!(
            self.kind,
            CellKind::Assistant { open: true, .. } | CellKind::Thinking { open: true, .. }
        )
    }
}

#[derive(Debug)]
pub(crate) enum CellKind {
    /// What the person typed (the main agent's user message).
    Prompt(String),
    /// The assistant's Markdown; `open` while deltas still arrive.
    Assistant {
        text: String,
        open: bool,
    },
    /// Thinking, shown as one dim line unless everything is expanded.
    Thinking {
        text: String,
        open: bool,
    },
    Tool(ToolCall),
    /// One message of delivered team mail (a `<teammate-message>` block).
    Mail(crate::mail::Letter),
    /// A `<task-notification>` that reached an agent: a task it started has ended.
    Notification(NotificationLine),
    Notice {
        level: NoticeLevel,
        text: String,
    },
    /// Lines the UI made itself (`/help`, `/cost`), wrapped to the width.
    Lines(Vec<Line<'static>>),
    /// `!command` and its output.
    Shell {
        command: String,
        output: String,
        exit_code: Option<i32>,
    },
    /// The conversation was compacted here.
    Compacted,
    /// Something went wrong but the run goes on (a retry, a model fallback, a failed hook).
    Warning(String),
    /// A run ended with an error.
    Error(String),
}

/// One tool call; its result or refusal arrives later and is folded in under it.
#[derive(Debug)]
pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    pub result: Option<ToolDone>,
    /// Why the call was refused (a rule, the person, a hook), when it was.
    pub refused: Option<String>,
    /// The call waits for a person's (or an approver's) answer.
    pub waiting: bool,
}

#[derive(Debug)]
pub(crate) struct ToolDone {
    pub content: String,
    pub structured: Option<Arc<Value>>,
    pub is_error: bool,
}

#[derive(Debug)]
pub(crate) struct NotificationLine {
    pub tool_use_id: String,
    pub task_id: String,
    pub status: TaskStatus,
    pub summary: String,
}
