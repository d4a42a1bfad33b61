//! Whether a prompt asks for Ultraplan.
//!
//! A person types the word `ultraplan` in an ordinary sentence to launch a remote planning
//! session ("ultraplan the move to OAuth2"), so the word triggers wherever it is *used*, and
//! never where it is only *mentioned*: inside quotes or backticks, as part of a path, an
//! identifier or a flag, as a file name, or as a question about the feature (`ultraplan?`).
//!
//! The scan works in two passes: first the spans a person quoted (`'…'`, `"…"`, `“…”`,
//! `‘…’`, `«…»`, inline code and fenced code blocks) are masked, then every remaining
//! occurrence of the word is judged by the characters right around it. A quote that never
//! closes on its line hides nothing (it is an apostrophe or a stray mark, not a quotation);
//! a fenced block that never closes runs to the end, as Markdown reads it.

use std::ops::Range;

const WORD: &str = "ultraplan";

/// True when `prompt` holds the word `ultraplan` outside quotes and backticks, paths,
/// identifiers and flags, file names, and not followed by `?`.
pub fn triggers(prompt: &str) -> bool {
    find(prompt).is_some()
}

/// The byte range of the first occurrence of `ultraplan` that triggers (for highlighting it
/// in the prompt), or `None`.
pub fn find(prompt: &str) -> Option<Range<usize>> {
    let masked = masked_spans(prompt);
    let hidden = |at: usize| masked.iter().any(|span| span.contains(&at));
    let bytes = prompt.as_bytes();
    let mut from = 0;
    while let Some(offset) = find_ascii_ci(&bytes[from..], WORD.as_bytes()) {
        let start = from + offset;
        let end = start + WORD.len();
        if !hidden(start) && stands_alone(prompt, start, end) {
            return Some(start..end);
        }
        from = start + 1;
    }
    None
}

/// The first position of `needle` (lowercase ASCII) in `haystack`, ignoring ASCII case. The
/// word is ASCII, so a match always starts and ends on character boundaries.
fn find_ascii_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// Whether the word at `start..end` is used as a word: not glued to a path, an identifier, a
/// flag or a file extension, and not asked about.
fn stands_alone(prompt: &str, start: usize, end: usize) -> bool {
    let before = &prompt[..start];
    let after = &prompt[end..];
    let mut back = before.chars().rev();
    let prev = back.next();
    let prev2 = back.next();
    let mut ahead = after.chars();
    let next = ahead.next();
    let next2 = ahead.next();

    // `/ultraplan task` at the very start is the slash command, the explicit way to ask.
    if prev == Some('/') && before.trim_start() == "/" {
        return next.is_none_or(char::is_whitespace);
    }
    if let Some(p) = prev {
        if is_word_char(p) {
            return false; // myultraplan, 2ultraplan, snake_ultraplan
        }
        // a flag or compound (--ultraplan), a path (src/ultraplan, ./ultraplan, C:\ultraplan),
        // a variable or mention ($ultraplan, @ultraplan), a flag's value (--mode=ultraplan),
        // a home path (~ultraplan), an extension (notes.ultraplan)
        if matches!(p, '-' | '/' | '\\' | '.' | '$' | '@' | '=' | '~') {
            return false;
        }
        if p == ':' && prev2 == Some(':') {
            return false; // crate::ultraplan
        }
    }
    let Some(n) = next else { return true };
    if is_word_char(n) {
        return false; // ultraplanning, ultraplan_mode
    }
    match n {
        // ultraplan-mode, ultraplan/x.rs, ultraplan\x, ultraplan=1, ultraplan()
        '-' | '/' | '\\' | '=' | '(' => false,
        // ultraplan.rs is a file; "… with ultraplan." ends a sentence
        '.' => !next2.is_some_and(is_word_char),
        // ultraplan::Phase is a path in code; "ultraplan: the auth module" is a request
        ':' => next2 != Some(':'),
        _ => !asks_about_it(after),
    }
}

/// `ultraplan?` or `ultraplan ?`: the person asks what the feature is.
fn asks_about_it(after: &str) -> bool {
    after.trim_start_matches([' ', '\t']).starts_with('?')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The byte ranges a person quoted: fenced code blocks, inline code, and quotations that
/// close on the same line.
fn masked_spans(prompt: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut offset = 0;
    let mut fence: Option<(char, usize, usize)> = None; // (mark, length, where it opened)
    for line in prompt.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let opener = fence_mark(line);
        match fence {
            Some((mark, len, opened)) => {
                if opener.is_some_and(|(m, l, rest)| m == mark && l >= len && rest.is_empty()) {
                    spans.push(opened..offset);
                    fence = None;
                }
            }
            None => match opener {
                Some((mark, len, _)) => fence = Some((mark, len, line_start)),
                None => inline_spans(line, line_start, &mut spans),
            },
        }
    }
    if let Some((_, _, opened)) = fence {
        spans.push(opened..prompt.len());
    }
    spans
}

/// A fence line: up to three spaces, then three or more backticks or tildes; returns the
/// mark, how many, and what follows them (trimmed).
fn fence_mark(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let body = &line[indent..];
    let mark = body.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = body.chars().take_while(|c| *c == mark).count();
    (len >= 3).then(|| (mark, len, body[len..].trim()))
}

/// Inline code and quotations on one line (no fence), added as absolute byte ranges.
fn inline_spans(line: &str, base: usize, spans: &mut Vec<Range<usize>>) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let close = match c {
            '`' => code_span_end(&chars, i),
            '"' => closing(&chars, i, |c, _| c == '"'),
            '“' => closing(&chars, i, |c, _| c == '”'),
            '«' => closing(&chars, i, |c, _| c == '»'),
            '\'' | '‘' if opens_single(&chars, i) => closing(&chars, i, |c, next| {
                (c == '\'' || c == '’') && !next.is_some_and(is_word_char)
            }),
            _ => None,
        };
        match close {
            Some(end) => {
                let end_byte = chars.get(end + 1).map_or(line.len(), |(b, _)| *b);
                spans.push(base + at..base + end_byte);
                i = end + 1;
            }
            None => i += 1,
        }
    }
}

/// Where the backtick run starting at `i` is closed by a run of the same length.
fn code_span_end(chars: &[(usize, char)], i: usize) -> Option<usize> {
    let run = |from: usize| chars[from..].iter().take_while(|(_, c)| *c == '`').count();
    let len = run(i);
    let mut j = i + len;
    while j < chars.len() {
        if chars[j].1 == '`' {
            let other = run(j);
            if other == len {
                return Some(j + len - 1);
            }
            j += other;
        } else {
            j += 1;
        }
    }
    None
}

/// The index of the first character after `i` that closes the quotation, judged with the
/// character after it.
fn closing(
    chars: &[(usize, char)],
    i: usize,
    closes: impl Fn(char, Option<char>) -> bool,
) -> Option<usize> {
    (i + 1..chars.len()).find(|&j| closes(chars[j].1, chars.get(j + 1).map(|(_, c)| *c)))
}

/// A single quote opens a quotation only at the start of a word (`'ultraplan'`); inside
/// one it is an apostrophe (`don't`).
fn opens_single(chars: &[(usize, char)], i: usize) -> bool {
    i == 0 || !is_word_char(chars[i - 1].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (prompt, triggers?, why)
    const CASES: &[(&str, bool, &str)] = &[
        ("ultraplan the move to OAuth2", true, "plain, at the start"),
        (
            "please ultraplan a refactor of auth",
            true,
            "plain, mid sentence",
        ),
        ("ULTRAPLAN this migration", true, "any case"),
        ("UltraPlan: split the parser", true, "a colon after it"),
        ("do it with ultraplan.", true, "ends a sentence"),
        ("do it with ultraplan", true, "ends the prompt"),
        ("(ultraplan) the cache layer", true, "in parentheses"),
        ("ultraplan, then tell me", true, "a comma after it"),
        ("/ultraplan migrate the store", true, "the slash command"),
        (
            "don't wait, ultraplan it",
            true,
            "an apostrophe before is not a quote",
        ),
        (
            "say \"hi and ultraplan this",
            true,
            "an unbalanced double quote hides nothing",
        ),
        (
            "'tis time to ultraplan it",
            true,
            "an unbalanced single quote hides nothing",
        ),
        (
            "`code` then ultraplan the rest",
            true,
            "after a closed code span",
        ),
        (
            "ultraplan → réécrire l'authentification",
            true,
            "non-ASCII after",
        ),
        (
            "请 ultraplan 重构认证模块",
            true,
            "non-ASCII around, spaced",
        ),
        (
            "« ultraplan » ok\nultraplan now",
            true,
            "second line triggers",
        ),
        ("what is ultraplan?", false, "a question about it"),
        ("is ultraplan ? worth it", false, "a spaced question mark"),
        ("explain \"ultraplan\" to me", false, "double quotes"),
        ("explain 'ultraplan' to me", false, "single quotes"),
        ("explain “ultraplan” to me", false, "curly quotes"),
        ("explain `ultraplan` to me", false, "inline code"),
        ("see ``a `ultraplan` b``", false, "double-backtick code"),
        ("```\nultraplan here\n```\nthanks", false, "fenced code"),
        (
            "```sh\nfleet ultraplan x",
            false,
            "an unclosed fence runs to the end",
        ),
        ("read src/ultraplan/x.rs", false, "a path segment"),
        ("run ./ultraplan now", false, "a relative path"),
        ("pass --ultraplan-mode", false, "a flag"),
        ("set ultraplan_mode true", false, "snake identifier"),
        ("myultraplan is a crate", false, "a longer word"),
        ("ultraplanning is hard", false, "a longer word after"),
        ("open ultraplan.rs", false, "a file name"),
        ("open ultraplan.tsx please", false, "another extension"),
        ("use crate::ultraplan::keyword", false, "a code path"),
        ("call ultraplan() twice", false, "a function call"),
        ("fleetultraplan", false, "glued to a word"),
        ("éultraplan", false, "glued to a non-ASCII letter"),
        ("set --mode=ultraplan", false, "a flag's value"),
        ("no keyword here", false, "absent"),
        ("ultra plan it", false, "split word"),
    ];

    #[test]
    fn keyword_table() {
        let wrong: Vec<String> = CASES
            .iter()
            .filter(|(prompt, want, _)| triggers(prompt) != *want)
            .map(|(prompt, want, why)| format!("{prompt:?}: want {want} ({why})"))
            .collect();
        assert!(wrong.is_empty(), "misjudged:\n{}", wrong.join("\n"));
    }

    #[test]
    fn find_points_at_the_word_that_triggers() {
        let prompt = "`ultraplan` aside, ultraplan now";
        let range = find(prompt).expect("triggers");
        assert_eq!(&prompt[range.clone()], "ultraplan");
        assert_eq!(range.start, prompt.rfind("ultraplan").expect("present"));
        let prompt = "Ä ÜltraPlan nö";
        assert_eq!(find(prompt), None, "Ü is not U: only ASCII case folds");
        let prompt = "ñ ULTRAPLAN ñ";
        assert_eq!(&prompt[find(prompt).expect("triggers")], "ULTRAPLAN");
    }
}
