//! `[[ … ]]`, `[ … ]`, `test` and `(( … ))`. They change nothing themselves, but bash
//! evaluates the operands of `-eq`, `-lt` … (and the name after `-v`) as arithmetic, where a
//! value such as `a[$(touch x)]` runs the command in its subscript. So those operands must be
//! plain literal numbers (a plain name for `-v`).
//!
//! Other operands may be unknown inside `[[ ]]`, which neither splits nor globs them and
//! whose operators are fixed when the line is parsed. `[` and `test` are ordinary commands:
//! their words are split first and an unknown one could become an operator, so there an
//! unknown word is accepted only as the single operand of a two- or three-word test whose
//! operator is known (`[ -f "$f" ]`, `[ "$a" = "$b" ]`).

use crate::shell::Word;

const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Why a test command may run something or cannot be read with confidence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum TestProblem {
    #[error("(( )) evaluates text only known when it runs")]
    UnknownArithmetic,
    /// An operand of `-eq`, `-lt` … that is not a literal number.
    #[error(
        "`{op}` evaluates its operands as arithmetic, and `{operand}` is not a plain number (a \
         value such as a[$(cmd)] would run cmd)"
    )]
    ArithmeticOperand { op: String, operand: String },
    #[error("`-v` with a subscript or an unknown name evaluates it as arithmetic")]
    VariableName,
    /// `[` or `test` with more than three words, one unknown.
    #[error(
        "`{name}` with {count} words, one of them only known when it runs (`{word}`), may read \
         it as an operator; use [[ ]]"
    )]
    TooManyWords {
        name: String,
        count: usize,
        word: String,
    },
    #[error(
        "`{word}` in `{name}` is only known when it runs and may become an operator or several \
         words; quote it, or use [[ ]]"
    )]
    UnknownOperand { name: String, word: String },
}

/// Checks a test command; `words` include its name (`[[`, `[`, `test`, `((`) and closing
/// bracket. The error says what is wrong.
pub(super) fn check(words: &[Word]) -> Result<(), TestProblem> {
    let Some(name) = words.first().and_then(Word::known) else {
        return Ok(());
    };
    let inner = match (name, words.last().and_then(Word::known)) {
        ("[[", Some("]]")) | ("[", Some("]")) | ("((", Some("))")) if words.len() >= 2 => {
            &words[1..words.len() - 1]
        }
        _ => &words[1..],
    };
    if name == "((" {
        return match inner {
            [Word::Known(_)] | [] => Ok(()),
            _ => Err(TestProblem::UnknownArithmetic),
        };
    }
    for (i, word) in inner.iter().enumerate() {
        match word.known() {
            Some(op) if ARITHMETIC.contains(&op) => {
                for operand in [i.checked_sub(1).map(|j| &inner[j]), inner.get(i + 1)] {
                    if !operand.is_some_and(is_literal_number) {
                        return Err(TestProblem::ArithmeticOperand {
                            op: op.to_string(),
                            operand: operand.map_or("", Word::shown).to_string(),
                        });
                    }
                }
            }
            Some("-v") => {
                let plain = inner.get(i + 1).and_then(Word::known).is_some_and(|name| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if !plain {
                    return Err(TestProblem::VariableName);
                }
            }
            _ => {}
        }
    }
    if name == "[[" {
        return Ok(());
    }
    let unknown: Vec<usize> = inner
        .iter()
        .enumerate()
        .filter(|(_, w)| w.is_unknown())
        .map(|(i, _)| i)
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let operator_at = match inner.len() {
        1 => None,
        2 => Some(0),
        3 => Some(1),
        _ => {
            return Err(TestProblem::TooManyWords {
                name: name.to_string(),
                count: inner.len(),
                word: inner[unknown[0]].shown().to_string(),
            })
        }
    };
    for i in unknown {
        let single = matches!(&inner[i], Word::Unknown(u) if u.one_field);
        if Some(i) == operator_at || !single {
            return Err(TestProblem::UnknownOperand {
                name: name.to_string(),
                word: inner[i].shown().to_string(),
            });
        }
    }
    Ok(())
}

fn is_literal_number(word: &Word) -> bool {
    word.known().is_some_and(|text| {
        let digits = text
            .strip_prefix('-')
            .or_else(|| text.strip_prefix('+'))
            .unwrap_or(text);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn test(line: &str) -> Result<(), TestProblem> {
        let parsed = parse(line);
        assert_eq!(parsed.unreadable, None, "{line}");
        check(&parsed.commands[0].words)
    }

    #[test]
    fn arithmetic_operands_must_be_literal_numbers() {
        for ok in [
            "[[ 1 -eq 1 ]]",
            "[ 2 -gt 1 ]",
            "test 3 -le 4",
            "[[ -f $f && $x == y* ]]",
            "[ -f \"$f\" ]",
            "[ \"$a\" = \"$b\" ]",
            "[[ -v HOME ]]",
            "(( 1 + 2 ))",
        ] {
            assert_eq!(test(ok), Ok(()), "{ok}");
        }
        for bad in [
            "[[ 'a[$(touch x)]' -eq 0 ]]",
            "[[ $x -eq 0 ]]",
            "[ \"$n\" -gt 0 ]",
            "test x -lt 1",
            "[[ -v 'a[$(touch x)]' ]]",
            "[[ -v $name ]]",
            "[ -f $f ]",
            "test \"$a\" \"$b\"",
            "[ -n \"$a\" -a -f \"$b\" ]",
        ] {
            assert!(test(bad).is_err(), "{bad}");
        }
        assert_eq!(test("[[ -v $name ]]"), Err(TestProblem::VariableName));
        assert_eq!(
            test("[ -f $f ]").map_err(|e| e.to_string()),
            Err(
                "`$f` in `[` is only known when it runs and may become an operator or several \
                 words; quote it, or use [[ ]]"
                    .to_string()
            )
        );
        assert!(matches!(
            test("[[ $x -eq 0 ]]"),
            Err(TestProblem::ArithmeticOperand { op, .. }) if op == "-eq"
        ));
    }
}
