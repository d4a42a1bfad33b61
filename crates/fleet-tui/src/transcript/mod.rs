//! The conversation as the person sees it: a list of cells (a prompt, the assistant's
//! Markdown, a tool call with its folded result, a subagent's group, a notice), built from
//! `AgentEvent`s, and a viewport that renders only the rows on screen from a per-width cache.
//!
//! PLACEHOLDER (skeleton): the public API is the contract the app builds on.

use crate::port::NoticeLevel;
use crate::theme::Theme;
use fleet_protocol::{AgentEvent, Message};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

/// One agent's figures, for `/cost` and the task panel.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSummary {
    pub agent_id: String,
    /// The Agent call that started it (`None` for the main agent).
    pub tool_use_id: Option<String>,
    pub subagent_type: String,
    pub description: String,
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Known once it is done.
    pub cost_usd: Option<f64>,
    pub done: bool,
}

#[derive(Debug, Default)]
pub struct Transcript {
    lines: Vec<Line<'static>>,
    expanded: bool,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in one event of any agent.
    pub fn apply(&mut self, event: &AgentEvent) {
        if let fleet_protocol::EventKind::TextDelta(text) = &event.kind {
            self.lines.push(Line::from(text.clone()));
        }
    }

    /// The conversation of a resumed session.
    pub fn load_history(&mut self, messages: &[Message]) {
        let _ = messages;
    }

    pub fn push_notice(&mut self, level: NoticeLevel, text: &str) {
        let _ = level;
        self.lines.push(Line::from(text.to_string()));
    }

    /// Lines the UI itself made (`/help`, `/cost`).
    pub fn push_lines(&mut self, lines: Vec<Line<'static>>) {
        self.lines.extend(lines);
    }

    pub fn push_shell(&mut self, command: &str, output: &str, exit_code: Option<i32>) {
        let _ = (output, exit_code);
        self.lines.push(Line::from(format!("! {command}")));
    }

    pub fn clear(&mut self) {
        self.lines.clear();
    }

    /// Ctrl+O: every folded result and thinking block at once.
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
    }

    pub fn expanded(&self) -> bool {
        self.expanded
    }

    /// Rows scrolled back from the bottom; 0 follows the stream.
    pub fn scroll_up(&mut self, rows: usize) {
        let _ = rows;
    }

    pub fn scroll_down(&mut self, rows: usize) {
        let _ = rows;
    }

    pub fn scroll_to_bottom(&mut self) {}

    /// Draws the rows that fit in `area`, bottom-aligned while following the stream.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = theme;
        let start = self.lines.len().saturating_sub(area.height as usize);
        ratatui::widgets::Paragraph::new(self.lines[start..].to_vec()).render(area, buf);
    }

    /// One agent's activity alone, everything expanded (the task panel's view of a task),
    /// found by its Agent call's tool_use id or its agent id.
    pub fn render_agent(&mut self, id: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = (id, area, buf, theme);
    }

    /// Every agent seen, the main agent first.
    pub fn agents(&self) -> Vec<AgentSummary> {
        Vec::new()
    }

    /// Rows in the whole transcript at `width` (for benches and the scroll indicator).
    pub fn height(&mut self, width: u16) -> usize {
        let _ = width;
        self.lines.len()
    }
}
