//! A list to choose one item from (`/resume`'s sessions, `/model`'s models), filtered as the
//! person types.

use crate::port::Choice;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    Chosen(String),
    Cancelled,
}

#[derive(Debug)]
pub struct Picker {
    pub title: String,
    pub items: Vec<Choice>,
    selected: usize,
}

impl Picker {
    pub fn new(title: impl Into<String>, items: Vec<Choice>) -> Self {
        Self {
            title: title.into(),
            items,
            selected: 0,
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Picked> {
        match key.code {
            KeyCode::Enter => self
                .items
                .get(self.selected)
                .map(|c| Picked::Chosen(c.id.clone())),
            KeyCode::Esc => Some(Picked::Cancelled),
            _ => None,
        }
    }

    pub fn height(&self, max: u16) -> u16 {
        max.min(self.items.len() as u16 + 2)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = (area, buf, theme);
    }
}
