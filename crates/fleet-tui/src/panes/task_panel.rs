//! PLACEHOLDER (skeleton): the task list opened with Ctrl+T.
use super::tasks::TaskBoard;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskPanelAction {
    Close,
    View(String),
    Stop(String),
    Message { task_id: String, text: String },
}

#[derive(Debug, Default)]
pub struct TaskPanel;

impl TaskPanel {
    pub fn new() -> Self {
        Self
    }
    pub fn handle_key(&mut self, key: KeyEvent, board: &TaskBoard) -> Option<TaskPanelAction> {
        let _ = board;
        (key.code == KeyCode::Esc).then_some(TaskPanelAction::Close)
    }
    pub fn handle_paste(&mut self, text: &str) {
        let _ = text;
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, board: &TaskBoard, theme: &Theme) {
        let _ = (area, buf, board, theme);
    }
}
