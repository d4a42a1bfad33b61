//! Word wrap of styled lines. Every renderer produces logical lines and wraps them here, so
//! the rules (keep spans, break between words, hard-split what cannot fit, measure in terminal
//! cells rather than bytes or chars) live in one place.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Lines wrapped to `width` cells, styles kept, words kept whole where they fit. A width of 0
/// returns the lines unchanged: there is nothing sensible to wrap to, and nothing may panic.
pub fn wrap(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    if width == 0 {
        return lines;
    }
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        wrap_into(&line, usize::from(width), &mut out);
    }
    out
}

/// One line wrapped with a hanging prefix: `first` before the first row, `rest` before every
/// row after it (a bullet then its indent, `  ⎿ ` then spaces, a quote bar on every row). The
/// text wraps to what is left of `width` after the prefix, and to at least one cell.
pub fn wrap_prefixed(
    line: Line<'static>,
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let first_w = spans_width(first);
    let rest_w = spans_width(rest);
    let prefix_w = first_w.max(rest_w);
    let avail = usize::from(width).saturating_sub(prefix_w).max(1);
    let mut rows = Vec::new();
    if width == 0 {
        rows.push(line);
    } else {
        wrap_into(&line, avail, &mut rows);
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let prefix = if i == 0 { first } else { rest };
        if !prefix.is_empty() {
            let mut spans = Vec::with_capacity(prefix.len() + row.spans.len());
            spans.extend_from_slice(prefix);
            spans.append(&mut row.spans);
            row.spans = spans;
        }
    }
    rows
}

/// Cells a run of spans takes on screen.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// `text` cut to at most `max` cells, ending in `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `text` cut to at most `max` cells from the left, starting with `…` (the end of a long path
/// is the part that names the file).
pub fn truncate_left(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 0;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        used += w;
        kept.push(c);
    }
    let mut out = String::from("…");
    out.extend(kept.into_iter().rev());
    out
}

/// A piece of one span: the span's style and a byte range of its text.
#[derive(Clone, Copy)]
struct Piece<'a> {
    style: Style,
    text: &'a str,
}

/// Builds the rows of one logical line.
struct Rows<'a> {
    template: &'a Line<'static>,
    width: usize,
    row: Vec<Span<'static>>,
    used: usize,
    /// Spaces seen after the last word, written only if another word follows on this row.
    pending_space: Vec<Piece<'a>>,
    pending_w: usize,
    out: &'a mut Vec<Line<'static>>,
    rows_made: usize,
}

impl<'a> Rows<'a> {
    fn push_piece(&mut self, piece: Piece<'_>) {
        if piece.text.is_empty() {
            return;
        }
        self.used += piece.text.width();
        if let Some(last) = self.row.last_mut() {
            if last.style == piece.style {
                last.content.to_mut().push_str(piece.text);
                return;
            }
        }
        self.row
            .push(Span::styled(piece.text.to_string(), piece.style));
    }

    fn break_row(&mut self) {
        let mut line = Line::from(std::mem::take(&mut self.row));
        line.style = self.template.style;
        line.alignment = self.template.alignment;
        self.out.push(line);
        self.used = 0;
        self.pending_space.clear();
        self.pending_w = 0;
        self.rows_made += 1;
    }

    fn space(&mut self, piece: Piece<'a>) {
        // Leading spaces of the first row are indentation and kept; at the start of a
        // wrapped row they are dropped.
        if self.used == 0 && self.rows_made > 0 {
            return;
        }
        self.pending_w += piece.text.width();
        self.pending_space.push(piece);
    }

    fn word(&mut self, pieces: &[Piece<'_>]) {
        let word_w: usize = pieces.iter().map(|p| p.text.width()).sum();
        if self.used + self.pending_w + word_w <= self.width {
            self.flush_space();
            for p in pieces {
                self.push_piece(*p);
            }
            return;
        }
        if self.used > 0 {
            self.break_row();
        } else {
            // Indentation that leaves no room for the word goes.
            self.pending_space.clear();
            self.pending_w = 0;
        }
        if word_w <= self.width {
            for p in pieces {
                self.push_piece(*p);
            }
            return;
        }
        self.hard_split(pieces);
    }

    fn flush_space(&mut self) {
        let spaces = std::mem::take(&mut self.pending_space);
        for p in spaces {
            self.push_piece(p);
        }
        self.pending_w = 0;
    }

    /// A word wider than the row: as many characters per row as fit, at least one.
    fn hard_split(&mut self, pieces: &[Piece<'_>]) {
        for p in pieces {
            let mut start = 0;
            let mut seg_w = 0;
            for (i, c) in p.text.char_indices() {
                let w = c.width().unwrap_or(0);
                if self.used + seg_w + w > self.width && self.used + seg_w > 0 {
                    self.push_piece(Piece {
                        style: p.style,
                        text: &p.text[start..i],
                    });
                    self.break_row();
                    start = i;
                    seg_w = 0;
                }
                seg_w += w;
            }
            self.push_piece(Piece {
                style: p.style,
                text: &p.text[start..],
            });
        }
    }
}

fn wrap_into(line: &Line<'static>, width: usize, out: &mut Vec<Line<'static>>) {
    let mut rows = Rows {
        template: line,
        width,
        row: Vec::new(),
        used: 0,
        pending_space: Vec::new(),
        pending_w: 0,
        out,
        rows_made: 0,
    };
    let mut word: Vec<Piece<'_>> = Vec::new();
    for span in &line.spans {
        let style = span.style;
        let text: &str = &span.content;
        let mut start = 0;
        let mut in_space: Option<bool> = None;
        for (i, c) in text.char_indices() {
            let is_space = c == ' ';
            if in_space.is_none() && is_space && !word.is_empty() {
                // A word ended with the span before this one.
                rows.word(&word);
                word.clear();
            }
            match in_space {
                Some(prev) if prev != is_space => {
                    let piece = Piece {
                        style,
                        text: &text[start..i],
                    };
                    if prev {
                        rows.space(piece);
                    } else {
                        word.push(piece);
                        rows.word(&word);
                        word.clear();
                    }
                    start = i;
                }
                _ => {}
            }
            in_space = Some(is_space);
        }
        let piece = Piece {
            style,
            text: &text[start..],
        };
        match in_space {
            Some(true) => {
                if !word.is_empty() {
                    rows.word(&word);
                    word.clear();
                }
                rows.space(piece);
            }
            // A word may go on in the next span (`**bold**text`): keep collecting it.
            Some(false) => word.push(piece),
            None => {}
        }
    }
    if !word.is_empty() {
        rows.word(&word);
    }
    rows.break_row();
}
