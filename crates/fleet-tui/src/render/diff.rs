//! Edits as diffs a person can read at a glance: line numbers, a `+`/`-` sign on every
//! changed line (so the diff reads without colour), three lines of dim context, and `⋮`
//! between hunks. Either computed here with `similar`, or taken from the `structuredPatch`
//! fleet's Edit and Write tools already report (which carries the file's real line numbers).

use super::wrap::wrap_prefixed;
use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// Unchanged lines shown around each change, as in `diff -u` and in fleet's own patches.
const CONTEXT_LINES: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Context,
    Delete,
    Insert,
}

/// One hunk; line numbers are 1-based.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hunk {
    pub old_start: usize,
    pub new_start: usize,
    pub lines: Vec<(Tag, String)>,
}

/// The hunks of a change, and what they add up to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hunks(pub Vec<Hunk>);

impl Hunks {
    /// The hunks turning `old` into `new`.
    pub fn between(old: &str, new: &str) -> Self {
        let diff = TextDiff::from_lines(old, new);
        let hunks = diff
            .grouped_ops(CONTEXT_LINES)
            .iter()
            .filter_map(|group| {
                let first = group.first()?;
                let lines = group
                    .iter()
                    .flat_map(|op| diff.iter_changes(op))
                    .map(|change| {
                        let tag = match change.tag() {
                            ChangeTag::Equal => Tag::Context,
                            ChangeTag::Delete => Tag::Delete,
                            ChangeTag::Insert => Tag::Insert,
                        };
                        let text = change.value();
                        let text = text.strip_suffix('\n').unwrap_or(text);
                        let text = text.strip_suffix('\r').unwrap_or(text);
                        (tag, text.to_string())
                    })
                    .collect();
                Some(Hunk {
                    old_start: first.old_range().start + 1,
                    new_start: first.new_range().start + 1,
                    lines,
                })
            })
            .collect();
        Self(hunks)
    }

    /// The hunks of a `structuredPatch` (`[{oldStart, newStart, lines: ["+x", "-y", " z"]}]`);
    /// `None` when the value has another shape.
    pub fn from_patch(patch: &Value) -> Option<Self> {
        let hunks = patch.as_array()?;
        let mut out = Vec::with_capacity(hunks.len());
        for hunk in hunks {
            let start = |key: &str| {
                hunk.get(key)
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
            };
            let lines = hunk
                .get("lines")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|line| {
                    let mut chars = line.chars();
                    let tag = match chars.next() {
                        Some('+') => Tag::Insert,
                        Some('-') => Tag::Delete,
                        Some(' ') | None => Tag::Context,
                        // `\ No newline at end of file` and anything else unknown.
                        Some(_) => return None,
                    };
                    Some((tag, chars.as_str().to_string()))
                })
                .collect();
            out.push(Hunk {
                old_start: start("oldStart")?,
                new_start: start("newStart")?,
                lines,
            });
        }
        Some(Self(out))
    }

    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        let mut added = 0;
        let mut removed = 0;
        for (tag, _) in self.0.iter().flat_map(|h| &h.lines) {
            match tag {
                Tag::Insert => added += 1,
                Tag::Delete => removed += 1,
                Tag::Context => {}
            }
        }
        (added, removed)
    }

    /// The diff as lines wrapped to `width`, long lines continuing under their text.
    pub fn render(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let last_number = self
            .0
            .iter()
            .map(|h| {
                let (old, new) = h.lines.iter().fold((0, 0), |(o, n), (tag, _)| match tag {
                    Tag::Context => (o + 1, n + 1),
                    Tag::Delete => (o + 1, n),
                    Tag::Insert => (o, n + 1),
                });
                (h.old_start + old).max(h.new_start + new)
            })
            .max()
            .unwrap_or(1);
        let digits = last_number.to_string().len();
        let gutter = digits + 3;
        let mut out = Vec::new();
        for (i, hunk) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(Line::from(Span::styled(
                    format!("{:>digits$}", "⋮"),
                    theme.style(Role::DiffMeta),
                )));
            }
            let (mut old_no, mut new_no) = (hunk.old_start, hunk.new_start);
            for (tag, text) in &hunk.lines {
                let (number, sign, role) = match tag {
                    Tag::Context => {
                        new_no += 1;
                        old_no += 1;
                        (new_no - 1, ' ', Role::Dim)
                    }
                    Tag::Delete => {
                        old_no += 1;
                        (old_no - 1, '-', Role::DiffDelete)
                    }
                    Tag::Insert => {
                        new_no += 1;
                        (new_no - 1, '+', Role::DiffAdd)
                    }
                };
                let number_role = if *tag == Tag::Context {
                    Role::Dim
                } else {
                    Role::DiffMeta
                };
                let first = [
                    Span::styled(format!("{number:>digits$} "), theme.style(number_role)),
                    Span::styled(format!("{sign} "), theme.style(role)),
                ];
                let rest = [Span::raw(" ".repeat(gutter))];
                let body = Line::from(Span::styled(
                    super::highlight::expand_tabs(text),
                    theme.style(role),
                ));
                out.extend(wrap_prefixed(body, width, &first, &rest));
            }
        }
        out
    }
}

/// An edit as a diff with line numbers: Edit's `old_string` → `new_string`, or a Write's new
/// content (`old` empty for a new file). `path` names the file for the reader's benefit and
/// is not shown here (the tool line above already shows it). Every line is returned; folding
/// a long diff is the caller's business.
pub fn diff(path: &str, old: &str, new: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let _ = path;
    Hunks::between(old, new).render(width, theme)
}

/// A `structuredPatch` as fleet's Edit and Write tools report it, rendered like [`diff`] but
/// with the file's own line numbers; `None` when `patch` is not such a list.
pub fn structured_patch(patch: &Value, width: u16, theme: &Theme) -> Option<Vec<Line<'static>>> {
    Hunks::from_patch(patch).map(|hunks| hunks.render(width, theme))
}
