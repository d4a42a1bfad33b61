//! How the composer looks: `> ` before the first row, the text wrapped to the width (scrolling
//! inside past [`MAX_TEXT_ROWS`]), paste tokens set apart, a dim placeholder when empty, and
//! the popup (completion or Ctrl+R search) below.

use super::wrap::{self, printable, truncate, Row};
use super::{Composer, MAX_TEXT_ROWS};
use crate::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::sync::atomic::Ordering;

const PROMPT: &str = "> ";
const EMPTY_HINT: &str = "Type a message · / for commands · @ for files · ! for shell";

/// Columns taken by the prompt marker at `width` (none when there is no room for text).
fn prompt_width(width: usize) -> usize {
    if width > PROMPT.len() {
        PROMPT.len()
    } else {
        0
    }
}

impl Composer {
    /// Rows wanted at `width`, popups (completion, search) included.
    pub fn height(&self, width: u16) -> u16 {
        let width = usize::from(width);
        let text_width = width - prompt_width(width);
        let rows = wrap::wrap(self.editor.text(), text_width).len();
        let text_rows = rows.clamp(1, MAX_TEXT_ROWS);
        u16::try_from(text_rows + self.popup_rows()).unwrap_or(u16::MAX)
    }

    fn popup_rows(&self) -> usize {
        if self.search.is_some() {
            1
        } else {
            self.current_popup().map_or(0, |p| p.rows())
        }
    }

    /// Draws itself; answers where the cursor goes.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<(u16, u16)> {
        if area.width == 0 || area.height == 0 {
            return None;
        }
        let width = usize::from(area.width);
        let indent = prompt_width(width);
        let text_width = width - indent;
        self.text_width.store(text_width, Ordering::Relaxed);
        let text = self.editor.text();
        let rows = wrap::wrap(text, text_width);
        let height = usize::from(area.height);
        let popup_rows = self.popup_rows().min(height - 1);
        let visible = rows
            .len()
            .min(MAX_TEXT_ROWS)
            .min(height - popup_rows)
            .max(1);
        let (cursor_row, cursor_column) = wrap::position(text, &rows, self.editor.cursor());
        let top = self
            .scroll
            .load(Ordering::Relaxed)
            .min(cursor_row)
            .max((cursor_row + 1).saturating_sub(visible))
            .min(rows.len().saturating_sub(visible));
        self.scroll.store(top, Ordering::Relaxed);

        let prompt_style = theme.style(Role::Accent).patch(theme.style(Role::User));
        if text.is_empty() {
            buf.set_stringn(area.x, area.y, PROMPT, indent, prompt_style);
            let hint = truncate(EMPTY_HINT, text_width);
            let x = area.x + indent as u16;
            buf.set_stringn(x, area.y, hint, text_width, theme.style(Role::Dim));
        }
        for (i, row) in rows.iter().enumerate().skip(top).take(visible) {
            let y = area.y + (i - top) as u16;
            if i == 0 {
                buf.set_stringn(area.x, y, PROMPT, indent, prompt_style);
            }
            self.render_row(row, area.x + indent as u16, y, text_width, buf, theme);
        }

        let popup_area = Rect {
            x: area.x,
            y: area.y + visible as u16,
            width: area.width,
            height: popup_rows as u16,
        };
        if let Some(search) = &self.search {
            let x = search.render(popup_area, buf, theme, &self.history);
            return Some((x, popup_area.y));
        }
        if let Some(popup) = self.current_popup() {
            popup.render(popup_area, buf, theme);
        }
        let column = cursor_column.min(text_width.saturating_sub(1));
        let x = area.x + (indent + column) as u16;
        let y = area.y + (cursor_row - top) as u16;
        Some((x, y))
    }

    /// One row of text; paste tokens drawn in the accent style so they read as one thing.
    fn render_row(&self, row: &Row, x: u16, y: u16, width: usize, buf: &mut Buffer, theme: &Theme) {
        let text = self.editor.text();
        let mut x = x;
        let mut at = row.start;
        let mut left = width;
        let mut draw = |from: usize, to: usize, role: Role, x: &mut u16, left: &mut usize| {
            if from >= to || *left == 0 {
                return;
            }
            let piece = printable(&text[from..to]);
            let (end, _) = buf.set_stringn(*x, y, &piece, *left, theme.style(role));
            *left = left.saturating_sub(usize::from(end - *x));
            *x = end;
        };
        for element in self.editor.elements() {
            if element.end <= row.start || element.start >= row.end {
                continue;
            }
            let start = element.start.max(row.start);
            let end = element.end.min(row.end);
            draw(at, start, Role::Text, &mut x, &mut left);
            draw(start, end, Role::Accent, &mut x, &mut left);
            at = end;
        }
        draw(at, row.end, Role::Text, &mut x, &mut left);
    }
}
