//! Helpers the pane tests share: drawing into a buffer and reading it back as text.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn typed(text: &str) -> Vec<KeyEvent> {
    text.chars().map(ch).collect()
}

/// Draws with `draw` into a `width`×`height` buffer.
pub fn draw(width: u16, height: u16, draw: impl FnOnce(Rect, &mut Buffer)) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    draw(area, &mut buf);
    buf
}

/// The buffer as the person reads it: one line per row, trailing spaces trimmed, the
/// filler cell after a wide character skipped.
pub fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut rows = Vec::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut skip = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = symbol.width().saturating_sub(1);
            row.push_str(symbol);
        }
        rows.push(row.trim_end().to_string());
    }
    rows.join("\n")
}

/// Lines (for `/help`, `/cost`) as plain text.
pub fn lines_text(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first row whose text contains `needle`.
pub fn row_containing(buf: &Buffer, needle: &str) -> Option<u16> {
    let text = text(buf);
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u16)
}
