//! The status line: model, permission mode, context used, session cost, running agents.

use crate::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub model: String,
    pub permission_mode: String,
    pub context_percent: Option<u8>,
    pub cost_usd: f64,
    pub running_agents: usize,
    /// A short hint that replaces the right-hand side for a moment ("Ctrl+C again to quit").
    pub hint: Option<String>,
}

pub fn render(status: &Status, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let _ = theme;
    Paragraph::new(format!("{} · {}", status.model, status.permission_mode)).render(area, buf);
}
