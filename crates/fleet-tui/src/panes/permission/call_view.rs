//! The call a permission question is about, laid out so that no part of it can hide: this is
//! what a person reads before pressing `y`, and the model (or a file it read) wrote it.
//!
//! Two steps. [`rows`] turns the text into every row it takes at a width: hidden characters
//! escaped ([`crate::panes::escape`]), each source line's first row behind a gutter (`$ ` for the
//! first, `> ` after, as a shell prompts for continued input) and long lines wrapped whole
//! behind a blank gutter, a run of blank lines collapsed into one row that says how many, and
//! a run of more than [`LONG_SPACES`] spaces written as its count. Then [`fit`] puts those
//! rows into the rows the box can give: when they do not fit, the first rows, a
//! `… N more lines …` marker and the last rows, the last ones pinned so the end of the
//! command is always on screen, and the part above them scrolls.

use crate::panes::escape::escaped;
use crate::panes::text::{pad, width as width_of, wrap};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// A run of spaces longer than this is shown as its count (`‹5000 spaces›`): a wall of
/// spaces would otherwise push the rest of its line many rows down.
pub(crate) const LONG_SPACES: usize = 32;

/// What each row of a text starts with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gutters {
    /// The first source line's first row.
    pub first: &'static str,
    /// Every later source line's first row. Wrapped rows get blanks as wide.
    pub next: &'static str,
}

/// Bash's command: a shell's prompts.
pub(crate) const COMMAND: Gutters = Gutters {
    first: "  $ ",
    next: "  > ",
};

/// A path or a tool's input: indented only.
pub(crate) const PLAIN: Gutters = Gutters {
    first: "  ",
    next: "  ",
};

/// Every row `text` takes at `width` cells, nothing left out (see the module doc).
pub(crate) fn rows(
    text: &str,
    width: usize,
    gutters: Gutters,
    style: Style,
    dim: Style,
) -> Vec<Line<'static>> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        let gutter = if i == 0 { gutters.first } else { gutters.next };
        if is_blank(line) {
            let run = lines[i..].iter().take_while(|l| is_blank(l)).count();
            let mut spans = vec![Span::raw(gutter)];
            if run > 1 {
                spans.push(Span::styled(format!("({run} blank lines)"), dim));
            }
            out.push(Line::from(spans));
            i += run;
            continue;
        }
        let room = width.saturating_sub(width_of(gutter));
        let blank = pad("", width_of(gutter));
        for (row, part) in wrap(&shown(line), room).into_iter().enumerate() {
            let lead = if row == 0 {
                gutter.to_string()
            } else {
                blank.clone()
            };
            out.push(Line::from(vec![Span::raw(lead), Span::styled(part, style)]));
        }
        i += 1;
    }
    out
}

/// Blank as the shell sees it: spaces and tabs only. Any other character, even one that
/// looks like a space, is shown (escaped) rather than collapsed.
fn is_blank(line: &str) -> bool {
    line.chars().all(|c| c == ' ' || c == '\t')
}

/// One source line as shown: hidden characters escaped, long runs of spaces counted.
fn shown(line: &str) -> String {
    let line = escaped(line);
    let mut out = String::with_capacity(line.len());
    let mut spaces = 0;
    let flush = |out: &mut String, spaces: usize| {
        if spaces > LONG_SPACES {
            out.push_str(&format!(" ‹{spaces} spaces› "));
        } else {
            out.extend(std::iter::repeat_n(' ', spaces));
        }
    };
    for c in line.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        flush(&mut out, spaces);
        spaces = 0;
        out.push(c);
    }
    flush(&mut out, spaces);
    out
}

/// The rows that fit, and what the keys need to scroll them.
#[derive(Debug, Default)]
pub(crate) struct Fitted {
    pub lines: Vec<Line<'static>>,
    /// Whether rows were left out (the hint then names the scroll keys).
    pub elided: bool,
    /// The largest useful scroll offset at this size.
    pub max_scroll: usize,
    /// Rows one page of scrolling moves.
    pub page: usize,
}

/// `rows` in at most `room` rows, scrolled `scroll` rows down from the top. When they do not
/// fit, about half the room (at least one row) shows the last rows, always; the rest shows
/// the rows above them from `scroll` on, with a marker row for what is above and below the
/// window. Markers count rows as lines, since that is what the person sees.
pub(crate) fn fit(rows: Vec<Line<'static>>, room: usize, scroll: usize, dim: Style) -> Fitted {
    let total = rows.len();
    if total <= room {
        return Fitted {
            lines: rows,
            ..Fitted::default()
        };
    }
    if room == 0 {
        return Fitted {
            elided: true,
            ..Fitted::default()
        };
    }
    let marker = |text: String| Line::from(Span::styled(text, dim));
    let tail = ((room - 1) / 2).max(1);
    let head = room - tail;
    // Rows [0, above_tail) scroll in `head` rows.
    let above_tail = total - tail;
    let max_scroll = if head >= 2 {
        above_tail - (head - 1)
    } else {
        0
    };
    let scroll = scroll.min(max_scroll);
    let mut lines = Vec::with_capacity(room);
    if head == 1 {
        lines.push(marker(format!("  … {above_tail} more lines …")));
    } else {
        let mut window = head;
        let show_above = scroll > 0;
        let show_below = scroll < max_scroll;
        // With two rows and both markers, the window would be empty: keep the one below,
        // which counts what lies between the window and the pinned end.
        let show_above = show_above && !(show_below && head < 3);
        window -= usize::from(show_above) + usize::from(show_below);
        if show_above {
            lines.push(marker(format!("  … {scroll} lines above …")));
        }
        let end = (scroll + window).min(above_tail);
        lines.extend(rows[scroll..end].iter().cloned());
        if show_below {
            lines.push(marker(format!("  … {} more lines …", above_tail - end)));
        }
    }
    lines.extend(rows.into_iter().skip(above_tail));
    Fitted {
        lines,
        elided: true,
        max_scroll,
        page: head.saturating_sub(2).max(1),
    }
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

    fn numbered(n: usize) -> Vec<Line<'static>> {
        (0..n).map(|i| Line::from(format!("r{i}"))).collect()
    }

    #[test]
    fn blank_runs_collapse_and_say_how_many() {
        let command = format!("git status{}touch /tmp/x", "\n".repeat(120));
        let rows = rows(&command, 80, COMMAND, Style::new(), Style::new());
        assert_eq!(
            text(&rows),
            vec![
                "  $ git status",
                "  > (119 blank lines)",
                "  > touch /tmp/x"
            ]
        );
        let one = rows_of("a\n\nb");
        assert_eq!(one, vec!["  $ a", "  > ", "  > b"]);
    }

    fn rows_of(s: &str) -> Vec<String> {
        text(&rows(s, 80, COMMAND, Style::new(), Style::new()))
    }

    #[test]
    fn long_lines_wrap_and_space_walls_are_counted() {
        let long = format!("echo {}END", "x".repeat(200));
        let shown = text(&rows(&long, 40, COMMAND, Style::new(), Style::new()));
        assert!(shown.iter().all(|r| width_of(r) <= 40), "{shown:?}");
        assert!(
            shown.last().is_some_and(|r| r.ends_with("END")),
            "{shown:?}"
        );
        assert!(shown[1..].iter().all(|r| r.starts_with("    ")));
        let wall = format!("git status{}; touch x", " ".repeat(5000));
        assert_eq!(
            rows_of(&wall),
            vec!["  $ git status ‹5000 spaces› ; touch x"]
        );
        assert_eq!(rows_of("a    b"), vec!["  $ a    b"]);
    }

    #[test]
    fn fit_keeps_the_end_and_scrolls_the_rest() {
        let all = fit(numbered(5), 5, 0, Style::new());
        assert!(!all.elided);
        assert_eq!(all.lines.len(), 5);

        let top = fit(numbered(100), 10, 0, Style::new());
        let shown = text(&top.lines);
        assert_eq!(shown.len(), 10);
        assert_eq!(shown[0], "r0");
        assert_eq!(shown[5], "  … 91 more lines …");
        assert_eq!(&shown[6..], ["r96", "r97", "r98", "r99"]);

        let mid = text(&fit(numbered(100), 10, 20, Style::new()).lines);
        assert_eq!(mid[0], "  … 20 lines above …");
        assert_eq!(&mid[1..5], ["r20", "r21", "r22", "r23"]);
        assert_eq!(mid[5], "  … 72 more lines …");
        assert_eq!(mid[9], "r99");

        let bottom = fit(numbered(100), 10, usize::MAX, Style::new());
        assert_eq!(bottom.max_scroll, 91);
        let shown = text(&bottom.lines);
        assert_eq!(shown[0], "  … 91 lines above …");
        assert_eq!(
            &shown[1..],
            ["r91", "r92", "r93", "r94", "r95", "r96", "r97", "r98", "r99"]
        );

        // The smallest room still shows how much is hidden and the last row.
        assert_eq!(
            text(&fit(numbered(100), 2, 0, Style::new()).lines),
            ["  … 99 more lines …", "r99"]
        );
        assert_eq!(text(&fit(numbered(100), 1, 0, Style::new()).lines), ["r99"]);
    }
}
