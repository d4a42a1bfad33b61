//! A command's words as the per-program checks read them: known words as they are, and an
//! unknown word only where it cannot change what the program does.
//!
//! An unknown word that may be an option (`$x`, `*.rs`, `{-i,}`) could be `-i` or `-exec`,
//! so a program with options that act is refused it. One that cannot start with `-` (`"./$f"`,
//! `./*.rs`), or that follows `--` for a program that honours it, can only be an operand; it
//! stands in the checks as a placeholder no check mistakes for an option or a script, and
//! that marks how many words it may become.

use crate::shell::Word;

/// Stands for an unknown word that expands to exactly one operand.
pub(super) const ONE: &str = "\u{1}";
/// Stands for an unknown word that may expand to any number of operands.
pub(super) const MANY: &str = "\u{2}";

/// Whether `arg` stands for an unknown word.
pub(super) fn is_placeholder(arg: &str) -> bool {
    arg == ONE || arg == MANY
}

/// A word only known when the line runs, where an option may stand (an option can make a
/// reading program write or run something).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{word}` may be an option and is only known when it runs")]
pub(super) struct MaybeOption {
    /// As written on the line.
    pub word: String,
}

/// The arguments (program left out) as the checks read them, or the unknown word that may
/// be an option. `double_dash`: the program takes `--` as the end of its options.
pub(super) fn view(words: &[Word], double_dash: bool) -> Result<Vec<String>, MaybeOption> {
    let mut out = Vec::with_capacity(words.len());
    let mut options_ended = false;
    for word in words {
        match word {
            Word::Known(text) => {
                options_ended |= double_dash && text == "--";
                out.push(text.clone());
            }
            Word::Unknown(unknown) => {
                if unknown.may_be_option && !options_ended {
                    return Err(MaybeOption {
                        word: unknown.source.clone(),
                    });
                }
                out.push(if unknown.one_field { ONE } else { MANY }.to_string());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn args(line: &str, double_dash: bool) -> Result<Vec<String>, MaybeOption> {
        let parsed = parse(line);
        view(&parsed.commands[0].words[1..], double_dash)
    }

    fn maybe(word: &str) -> MaybeOption {
        MaybeOption { word: word.into() }
    }

    #[test]
    fn unknown_words_stand_in_only_where_they_cannot_be_options() {
        assert_eq!(
            args("sed -n 1p f", true),
            Ok(vec!["-n".into(), "1p".into(), "f".into()])
        );
        assert_eq!(args("sed -n 1p \"$f\"", true), Err(maybe("\"$f\"")));
        assert_eq!(
            args("sed -n 1p \"./$f\" ./*.rs", true),
            Ok(vec!["-n".into(), "1p".into(), ONE.into(), MANY.into()])
        );
        assert_eq!(
            args("sed -n 1p -- \"$f\"", true),
            Ok(vec!["-n".into(), "1p".into(), "--".into(), ONE.into()])
        );
        assert_eq!(args("find -- \"$f\"", false), Err(maybe("\"$f\"")));
    }
}
