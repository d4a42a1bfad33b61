//! Writing words back as shell text: quoted so that parsing the text gives the same words
//! (for the exact rules "always allow" stores), and made visible so that a message never
//! prints a raw control character.

/// `words` as one command line that parses back into exactly these words.
pub fn command(words: &[String]) -> String {
    words
        .iter()
        .enumerate()
        .map(|(i, word)| {
            // A first word that looks like `NAME=value` would be read as an assignment.
            if i == 0 && looks_like_assignment(word) {
                single_quoted(word)
            } else {
                word_text(word)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word as shell text: bare when that is unambiguous, else in single quotes, or in
/// `$'…'` when it holds control characters.
pub fn word_text(word: &str) -> String {
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:,@%+=^".contains(c));
    if bare {
        return word.to_string();
    }
    if word.chars().any(|c| c.is_control()) {
        return ansi_c(word);
    }
    single_quoted(word)
}

fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

fn looks_like_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ansi_c(word: &str) -> String {
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `text` with control characters written as escapes (`\n`, `\e`, `\u{9b}`), so that a
/// message quoting a command cannot move the cursor, clear the screen or hide a tail.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed() {
        let words = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(command(&words(&["git", "status"])), "git status");
        assert_eq!(
            command(&words(&["git", "commit", "-m", "it's done"])),
            "git commit -m 'it'\\''s done'"
        );
        assert_eq!(command(&words(&["echo", "*", ""])), "echo '*' ''");
        assert_eq!(command(&words(&["A=1", "x"])), "'A=1' x");
        assert_eq!(command(&words(&["echo", "a\nb"])), "echo $'a\\nb'");
        assert_eq!(command(&words(&["ls", "~", "#x"])), "ls '~' '#x'");
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(visible("a\u{1b}[2Kb\nc\u{9b}"), "a\\e[2Kb\\nc\\u{9b}");
    }
}
