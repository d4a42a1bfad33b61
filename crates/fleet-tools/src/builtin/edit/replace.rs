//! Finding `old_string` in a file and replacing it, with the allowances the model needs:
//! line endings follow the file (a model writes `\n`; a CRLF file stays CRLF), and when nothing
//! matches, a search that ignores whitespace and quote styles says where the model probably
//! meant.

use std::borrow::Cow;

/// The result of a successful replacement.
#[derive(Debug)]
pub(crate) struct Applied {
    pub content: String,
    /// How many places were replaced.
    pub count: usize,
    /// Byte offset in `content` where the first replacement starts, and its length.
    pub first_at: usize,
    pub first_len: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Mismatch {
    NotFound,
    /// Found this many times (at these byte offsets, the first few) but replace_all is off.
    Many {
        count: usize,
        offsets: Vec<usize>,
    },
}

/// Match offsets reported for an ambiguous old_string.
const MAX_OFFSETS_REPORTED: usize = 10;

/// Replaces `old` (non-empty) by `new` in `content`: exactly one occurrence, or all of them
/// with `replace_all`.
pub(crate) fn apply(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Applied, Mismatch> {
    let (old, new) = choose_variant(content, old, new).ok_or(Mismatch::NotFound)?;
    let (old, new) = extend_deletion(content, old, new);
    let count = content.matches(old.as_ref()).count();
    if count > 1 && !replace_all {
        let offsets = content
            .match_indices(old.as_ref())
            .take(MAX_OFFSETS_REPORTED)
            .map(|(at, _)| at)
            .collect();
        return Err(Mismatch::Many { count, offsets });
    }
    let first_at = content.find(old.as_ref()).ok_or(Mismatch::NotFound)?;
    let replaced = if replace_all {
        content.replace(old.as_ref(), &new)
    } else {
        content.replacen(old.as_ref(), &new, 1)
    };
    Ok(Applied {
        content: replaced,
        count,
        first_at,
        first_len: new.len(),
    })
}

/// The form of `old`/`new` to use: as given, or with line endings changed to the file's.
fn choose_variant<'a>(
    content: &str,
    old: &'a str,
    new: &'a str,
) -> Option<(Cow<'a, str>, Cow<'a, str>)> {
    if uses_crlf(content) {
        // New lines always follow the file; the old text as given is tried too in case the
        // file mixes endings.
        let new = to_crlf(new);
        [to_crlf(old), Cow::Borrowed(old)]
            .into_iter()
            .find(|old| content.contains(old.as_ref()))
            .map(|old| (old, new))
    } else if content.contains(old) {
        Some((Cow::Borrowed(old), Cow::Borrowed(new)))
    } else {
        let old = to_lf(old);
        content.contains(old.as_ref()).then(|| (old, to_lf(new)))
    }
}

/// Deleting a whole line's text should delete the line: when `new` is empty and every match is
/// followed by a line ending, the ending goes too, so no blank line is left behind.
fn extend_deletion<'a>(
    content: &str,
    old: Cow<'a, str>,
    new: Cow<'a, str>,
) -> (Cow<'a, str>, Cow<'a, str>) {
    if !new.is_empty() || old.ends_with('\n') {
        return (old, new);
    }
    let ending = if uses_crlf(content) { "\r\n" } else { "\n" };
    let extended = format!("{old}{ending}");
    if content.matches(extended.as_str()).count() == content.matches(old.as_ref()).count() {
        (Cow::Owned(extended), new)
    } else {
        (old, new)
    }
}

/// Whether most line endings of `text` are CRLF.
pub(crate) fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

/// Bare `\n` turned into `\r\n` (existing `\r\n` kept).
fn to_crlf(text: &str) -> Cow<'_, str> {
    if !text.contains('\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = None;
    for c in text.chars() {
        if c == '\n' && previous != Some('\r') {
            out.push('\r');
        }
        out.push(c);
        previous = Some(c);
    }
    Cow::Owned(out)
}

fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Where `old` would match if runs of whitespace counted as one space and typographic quotes
/// as straight ones: the byte range in `content` it would cover.
pub(crate) fn near_match(content: &str, old: &str) -> Option<std::ops::Range<usize>> {
    let wanted = normalize(old);
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return None;
    }
    let haystack = normalize(content);
    let start = haystack.find(wanted)?;
    let last = original_offset(content, start + wanted.len() - 1);
    let end = last + content[last..].chars().next().map_or(0, char::len_utf8);
    Some(original_offset(content, start)..end)
}

/// Whether every line of `old` starts with a line number and a tab, as copied from Read output.
pub(crate) fn has_line_number_prefixes(old: &str) -> bool {
    let mut lines = old
        .lines()
        .filter(|line| !line.trim().is_empty())
        .peekable();
    lines.peek().is_some()
        && lines.all(|line| {
            let line = line.trim_start_matches(' ');
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && line[digits..].starts_with('\t')
        })
}

/// One normalised character for each of `text`, with the byte offset it came from; a run of
/// whitespace yields one space.
fn normalized_chars(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut in_space = false;
    text.char_indices().filter_map(move |(at, c)| {
        if c.is_whitespace() {
            let first = !in_space;
            in_space = true;
            return first.then_some((at, ' '));
        }
        in_space = false;
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            other => other,
        };
        Some((at, c))
    })
}

fn normalize(text: &str) -> String {
    normalized_chars(text).map(|(_, c)| c).collect()
}

/// The byte offset in `text` of the character that produced byte `target` of `normalize(text)`.
/// Recomputed rather than stored, so the search costs no offset table as large as the file.
fn original_offset(text: &str, target: usize) -> usize {
    let mut produced = 0;
    for (at, c) in normalized_chars(text) {
        produced += c.len_utf8();
        if produced > target {
            return at;
        }
    }
    text.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lf_edit_on_crlf_file_keeps_crlf() {
        let applied = apply("a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", false).unwrap();
        assert_eq!(applied.content, "x\r\ny\r\nz\r\nc\r\n");
    }

    #[test]
    fn near_match_maps_back_to_the_original_text() {
        let content = "fn main() {\n    let s = “hi”;\n}\n";
        let range = near_match(content, "let  s = \"hi\";").unwrap();
        assert_eq!(&content[range], "let s = “hi”;");
    }

    #[test]
    fn numbered_lines_are_recognised() {
        assert!(has_line_number_prefixes("12\tfoo\n13\tbar"));
        assert!(!has_line_number_prefixes("foo\n13\tbar"));
        assert!(!has_line_number_prefixes(""));
    }
}
