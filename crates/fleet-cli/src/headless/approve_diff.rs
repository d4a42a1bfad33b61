//! The change a Write or Edit would make, in the terminal's approval question: the rows the
//! tool worked out, folded and laid out as in every front end
//! ([`ProposedChange::shown_rows`]), each behind the question's gutter with the file's line
//! number and a `-` or `+`, so the diff reads without colour.
//! With colour (stderr a terminal, `NO_COLOR` unset) removed lines are red and added ones
//! green. The text is the model's: control characters are shown as escapes, tabs as spaces,
//! and long lines wrap under their text, never past the terminal's width.

use super::approve::GUTTER;
use crate::visible::visible_line;
use fleet_protocol::{DiffTag, ProposedChange, ShownRow};
use unicode_width::UnicodeWidthChar;

const RED: &str = "\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const DIM: &str = "\u{1b}[2m";
const RESET: &str = "\u{1b}[0m";

/// Columns a tab takes in a shown line.
const TAB: &str = "    ";

/// Whether the question may colour the diff: `NO_COLOR` (any non-empty value) says no. Only
/// asked when stderr is a terminal, since the question is asked only then.
pub(crate) fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The change's rows, each a line of at most `width` columns (escape codes aside) ending in
/// a newline.
pub(crate) fn rows(change: &ProposedChange, width: usize, colour: bool) -> String {
    let mut out = String::new();
    if let Some(note) = change.unshown_note() {
        push_row(&mut out, &note, DIM, colour);
        return out;
    }
    let room = width.saturating_sub(GUTTER.chars().count()).max(20);
    for row in change.shown_rows() {
        match row {
            ShownRow::Line {
                tag,
                number,
                sign,
                text,
            } => {
                let paint = match tag {
                    DiffTag::Context => "",
                    DiffTag::Delete => RED,
                    DiffTag::Insert => GREEN,
                };
                let lead = format!("{number} {sign} ");
                let text = visible_line(&text.replace('\t', TAB)).into_owned();
                let wrapped = wrap(&text, room.saturating_sub(lead.len()).max(10));
                for (i, part) in wrapped.iter().enumerate() {
                    let lead = if i == 0 {
                        lead.clone()
                    } else {
                        " ".repeat(lead.len())
                    };
                    push_row(&mut out, &format!("{lead}{part}"), paint, colour);
                }
            }
            ShownRow::Gap { mark } => push_row(&mut out, &mark, DIM, colour),
            ShownRow::Folded { note } => push_row(&mut out, &note, DIM, colour),
        }
    }
    out
}

fn push_row(out: &mut String, text: &str, paint: &str, colour: bool) {
    out.push_str(GUTTER);
    if colour && !paint.is_empty() {
        out.push_str(paint);
        out.push_str(text.trim_end());
        out.push_str(RESET);
    } else {
        out.push_str(text.trim_end());
    }
    out.push('\n');
}

/// `text` in pieces of at most `room` columns.
fn wrap(text: &str, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
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
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fleet_protocol::{ChangeKind, FOLD_HEAD, FOLD_TAIL};

    fn change(lines: Vec<(DiffTag, &str)>, start: usize) -> ProposedChange {
        let lines = lines.into_iter().map(|(tag, text)| (tag, text.to_string()));
        ProposedChange::one_hunk("/p/f.rs", start, lines)
    }

    #[test]
    fn rows_show_line_numbers_and_signs_without_colour() {
        let shown = rows(
            &change(
                vec![
                    (DiffTag::Context, "fn a() {"),
                    (DiffTag::Delete, "    old();"),
                    (DiffTag::Insert, "    new();"),
                    (DiffTag::Context, "}"),
                ],
                9,
            ),
            80,
            false,
        );
        assert_eq!(
            shown,
            "  │  9   fn a() {\n  │ 10 -     old();\n  │ 10 +     new();\n  │ 11   }\n"
        );
    }

    #[test]
    fn colour_marks_removed_red_and_added_green_and_resets_each_row() {
        let shown = rows(
            &change(vec![(DiffTag::Delete, "x"), (DiffTag::Insert, "y")], 1),
            80,
            true,
        );
        assert_eq!(
            shown,
            "  │ \u{1b}[31m1 - x\u{1b}[0m\n  │ \u{1b}[32m1 + y\u{1b}[0m\n"
        );
    }

    #[test]
    fn the_models_text_cannot_drive_the_terminal_and_long_lines_wrap() {
        let long = format!("\u{1b}[2K{}", "z".repeat(200));
        let shown = rows(&change(vec![(DiffTag::Insert, &long)], 1), 60, false);
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(shown.starts_with("  │ 1 + \\e[2Kzzz"), "{shown}");
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines.len() > 3, "{shown}");
        assert!(lines.iter().all(|l| l.chars().count() <= 60), "{shown}");
        assert!(lines[1].starts_with("  │     z"), "{shown}");
    }

    #[test]
    fn a_long_change_is_folded() {
        let texts: Vec<String> = (1..=300).map(|i| format!("row {i}")).collect();
        let lines = texts
            .iter()
            .map(|t| (DiffTag::Insert, t.as_str()))
            .collect();
        let mut created = change(lines, 1);
        created.kind = ChangeKind::Create;
        let shown = rows(&created, 80, false);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), FOLD_HEAD + 1 + FOLD_TAIL, "{shown}");
        assert_eq!(lines[0], "  │   1 + row 1");
        assert_eq!(
            lines[FOLD_HEAD],
            format!("  │ … {} more lines", 300 - FOLD_HEAD - FOLD_TAIL)
        );
        assert_eq!(lines.last(), Some(&"  │ 300 + row 300"));
    }
}
