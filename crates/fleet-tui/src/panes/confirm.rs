//! PLACEHOLDER (skeleton): a question with lettered answers.
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[derive(Debug)]
pub struct Confirm {
    pub question: String,
    pub options: Vec<(char, String)>,
}

impl Confirm {
    pub fn new(question: impl Into<String>, options: Vec<(char, String)>) -> Self {
        Self {
            question: question.into(),
            options,
        }
    }
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<char> {
        match key.code {
            KeyCode::Char(c) if self.options.iter().any(|(k, _)| *k == c) => Some(c),
            KeyCode::Esc => self.options.last().map(|(k, _)| *k),
            _ => None,
        }
    }
    pub fn height(&self, width: u16) -> u16 {
        let _ = width;
        4
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = (area, buf, theme);
    }
}
