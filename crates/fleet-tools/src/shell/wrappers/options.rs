//! Reading a wrapper's own options, to find where the command it runs starts.

use super::super::model::Word;

/// How one wrapper's options are read.
pub(super) struct Spec {
    /// Short options that take a value (attached or the next word).
    pub short: &'static str,
    /// Long options (without `--`) that take a value (after `=` or the next word).
    pub long: &'static [&'static str],
    /// Operands before the command (`timeout`'s duration).
    pub skip: usize,
}

pub(super) const fn spec(short: &'static str, long: &'static [&'static str]) -> Spec {
    Spec {
        short,
        long,
        skip: 0,
    }
}

/// The words as text, when all are known.
pub(super) fn known_words(words: &[Word]) -> Option<Vec<String>> {
    words
        .iter()
        .map(|w| w.known().map(str::to_string))
        .collect()
}

/// Whether a short flag among `letters` appears before the command.
pub(super) fn has_flag(words: &[Word], letters: &[char]) -> bool {
    for word in words {
        match word.known() {
            Some("--") | None => return false,
            Some(text) if text.starts_with("--") => {}
            Some(text) if text.starts_with('-') && text.len() > 1 => {
                if text[1..].chars().any(|c| letters.contains(&c)) {
                    return true;
                }
            }
            Some(_) => return false,
        }
    }
    false
}

/// Whether any operand follows the options (for `sudo -l cmd`).
pub(super) fn has_command(words: &[Word]) -> bool {
    words
        .iter()
        .any(|w| w.known().is_some_and(|t| !t.starts_with('-')))
}

/// A word only known when the line runs, standing where an option or the wrapped program is:
/// what the wrapper runs cannot be known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{word}` may be an option or the program, and is only known when it runs")]
pub(super) struct UnknownStart {
    /// As written on the line.
    pub word: String,
}

/// Where the wrapped command may start: after the options, and one word later each time the
/// word there may be the value of a long option the table does not know.
pub(super) fn options_end(words: &[Word], spec: &Spec) -> Result<Vec<usize>, UnknownStart> {
    let mut starts = Vec::new();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let text = match word {
            Word::Unknown(unknown) if unknown.may_be_option => {
                return Err(UnknownStart {
                    word: unknown.source.clone(),
                });
            }
            Word::Unknown(_) => break,
            Word::Known(text) => text.as_str(),
        };
        if text == "--" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            i += 1;
            if long.contains('=') {
                continue;
            }
            let takes = spec
                .long
                .iter()
                .any(|known| known.starts_with(long) && !long.is_empty());
            if takes {
                i += 1;
            } else if words.get(i).is_some_and(|w| !w.may_be_option()) {
                // An option this table does not know may take the next word as its value.
                starts.push(i + 1);
            }
            continue;
        }
        if text.len() > 1 && text.starts_with('-') {
            i += 1;
            for (at, c) in text[1..].char_indices() {
                if spec.short.contains(c) {
                    if at + c.len_utf8() == text.len() - 1 {
                        i += 1;
                    }
                    break;
                }
            }
            continue;
        }
        break;
    }
    // An option whose value is missing (`watch -n`, `timeout --signal`) counts its value past
    // the last word: every start is clamped, so callers can slice `words[start..]` safely.
    starts.insert(0, i);
    Ok(starts.into_iter().map(|s| s.min(words.len())).collect())
}

/// The value given to the option `-SHORT` / `--LONG` before the command; `values` are the
/// wrapper's short options that take a value, which end a cluster.
pub(super) fn option_value(words: &[Word], values: &str, short: char, long: &str) -> Option<Word> {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let text = word.known()?;
        i += 1;
        if text == "--" || !text.starts_with('-') || text.len() == 1 {
            return None;
        }
        if let Some(rest) = text.strip_prefix("--") {
            let (name, value) = match rest.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (rest, None),
            };
            if !name.is_empty() && long.starts_with(name) {
                return match value {
                    Some(value) => Some(Word::Known(value.to_string())),
                    None => words.get(i).cloned(),
                };
            }
            continue;
        }
        for (at, c) in text[1..].char_indices() {
            if !values.contains(c) {
                continue;
            }
            let attached = &text[1 + at + c.len_utf8()..];
            if c == short {
                return if attached.is_empty() {
                    words.get(i).cloned()
                } else {
                    Some(Word::Known(attached.to_string()))
                };
            }
            if attached.is_empty() {
                i += 1;
            }
            break;
        }
    }
    None
}
