//! The change a Write or Edit made, as unified-diff hunks for printers and transcripts (the
//! `structuredPatch` Claude Code's tools report), computed with `similar`.

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};
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
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let lines = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let marker = match change.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    };
                    let text = change.value();
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    format!("{marker}{text}")
                })
                .collect();
            Some(Hunk {
                old_start: old_range.start + 1,
                old_lines: old_range.len(),
                new_start: new_range.start + 1,
                new_lines: new_range.len(),
                lines,
            })
        })
        .collect()
}
