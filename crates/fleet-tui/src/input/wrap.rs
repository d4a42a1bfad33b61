//! Where the composer's text falls on screen: logical lines wrapped into rows at a width,
//! measured in display columns (a CJK character or an emoji takes two), and the mapping
//! between a byte offset and a (row, column). Rendering, the cursor and Up/Down all use this
//! one layout, so what a person sees and where the cursor moves never disagree.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns a tab takes; tabs are drawn as spaces, not aligned to stops.
const TAB_WIDTH: usize = 4;

/// One screen row: `start..end` of the text (no line break inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub start: usize,
    pub end: usize,
    /// The row ends in a soft wrap (its logical line goes on in the next row).
    pub soft: bool,
}

/// Display width of one grapheme; control characters other than tab take none.
pub fn grapheme_width(g: &str) -> usize {
    if g == "\t" {
        TAB_WIDTH
    } else if g.contains(char::is_control) {
        0
    } else {
        g.width()
    }
}

pub fn display_width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

/// What to hand the buffer: tabs as spaces, other control characters dropped.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for g in s.graphemes(true) {
        if g == "\t" {
            out.push_str(&" ".repeat(TAB_WIDTH));
        } else if !g.contains(char::is_control) {
            out.push_str(g);
        }
    }
    out
}

/// The longest prefix of `s` that fits in `width` columns, with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if display_width(s) <= width {
        return printable(s);
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = grapheme_width(g);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push_str(&printable(g));
    }
    out.push('…');
    out
}

/// Wraps `text` to `width` columns (at least 1), at blanks when a row has one, else anywhere.
/// A logical line that fills its last row exactly gets an empty row after it, so a cursor at
/// its end has somewhere to stand.
pub fn wrap(text: &str, width: usize) -> Vec<Row> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        wrap_line(line, line_start, width, &mut rows);
        line_start += line.len() + 1;
    }
    rows
}

fn wrap_line(line: &str, offset: usize, width: usize, rows: &mut Vec<Row>) {
    let mut start = 0;
    let mut used = 0;
    // Byte just after the last blank in the current row, and the width up to it.
    let mut blank: Option<(usize, usize)> = None;
    for (i, g) in line.grapheme_indices(true) {
        let w = grapheme_width(g);
        while used + w > width && i > start {
            let (cut, cut_used) = match blank {
                Some((b, bw)) if b > start && b <= i => (b, bw),
                _ => (i, used),
            };
            rows.push(Row {
                start: offset + start,
                end: offset + cut,
                soft: true,
            });
            start = cut;
            used -= cut_used;
            blank = None;
        }
        used += w;
        if g.chars().all(char::is_whitespace) {
            blank = Some((i + g.len(), used));
        }
    }
    rows.push(Row {
        start: offset + start,
        end: offset + line.len(),
        soft: false,
    });
    if used >= width {
        rows.push(Row {
            start: offset + line.len(),
            end: offset + line.len(),
            soft: false,
        });
        if let Some(full) = rows.iter_mut().rev().nth(1) {
            full.soft = true;
        }
    }
}

/// The (row, column) of byte `pos`; at a soft wrap the cursor belongs to the next row.
pub fn position(text: &str, rows: &[Row], pos: usize) -> (usize, usize) {
    let index = rows
        .iter()
        .rposition(|r| r.start <= pos && pos <= r.end)
        .unwrap_or(0);
    let Some(row) = rows.get(index) else {
        return (0, 0);
    };
    let pos = pos.clamp(row.start, row.end);
    (index, display_width(&text[row.start..pos]))
}

/// The byte in `row` nearest to `column` without passing it. A soft-wrapped row stops before
/// its last grapheme, or the cursor would show on the next row.
pub fn offset_at(text: &str, row: &Row, column: usize) -> usize {
    let slice = &text[row.start..row.end];
    let mut used = 0;
    let mut last = row.start;
    for (i, g) in slice.grapheme_indices(true) {
        let w = grapheme_width(g);
        if used + w > column {
            return row.start + i;
        }
        used += w;
        last = row.start + i;
    }
    if row.soft {
        last
    } else {
        row.end
    }
}
