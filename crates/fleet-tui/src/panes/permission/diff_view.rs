//! The change a Write or Edit would make, as rows of the approval box: the rows the tool
//! worked out, folded and laid out as in every front end ([`ProposedChange::shown_rows`]),
//! each with the file's line number and a `-` or `+` so the diff reads without colour;
//! this module only styles them: removed lines in the theme's delete colour and added ones
//! in its add colour. The text is the model's, so hidden characters are
//! escaped as everywhere in the box; tabs become spaces and indentation is kept, and a long
//! line wraps under its text.

use crate::panes::escape::escaped;
use crate::panes::text::width as width_of;
use crate::theme::{Role, Theme};
use fleet_protocol::{DiffTag, ProposedChange, ShownRow};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// What every diff row starts with, as the path above it.
const INDENT: &str = "  ";
/// Columns a tab takes.
const TAB: &str = "    ";

/// Every row of `change` at `width` cells.
pub(crate) fn rows(change: &ProposedChange, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    if let Some(note) = change.unshown_note() {
        return vec![Line::from(vec![Span::raw(INDENT), Span::styled(note, dim)])];
    }
    let mut out = Vec::new();
    for row in change.shown_rows() {
        match row {
            ShownRow::Line {
                tag,
                number,
                sign,
                text,
            } => {
                let (role, number_role) = match tag {
                    DiffTag::Context => (Role::Dim, Role::Dim),
                    DiffTag::Delete => (Role::DiffDelete, Role::DiffMeta),
                    DiffTag::Insert => (Role::DiffAdd, Role::DiffMeta),
                };
                let lead = format!("{number} ");
                let sign = format!("{sign} ");
                let room = width.saturating_sub(INDENT.len() + lead.len() + sign.len());
                let blank = " ".repeat(lead.len() + sign.len());
                let shown = escaped(&text.replace('\t', TAB));
                for (i, part) in pieces(&shown, room.max(1)).into_iter().enumerate() {
                    let mut spans = vec![Span::raw(INDENT)];
                    if i == 0 {
                        spans.push(Span::styled(lead.clone(), theme.style(number_role)));
                        spans.push(Span::styled(sign.clone(), theme.style(role)));
                    } else {
                        spans.push(Span::raw(blank.clone()));
                    }
                    spans.push(Span::styled(part, theme.style(role)));
                    out.push(Line::from(spans));
                }
            }
            ShownRow::Gap { mark } => out.push(Line::from(vec![
                Span::raw(INDENT),
                Span::styled(mark, theme.style(Role::DiffMeta)),
            ])),
            ShownRow::Folded { note } => {
                out.push(Line::from(vec![Span::raw(INDENT), Span::styled(note, dim)]))
            }
        }
    }
    out
}

/// `text` in pieces of at most `room` cells, broken between characters so that spaces (the
/// indentation a diff is read by) stay where they are.
fn pieces(text: &str, room: usize) -> Vec<String> {
    if width_of(text) <= room {
        return vec![text.to_string()];
    }
    let mut out = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room && !row.is_empty() {
            out.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    out.push(row);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn change(lines: Vec<(DiffTag, &str)>, start: usize) -> ProposedChange {
        let lines = lines.into_iter().map(|(tag, text)| (tag, text.to_string()));
        ProposedChange::one_hunk("/p/f.rs", start, lines)
    }

    #[test]
    fn rows_keep_indentation_numbers_and_signs() {
        let shown = text(&rows(
            &change(
                vec![
                    (DiffTag::Context, "fn a() {"),
                    (DiffTag::Delete, "    old();"),
                    (DiffTag::Insert, "\tnew();"),
                ],
                9,
            ),
            80,
            &Theme::mono(),
        ));
        assert_eq!(
            shown,
            ["   9   fn a() {", "  10 -     old();", "  10 +     new();"]
        );
    }

    #[test]
    fn long_lines_wrap_under_their_text_and_escapes_show() {
        let long = format!("\u{1b}[2K{}", "y".repeat(100));
        let shown = text(&rows(
            &change(vec![(DiffTag::Insert, &long)], 1),
            40,
            &Theme::mono(),
        ));
        assert!(shown[0].starts_with("  1 + \\e[2Kyyy"), "{shown:?}");
        assert!(shown.iter().all(|r| width_of(r) <= 40), "{shown:?}");
        assert!(shown[1].starts_with("      y"), "{shown:?}");
    }
}
