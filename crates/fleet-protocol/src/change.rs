//! A change to a file that a Write or Edit call would make, computed before the person is
//! asked so the question can show it: the file's own line numbers, removed and added lines.
//!
//! The tool computes the diff once ([`ProposedChange`]); each front end (the terminal prompt of
//! `-p`, the terminal UI's approval box) draws the same rows ([`ProposedChange::rows`]), folded
//! the same way when the change is long, so a screen never fills with one new file, and laid
//! out the same way ([`ProposedChange::shown_rows`]: the gutter's numbers, the signs, the gap
//! and fold lines), so each front end only styles them and the two never drift apart.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Diff lines shown before the fold of a long change.
pub const FOLD_HEAD: usize = 12;
/// Diff lines shown after the fold: the end of the change stays in sight, as the end of a
/// command does. With [`FOLD_HEAD`], the rows fit a 24-row terminal beside the answers.
pub const FOLD_TAIL: usize = 6;

/// What a call would do to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedChange {
    /// The file, as the call names it (absolute).
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// The hunks turning the file's text into the new text; a new file is one hunk of added
    /// lines. Empty when nothing changes, or when the diff was not computed (see `unshown`).
    pub hunks: Vec<DiffHunk>,
    /// Why no diff is shown although the file would change (too large, not text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unshown: Option<Unshown>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The file does not exist yet.
    Create,
    /// The file exists and is replaced or edited.
    Update,
}

/// Why a change carries no diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unshown {
    /// The old or the new text is larger than the diff is computed for.
    TooLarge,
    /// The file now on disk is not UTF-8 text.
    NotText,
}

/// One hunk; line numbers are 1-based, as the file's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffHunk {
    pub old_start: usize,
    pub new_start: usize,
    pub lines: Vec<DiffLine>,
}

/// One line of a hunk, without its line ending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub tag: DiffTag,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffTag {
    /// Unchanged, shown around a change.
    Context,
    /// Removed from the file.
    Delete,
    /// Added to the file.
    Insert,
}

/// One row of a change as front ends draw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffRow<'a> {
    /// A line of the diff and its number in the file: the old file's for a removed line, the
    /// new file's for an added or unchanged one.
    Line {
        tag: DiffTag,
        number: usize,
        text: &'a str,
    },
    /// Unchanged lines between two hunks, left out.
    Gap,
    /// This many diff lines left out of a long change.
    Folded { lines: usize },
}

/// One row of a change laid out for drawing: what it says, without styling or wrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShownRow<'a> {
    /// A diff line: `number` is its line number right-aligned to the widest one shown (so the
    /// gutters line up), `sign` is `-`, `+` or a space (the diff reads without colour), and
    /// `text` is the line as it is in the file (the front end escapes it).
    Line {
        tag: DiffTag,
        number: String,
        sign: char,
        text: &'a str,
    },
    /// Unchanged lines left out between hunks: `⋮` under the line numbers.
    Gap { mark: String },
    /// Lines folded out of a long change: "… 3 more lines".
    Folded { note: String },
}

impl DiffTag {
    /// The sign a diff line of this kind is shown with.
    pub fn sign(self) -> char {
        match self {
            DiffTag::Context => ' ',
            DiffTag::Delete => '-',
            DiffTag::Insert => '+',
        }
    }
}

impl Unshown {
    /// Why no diff is shown, in words.
    pub fn reason(self) -> &'static str {
        match self {
            Unshown::TooLarge => "the file is too large to compare",
            Unshown::NotText => "the file now there is not UTF-8 text",
        }
    }
}

impl ProposedChange {
    /// An update of `path` whose lines are one hunk starting at `start` in both versions (an
    /// edit of one region, as the renderers' tests and small callers build it).
    pub fn one_hunk(
        path: impl Into<PathBuf>,
        start: usize,
        lines: impl IntoIterator<Item = (DiffTag, String)>,
    ) -> Self {
        Self {
            path: path.into(),
            kind: ChangeKind::Update,
            hunks: vec![DiffHunk {
                old_start: start,
                new_start: start,
                lines: lines
                    .into_iter()
                    .map(|(tag, text)| DiffLine { tag, text })
                    .collect(),
            }],
            unshown: None,
        }
    }

    /// Lines added and lines removed.
    pub fn counts(&self) -> (usize, usize) {
        let mut added = 0;
        let mut removed = 0;
        for line in self.hunks.iter().flat_map(|h| &h.lines) {
            match line.tag {
                DiffTag::Insert => added += 1,
                DiffTag::Delete => removed += 1,
                DiffTag::Context => {}
            }
        }
        (added, removed)
    }

    /// "3 lines added, 1 removed", "new file, 12 lines", "no change": the change in words.
    pub fn summary(&self) -> String {
        let (added, removed) = self.counts();
        let lines = |n: usize| if n == 1 { "line" } else { "lines" };
        match (self.kind, self.unshown) {
            (ChangeKind::Create, None) => format!("new file, {added} {}", lines(added)),
            (ChangeKind::Create, Some(_)) => "new file".into(),
            (ChangeKind::Update, Some(_)) => "replaces the file".into(),
            (ChangeKind::Update, None) => match (added, removed) {
                (0, 0) => "no change".into(),
                (a, 0) => format!("{a} {} added", lines(a)),
                (0, r) => format!("{r} {} removed", lines(r)),
                (a, r) => format!("{a} {} added, {r} removed", lines(a)),
            },
        }
    }

    /// Every row, in order, with line numbers: [`DiffRow::Gap`] between hunks, no folding.
    pub fn all_rows(&self) -> Vec<DiffRow<'_>> {
        let mut out = Vec::new();
        for (i, hunk) in self.hunks.iter().enumerate() {
            if i > 0 {
                out.push(DiffRow::Gap);
            }
            let (mut old, mut new) = (hunk.old_start, hunk.new_start);
            for line in &hunk.lines {
                let number = match line.tag {
                    DiffTag::Context => {
                        old += 1;
                        new += 1;
                        new - 1
                    }
                    DiffTag::Delete => {
                        old += 1;
                        old - 1
                    }
                    DiffTag::Insert => {
                        new += 1;
                        new - 1
                    }
                };
                out.push(DiffRow::Line {
                    tag: line.tag,
                    number,
                    text: &line.text,
                });
            }
        }
        out
    }

    /// The rows to draw: all of them when the diff has at most `head + tail + 1` lines;
    /// otherwise the first `head` diff lines, one [`DiffRow::Folded`] that counts the rest
    /// but the last `tail`, and those (gaps inside the fold go with it). A fold never hides
    /// a single line: showing it takes no more room than saying so.
    pub fn rows(&self, head: usize, tail: usize) -> Vec<DiffRow<'_>> {
        let all = self.all_rows();
        let total = all
            .iter()
            .filter(|r| matches!(r, DiffRow::Line { .. }))
            .count();
        if total <= head + tail + 1 {
            return all;
        }
        let hidden = total - head - tail;
        let tail_from = head + hidden;
        let mut out = Vec::with_capacity(head + tail + 3);
        // Diff lines before the current row.
        let mut seen = 0;
        for row in all {
            match row {
                DiffRow::Line { .. } => {
                    if seen == head {
                        out.push(DiffRow::Folded { lines: hidden });
                    }
                    if seen < head || seen >= tail_from {
                        out.push(row);
                    }
                    seen += 1;
                }
                // Between line `seen - 1` and line `seen`: kept only when both are shown on
                // the same side of the fold.
                _ if seen < head || seen > tail_from => out.push(row),
                _ => {}
            }
        }
        out
    }

    /// What a front end shows instead of rows when there is no diff: `(no diff shown: …)`.
    pub fn unshown_note(&self) -> Option<String> {
        self.unshown
            .map(|why| format!("(no diff shown: {})", why.reason()))
    }

    /// The rows to draw ([`Self::rows`] folded at [`FOLD_HEAD`] and [`FOLD_TAIL`]), laid out.
    pub fn shown_rows(&self) -> impl Iterator<Item = ShownRow<'_>> {
        let rows = self.rows(FOLD_HEAD, FOLD_TAIL);
        let digits = Self::number_width(&rows);
        rows.into_iter().map(move |row| match row {
            DiffRow::Line { tag, number, text } => ShownRow::Line {
                tag,
                number: format!("{number:>digits$}"),
                sign: tag.sign(),
                text,
            },
            DiffRow::Gap => ShownRow::Gap {
                mark: format!("{:>digits$}", "⋮"),
            },
            DiffRow::Folded { lines } => ShownRow::Folded {
                note: format!(
                    "… {lines} more {}",
                    if lines == 1 { "line" } else { "lines" }
                ),
            },
        })
    }

    /// Digits of the largest line number the rows show, so their gutters line up.
    pub fn number_width(rows: &[DiffRow<'_>]) -> usize {
        rows.iter()
            .filter_map(|r| match r {
                DiffRow::Line { number, .. } => Some(*number),
                _ => None,
            })
            .max()
            .unwrap_or(1)
            .to_string()
            .len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(tag: DiffTag, text: &str) -> DiffLine {
        DiffLine {
            tag,
            text: text.into(),
        }
    }

    fn created(n: usize) -> ProposedChange {
        ProposedChange {
            path: "/p/new.txt".into(),
            kind: ChangeKind::Create,
            hunks: vec![DiffHunk {
                old_start: 1,
                new_start: 1,
                lines: (1..=n)
                    .map(|i| line(DiffTag::Insert, &format!("line {i}")))
                    .collect(),
            }],
            unshown: None,
        }
    }

    fn shown(rows: &[DiffRow<'_>]) -> Vec<String> {
        rows.iter()
            .map(|r| match r {
                DiffRow::Line { tag, number, text } => {
                    let sign = match tag {
                        DiffTag::Context => ' ',
                        DiffTag::Delete => '-',
                        DiffTag::Insert => '+',
                    };
                    format!("{number}{sign}{text}")
                }
                DiffRow::Gap => "⋮".into(),
                DiffRow::Folded { lines } => format!("…{lines}"),
            })
            .collect()
    }

    #[test]
    fn rows_carry_the_files_line_numbers() {
        let change = ProposedChange {
            path: "/p/a.rs".into(),
            kind: ChangeKind::Update,
            hunks: vec![
                DiffHunk {
                    old_start: 40,
                    new_start: 40,
                    lines: vec![
                        line(DiffTag::Context, "a"),
                        line(DiffTag::Delete, "b"),
                        line(DiffTag::Delete, "c"),
                        line(DiffTag::Insert, "B"),
                        line(DiffTag::Context, "d"),
                    ],
                },
                DiffHunk {
                    old_start: 100,
                    new_start: 99,
                    lines: vec![line(DiffTag::Context, "x"), line(DiffTag::Insert, "y")],
                },
            ],
            unshown: None,
        };
        assert_eq!(
            shown(&change.rows(FOLD_HEAD, FOLD_TAIL)),
            ["40 a", "41-b", "42-c", "41+B", "42 d", "⋮", "99 x", "100+y"]
        );
        assert_eq!(change.counts(), (2, 2));
        assert_eq!(change.summary(), "2 lines added, 2 removed");
        assert_eq!(
            ProposedChange::number_width(&change.rows(FOLD_HEAD, FOLD_TAIL)),
            3
        );
    }

    #[test]
    fn a_long_change_folds_between_its_first_and_last_lines() {
        let change = created(500);
        let rows = change.rows(12, 6);
        let text = shown(&rows);
        assert_eq!(text.len(), 12 + 1 + 6);
        assert_eq!(text[0], "1+line 1");
        assert_eq!(text[11], "12+line 12");
        assert_eq!(text[12], "…482");
        assert_eq!(text[13], "495+line 495");
        assert_eq!(text[18], "500+line 500");
        assert_eq!(change.summary(), "new file, 500 lines");
    }

    #[test]
    fn a_fold_never_hides_just_one_line() {
        assert_eq!(created(19).rows(12, 6).len(), 19);
        let twenty = created(20);
        let rows = twenty.rows(12, 6);
        assert_eq!(rows.len(), 19);
        assert_eq!(rows[12], DiffRow::Folded { lines: 2 });
    }

    #[test]
    fn gaps_inside_the_fold_go_and_gaps_outside_stay() {
        let hunk = |start: usize, n: usize| DiffHunk {
            old_start: start,
            new_start: start,
            lines: (0..n)
                .map(|i| line(DiffTag::Insert, &format!("{}", start + i)))
                .collect(),
        };
        let change = ProposedChange {
            path: "/p/a".into(),
            kind: ChangeKind::Update,
            hunks: vec![hunk(1, 2), hunk(10, 20), hunk(50, 3), hunk(60, 2)],
            unshown: None,
        };
        let text = shown(&change.rows(4, 4));
        assert_eq!(
            text,
            [
                "1+1", "2+2", "⋮", "10+10", "11+11", "…19", "51+51", "52+52", "⋮", "60+60", "61+61"
            ]
        );
    }

    #[test]
    fn shown_rows_line_up_numbers_and_say_what_is_left_out() {
        let change = created(FOLD_HEAD + FOLD_TAIL + 3);
        let shown: Vec<ShownRow<'_>> = change.shown_rows().collect();
        assert_eq!(
            shown[0],
            ShownRow::Line {
                tag: DiffTag::Insert,
                number: " 1".into(),
                sign: '+',
                text: &change.hunks[0].lines[0].text,
            }
        );
        assert_eq!(
            shown[FOLD_HEAD],
            ShownRow::Folded {
                note: "… 3 more lines".into()
            }
        );
        assert_eq!(shown.len(), FOLD_HEAD + 1 + FOLD_TAIL);
        assert_eq!(change.unshown_note(), None);
        let unshown = ProposedChange {
            unshown: Some(Unshown::NotText),
            ..change.clone()
        };
        assert_eq!(
            unshown.unshown_note().as_deref(),
            Some("(no diff shown: the file now there is not UTF-8 text)")
        );
    }

    #[test]
    fn summaries_read_as_words() {
        let mut change = created(1);
        assert_eq!(change.summary(), "new file, 1 line");
        change.kind = ChangeKind::Update;
        assert_eq!(change.summary(), "1 line added");
        change.hunks.clear();
        assert_eq!(change.summary(), "no change");
        change.unshown = Some(Unshown::TooLarge);
        assert_eq!(change.summary(), "replaces the file");
    }
}
