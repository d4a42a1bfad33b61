//! PLACEHOLDER (skeleton): the footer row of background-task pills.
use super::tasks::TaskBoard;
use crate::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub fn height(board: &TaskBoard) -> u16 {
    u16::from(board.running_background() > 0)
}

pub fn render(board: &TaskBoard, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let _ = (board, area, buf, theme);
}
