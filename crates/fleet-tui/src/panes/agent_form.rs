//! PLACEHOLDER (skeleton): the `/agents new` form.
use crate::port::NewAgent;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormResult {
    Done(NewAgent),
    Cancelled,
}

#[derive(Debug, Default)]
pub struct AgentForm;

impl AgentForm {
    pub fn new() -> Self {
        Self
    }
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<FormResult> {
        (key.code == KeyCode::Esc).then_some(FormResult::Cancelled)
    }
    pub fn handle_paste(&mut self, text: &str) {
        let _ = text;
    }
    pub fn height(&self, width: u16) -> u16 {
        let _ = width;
        8
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = (area, buf, theme);
    }
}
