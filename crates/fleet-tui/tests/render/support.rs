//! Turning rendered lines into the text a person reads, for asserts and snapshots.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

/// Each line's text, spans joined.
pub fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// The lines as one text, one row per line, trailing spaces trimmed.
pub fn text(lines: &[Line<'_>]) -> String {
    plain(lines)
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines drawn into a buffer `width` wide (what the terminal would show), rows trimmed.
pub fn screen(lines: &[Line<'static>], width: u16) -> String {
    let height = u16::try_from(lines.len()).expect("fits a buffer").max(1);
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    Paragraph::new(lines.to_vec()).render(area, &mut buf);
    (0..height)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < width {
                let symbol = buf[(x, y)].symbol();
                row.push_str(symbol);
                x += u16::try_from(symbol.width().max(1)).expect("narrow");
            }
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every line fits `width` cells.
pub fn assert_fits(lines: &[Line<'_>], width: usize) {
    for line in plain(lines) {
        assert!(
            line.width() <= width,
            "{line:?} is {} cells, wider than {width}",
            line.width()
        );
    }
}
