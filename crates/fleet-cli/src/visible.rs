//! Text from outside fleet made safe to put on a terminal: control characters are shown as
//! escapes instead of being obeyed.
//!
//! A model's text, a tool's output and a command awaiting approval are all written by someone
//! fleet does not trust. Printed raw, their escape sequences would act on the person's
//! terminal: clear the screen, move the cursor to overwrite what was shown (a fake approval
//! question), set the window title, or write the clipboard (OSC 52). So every character that
//! is not ordinary text — C0 controls other than newline and tab, DEL, C1 controls, and the
//! bidirectional overrides and isolates that can reorder what is seen (`U+202A`–`U+202E`,
//! `U+2066`–`U+2069`, and the marks `U+200E`, `U+200F`, `U+061C`) — is replaced by a visible
//! escape: `\e`, `\r`, `\x07`, `\u{9b}`, `\u{202e}`. The escape is stateless per character, so
//! text streamed in pieces is handled piece by piece. fleet's own decorations never pass
//! through here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as itself. Newline and tab are ordinary text here;
/// callers that need them visible too handle them first.
pub fn is_hidden_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{61c}')
}

/// The visible form of one hidden character.
fn push_escape(out: &mut String, c: char) {
    // Writing to a String cannot fail.
    let _ = match c {
        '\u{1b}' => out.write_str("\\e"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        '\n' => out.write_str("\\n"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// `text` with every hidden control character made visible; newlines and tabs kept. Borrowed
/// when there is nothing to change, which is nearly always.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape_where(text, is_hidden_control)
}

/// `text` with newlines and tabs made visible as well, for text that must stay on one line.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c == '\n' || c == '\t' || is_hidden_control(c))
}

/// Whether `text` holds anything [`visible`] would change.
pub fn has_hidden_controls(text: &str) -> bool {
    text.chars().any(is_hidden_control)
}

fn escape_where(text: &str, hidden: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = text.find(&hidden) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if hidden(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSON line with the characters JSON leaves raw but terminals may obey (DEL, C1 controls,
/// bidi overrides) written as `\uXXXX` escapes. Such characters can only occur inside JSON
/// strings, so the line parses to the same value.
pub fn json_safe(line: &str) -> Cow<'_, str> {
    let Some(first) = line.find(is_hidden_control) else {
        return Cow::Borrowed(line);
    };
    let mut out = String::with_capacity(line.len() + 16);
    out.push_str(&line[..first]);
    for c in line[first..].chars() {
        if is_hidden_control(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_become_visible_and_text_stays() {
        assert!(matches!(visible("plain text\n\tok"), Cow::Borrowed(_)));
        assert_eq!(
            visible("ls #\u{1b}[2K\u{1b}[G? Bash wants to run 'ls -la'"),
            "ls #\\e[2K\\e[G? Bash wants to run 'ls -la'"
        );
        assert_eq!(
            visible("\u{1b}]52;c;ZXZpbA==\u{7}"),
            "\\e]52;c;ZXZpbA==\\x07"
        );
        assert_eq!(visible("a\rb\u{0}c\u{7f}"), "a\\rb\\x00c\\x7f");
        assert_eq!(visible("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(
            visible("rm \u{202e}txt.exe\u{202c} \u{2066}x\u{2069}"),
            "rm \\u{202e}txt.exe\\u{202c} \\u{2066}x\\u{2069}"
        );
        assert_eq!(visible("héllo 👨‍👩‍👧 ✓"), "héllo 👨‍👩‍👧 ✓");
        assert_eq!(visible_line("a\n\tb"), "a\\n\\tb");
        assert!(has_hidden_controls("x\u{1b}"));
        assert!(!has_hidden_controls("x\ny\t"));
    }

    #[test]
    fn json_lines_keep_their_value() {
        let value = serde_json::json!({"text": "a\u{9b}2J\u{202e}b\u{7f}"});
        let line = serde_json::to_string(&value).unwrap_or_default();
        let safe = json_safe(&line);
        assert!(!has_hidden_controls(&safe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap_or_default();
        assert_eq!(back, value);
    }
}
