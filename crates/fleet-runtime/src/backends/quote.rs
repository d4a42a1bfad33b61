//! Quoting one word for a shell command line. iTerm2 panes are started by typing a command
//! line into the person's own shell (bash, zsh or fish), so the quoting has to mean the same
//! in all of them: everything goes inside single quotes (no expansion, no history `!`), and
//! the two characters single quotes cannot hold the same way everywhere — `'` itself, and
//! `\`, which fish reads as an escape even inside single quotes — are written outside the
//! quotes as `\'` and `\\`, which every one of those shells reads as the bare character.

/// `word` as one shell word that bash, zsh, fish and a POSIX `sh` all read back unchanged.
pub fn sh_quote(word: &str) -> String {
    if word.is_empty() {
        return "''".into();
    }
    let mut out = String::with_capacity(word.len() + 2);
    let mut open = false;
    for c in word.chars() {
        if c == '\'' || c == '\\' {
            if open {
                out.push('\'');
                open = false;
            }
            out.push('\\');
            out.push(c);
        } else {
            if !open {
                out.push('\'');
                open = true;
            }
            out.push(c);
        }
    }
    if open {
        out.push('\'');
    }
    out
}

/// `word` as it would be typed, quoted only when a shell would otherwise read it
/// differently: for showing a command in an error message.
pub(crate) fn display_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_string()
    } else {
        sh_quote(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `sh` hands a program for `line`, one argument a line (NUL-separated).
    fn through_sh(quoted: &str) -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s' {quoted}"))
            .output()
            .expect("sh runs");
        String::from_utf8(out.stdout).expect("utf-8")
    }

    #[test]
    fn plain_words_are_wrapped_in_single_quotes() {
        assert_eq!(sh_quote("abc"), "'abc'");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn quotes_and_backslashes_stand_outside_the_quotes() {
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote("a\\b"), "'a'\\\\'b'");
        assert_eq!(sh_quote("'"), "\\'");
    }

    #[test]
    fn hostile_words_survive_sh() {
        for word in [
            "it's",
            "$(touch pwned)",
            "`id`",
            "a\\\\b\\",
            ";",
            "line\nbreak",
            "!!",
            "'\"'",
            "",
            "ünï cödé",
        ] {
            assert_eq!(through_sh(&sh_quote(word)), word, "word {word:?}");
        }
    }

    #[test]
    fn display_quotes_only_when_needed() {
        assert_eq!(display_word("split-window"), "split-window");
        assert_eq!(display_word("#{pane_id}"), "'#{pane_id}'");
        assert_eq!(display_word(""), "''");
    }
}
