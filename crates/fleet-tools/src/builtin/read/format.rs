//! How file text is shown to the model: numbered lines (`N<TAB>text`, as `cat -n` without the
//! padding), each cut at a fixed width so one minified line cannot flood the context.
//! Read, and the snippets Write and Edit return, all use this one format, so line numbers the
//! model sees after an edit mean the same as those Read gave it.

use std::fmt::Write as _;

/// Characters of one line shown before it is cut.
pub(crate) const MAX_LINE_CHARS: usize = 2000;

/// `line` as shown: unchanged, or its first `MAX_LINE_CHARS` characters and a marker saying how
/// long it really is. `total_chars` is the length of the whole line, which may be longer than
/// `line` when only its start was read.
pub(crate) fn cut_line(line: &str, total_chars: usize) -> String {
    let shown_chars = line.chars().count();
    if total_chars <= MAX_LINE_CHARS && shown_chars <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let end = line
        .char_indices()
        .nth(MAX_LINE_CHARS)
        .map_or(line.len(), |(at, _)| at);
    let total = total_chars.max(shown_chars);
    format!(
        "{}… [line cut: {MAX_LINE_CHARS} of {total} characters shown]",
        &line[..end]
    )
}

/// `lines` numbered from `first`, one per output line.
pub(crate) fn numbered<'a>(lines: impl IntoIterator<Item = &'a str>, first: u64) -> String {
    let mut out = String::new();
    for (number, line) in (first..).zip(lines) {
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = write!(out, "{number}\t{line}");
    }
    out
}

/// The lines `from..=to` (1-based) of `text`, numbered and cut, for the snippets Write and Edit
/// return; with the number of the last line shown, which is smaller than `to` when the text
/// ends first.
pub(crate) fn snippet(text: &str, from: u64, to: u64) -> (String, u64) {
    let from = from.max(1);
    let lines: Vec<String> = text
        .lines()
        .skip((from - 1) as usize)
        .take(to.saturating_sub(from).saturating_add(1) as usize)
        .map(|line| cut_line(line, line.chars().count()))
        .collect();
    let last = from + lines.len() as u64 - 1;
    (numbered(lines.iter().map(String::as_str), from), last)
}

/// The 1-based line on which byte `offset` of `text` lies.
pub(crate) fn line_of(text: &str, offset: usize) -> u64 {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}
