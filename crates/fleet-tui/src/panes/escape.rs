//! Text a person must judge, shown as what it is. A permission question quotes a command, a
//! path or a tool's input that the model wrote; a terminal control character in it must be
//! seen, not obeyed, and not silently dropped either: `ls\rrm -rf ~` would otherwise read as
//! one harmless word, and a bidi override reorders what the eye sees against what the shell
//! runs. So every such character is replaced by an escape in the notation the text-mode prompt
//! uses (`\e`, `\r`, `\t`, `\n`, `\x07`, `\u{202e}`).
//!
//! Beyond the C0/C1 controls this covers what is invisible or looks like something it is not:
//! bidi overrides, isolates and marks; zero-width spaces and joiners' lookalikes, the word
//! joiner, the byte-order mark, soft hyphens, Hangul fillers, tag characters; and every
//! Unicode space other than the ASCII one (a no-break space looks like a separator to a person
//! and is part of a word to the shell).

use std::fmt::Write as _;

/// Whether `c` is shown as an escape rather than as itself.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{a0}'
            | '\u{ad}'
            | '\u{61c}'
            | '\u{115f}' | '\u{1160}'
            | '\u{1680}'
            | '\u{180e}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{3000}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}')
}

/// `text` with every hidden character written as an escape, newlines and tabs included, so
/// the result is one line of plain text.
pub(crate) fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !is_hidden(c) {
            out.push(c);
            continue;
        }
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_lookalikes_become_escapes() {
        assert_eq!(escaped("ls\rrm -rf ~"), "ls\\rrm -rf ~");
        assert_eq!(escaped("\u{1b}]0;x\u{7}\u{9b}2J"), "\\e]0;x\\x07\\u{9b}2J");
        assert_eq!(escaped("a\tb\nc\u{7f}"), "a\\tb\\nc\\x7f");
        assert_eq!(
            escaped("rm \u{202e}txt.sh\u{202c}"),
            "rm \\u{202e}txt.sh\\u{202c}"
        );
        assert_eq!(
            escaped("git\u{a0}st\u{200b}atus"),
            "git\\u{a0}st\\u{200b}atus"
        );
        assert_eq!(escaped("héllo ✓ 日本"), "héllo ✓ 日本");
    }
}
