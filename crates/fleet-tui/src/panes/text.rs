//! Width-aware text helpers the panes share. Everything here measures in terminal cells
//! (`unicode-width`), never bytes or chars, so a wide character never spills past a border
//! and no string is ever sliced in the middle of a character.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Padding};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Cells `text` takes on screen.
pub(crate) fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` cut to at most `max` cells, ending in `…` when something was cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    crate::render::truncate(text, max)
}

/// The first `max` cells of `text`, without an ellipsis (for scrolling windows).
pub(crate) fn take_cells(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out
}

/// `text` padded with spaces to `cells` (unchanged when already as wide).
pub(crate) fn pad(text: &str, cells: usize) -> String {
    let w = width(text);
    let mut out = text.to_string();
    out.extend(std::iter::repeat_n(' ', cells.saturating_sub(w)));
    out
}

/// Greedy word wrap to `max` cells; words longer than a line are broken between characters.
/// Line breaks in `text` are kept. Always at least one (possibly empty) row.
pub(crate) fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut rows = Vec::new();
    for source in text.split('\n') {
        let mut row = String::new();
        let mut row_w = 0;
        for word in source.split(' ') {
            let word_w = width(word);
            let gap = usize::from(!row.is_empty());
            if row_w + gap + word_w <= max {
                if gap == 1 {
                    row.push(' ');
                }
                row.push_str(word);
                row_w += gap + word_w;
                continue;
            }
            if !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                row_w = 0;
            }
            for c in word.chars() {
                let w = c.width().unwrap_or(0);
                if row_w + w > max && !row.is_empty() {
                    rows.push(std::mem::take(&mut row));
                    row_w = 0;
                }
                row.push(c);
                row_w += w;
            }
        }
        rows.push(row);
    }
    rows
}

/// Rows of `text` wrapped to `max` cells, each styled; the first row starts with `indent`,
/// the others with as many spaces, so continuation rows line up under the text.
pub(crate) fn wrapped_lines(
    text: &str,
    max: usize,
    indent: &str,
    style: Style,
) -> Vec<Line<'static>> {
    let room = max.saturating_sub(width(indent));
    let blank = pad("", width(indent));
    wrap(text, room)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let lead = if i == 0 {
                indent.to_string()
            } else {
                blank.clone()
            };
            Line::from(vec![Span::raw(lead), Span::styled(row, style)])
        })
        .collect()
}

/// Rows a framed pane needs for its content lines: the lines and the two borders.
pub(crate) fn framed_height(lines: Vec<Line<'_>>) -> u16 {
    u16::try_from(lines.len() + 2).unwrap_or(u16::MAX)
}

/// A bordered box with a column of space inside each side, the frame every pane uses.
pub(crate) fn frame<'a>(border: Style) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .padding(Padding::horizontal(1))
}

/// Columns a [`frame`] takes from a width (borders and padding).
pub(crate) const FRAME_COLUMNS: u16 = 4;

/// Draws `lines` top-down into `area`, each clipped to the area's width; rows past the
/// bottom are dropped. (A `Paragraph` would do, but this keeps clipping explicit and cheap.)
pub(crate) fn draw_lines(lines: &[Line<'_>], area: Rect, buf: &mut Buffer) {
    for (i, line) in lines.iter().take(usize::from(area.height)).enumerate() {
        let y = area.y + i as u16;
        buf.set_line(area.x, y, line, area.width);
    }
}

/// A token count people read at a glance: `950`, `1.2k`, `3.4M`.
pub(crate) fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// A duration people read at a glance: `45s`, `1m 15s`, `2h 5m`.
pub(crate) fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// Dollars with enough digits for small sums: `$0.0123`, `$1.50`.
pub(crate) fn dollars(usd: f64) -> String {
    if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_cells_not_bytes() {
        assert_eq!(cut("map the crate", 8), "map the…");
        assert_eq!(cut("日本語テキスト", 5), "日本…");
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("anything", 0), "");
        assert_eq!(cut("anything", 1), "…");
    }

    #[test]
    fn wrap_keeps_words_and_breaks_long_ones() {
        assert_eq!(wrap("cargo test --all", 10), vec!["cargo test", "--all"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\nb", 10), vec!["a", "b"]);
        assert_eq!(wrap("", 0), vec![""]);
    }

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1_234), "1.2k");
        assert_eq!(duration(75_000), "1m 15s");
        assert_eq!(dollars(0.0123), "$0.0123");
        assert_eq!(dollars(2.5), "$2.50");
    }
}
