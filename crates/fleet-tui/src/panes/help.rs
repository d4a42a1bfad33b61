//! PLACEHOLDER (skeleton): `/help`.
use crate::input::commands::CommandInfo;
use crate::theme::Theme;
use ratatui::text::Line;

pub fn lines(commands: &[CommandInfo], theme: &Theme) -> Vec<Line<'static>> {
    let _ = theme;
    commands
        .iter()
        .map(|c| Line::from(format!("/{} {}", c.name, c.description)))
        .collect()
}
