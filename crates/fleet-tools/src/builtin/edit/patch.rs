//! The change a Write or Edit made, as unified-diff hunks for printers and transcripts (the
//! `structuredPatch` Claude Code's tools report), computed with `similar`.

use fleet_protocol::{ChangeKind, DiffHunk, DiffLine, DiffTag, ProposedChange, Unshown};
use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};
use std::path::Path;
use std::time::Duration;

/// Unchanged lines shown around each change, as in `diff -u`.
const CONTEXT_LINES: usize = 3;
/// After this long the diff settles for a correct but less minimal answer, so a pathological
/// pair of large files cannot stall the tool.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// One hunk; line numbers are 1-based, and each line carries its marker (`' '`, `-`, `+`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Hunk {
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    pub lines: Vec<String>,
}

/// The hunks turning `old` into `new`; empty when they are equal.
pub(crate) fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    diff_hunks(old, new)
        .into_iter()
        .map(|hunk| {
            let (mut old_lines, mut new_lines) = (0, 0);
            let lines = hunk
                .lines
                .into_iter()
                .map(|line| {
                    let marker = match line.tag {
                        DiffTag::Context => {
                            old_lines += 1;
                            new_lines += 1;
                            ' '
                        }
                        DiffTag::Delete => {
                            old_lines += 1;
                            '-'
                        }
                        DiffTag::Insert => {
                            new_lines += 1;
                            '+'
                        }
                    };
                    format!("{marker}{}", line.text)
                })
                .collect();
            Hunk {
                old_start: hunk.old_start,
                old_lines,
                new_start: hunk.new_start,
                new_lines,
                lines,
            }
        })
        .collect()
}

/// The same hunks, typed: what a permission question shows before the change is made.
pub(crate) fn diff_hunks(old: &str, new: &str) -> Vec<DiffHunk> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter_map(|group| {
            let first = group.first()?;
            let lines = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let tag = match change.tag() {
                        ChangeTag::Equal => DiffTag::Context,
                        ChangeTag::Delete => DiffTag::Delete,
                        ChangeTag::Insert => DiffTag::Insert,
                    };
                    let text = change.value();
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    DiffLine {
                        tag,
                        text: text.to_string(),
                    }
                })
                .collect();
            Some(DiffHunk {
                old_start: first.old_range().start + 1,
                new_start: first.new_range().start + 1,
                lines,
            })
        })
        .collect()
}

/// Texts larger than this are not diffed for a permission question: the question says the file
/// would be replaced, and the tool's own limits still apply when it runs.
const MAX_PROPOSED_BYTES: usize = 8 * 1024 * 1024;

/// The change a call would make to `path`, as a permission question shows it.
pub(crate) fn proposed(path: &Path, kind: ChangeKind, old: &str, new: &str) -> ProposedChange {
    let too_large = old.len() > MAX_PROPOSED_BYTES || new.len() > MAX_PROPOSED_BYTES;
    ProposedChange {
        path: path.to_path_buf(),
        kind,
        hunks: if too_large {
            Vec::new()
        } else {
            diff_hunks(old, new)
        },
        unshown: too_large.then_some(Unshown::TooLarge),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fleet_protocol::{DiffRow, FOLD_HEAD, FOLD_TAIL};

    #[test]
    fn a_proposed_edit_numbers_lines_as_the_file_does() {
        let old: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 30\n", "LINE THIRTY\nline 30b\n");
        let change = proposed(Path::new("/p/f.txt"), ChangeKind::Update, &old, &new);
        let rows = change.rows(FOLD_HEAD, FOLD_TAIL);
        let changed: Vec<(DiffTag, usize, &str)> = rows
            .iter()
            .filter_map(|r| match *r {
                DiffRow::Line { tag, number, text } if tag != DiffTag::Context => {
                    Some((tag, number, text))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            changed,
            [
                (DiffTag::Delete, 30, "line 30"),
                (DiffTag::Insert, 30, "LINE THIRTY"),
                (DiffTag::Insert, 31, "line 30b"),
            ]
        );
        assert!(matches!(
            rows[0],
            DiffRow::Line {
                number: 27,
                tag: DiffTag::Context,
                ..
            }
        ));
        assert_eq!(change.summary(), "2 lines added, 1 removed");
    }

    #[test]
    fn a_new_file_is_all_added_lines() {
        let change = proposed(Path::new("/p/n.txt"), ChangeKind::Create, "", "a\nb\n");
        assert_eq!(change.counts(), (2, 0));
        assert_eq!(change.hunks[0].new_start, 1);
    }

    #[test]
    fn structured_patches_keep_their_shape() {
        let hunks = hunks("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            hunks,
            [Hunk {
                old_start: 1,
                old_lines: 3,
                new_start: 1,
                new_lines: 3,
                lines: vec![" a".into(), "-b".into(), "+B".into(), " c".into()],
            }]
        );
    }
}
