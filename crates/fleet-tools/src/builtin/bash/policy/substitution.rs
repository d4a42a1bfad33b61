//! Command substitutions (`$(…)`, backticks, `<(…)`, `>(…)`) taken out of a command line, so
//! that what they run is checked as a command line of its own and the line around them sees
//! one opaque word in their place.
//!
//! The splitter in `permissions` breaks a line at parentheses and backticks, which is right for
//! deciding whether a rule covers every part, but it cannot see into a `"$(…)"` inside double
//! quotes, and it turns `echo $(ls)x` into the "commands" `echo $`, `ls` and `x`. Masking first
//! gives the policy whole words to judge and every nested command line to recurse into.
//!
//! A here-document expands substitutions even between single quotes, so in a line containing
//! `<<` single quotes are not treated as quoting: a masking mistake there only ever adds
//! command lines to check.

/// The word left where a substitution stood: it contains `$`, so a policy that needs to know
/// a path or a program name refuses it as something only known at run time, and it reads as
/// "some expansion" when a message quotes the masked line.
pub(super) const PLACEHOLDER: &str = "${…}";

/// A command line with its substitutions replaced by [`PLACEHOLDER`], and their bodies.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Masked {
    pub line: String,
    pub bodies: Vec<String>,
}

/// Masks the substitutions of `command`. Errs, saying what is open, when a quote or a
/// substitution is not closed.
pub(super) fn mask(command: &str) -> Result<Masked, String> {
    let mut scanner = Scanner {
        chars: command.chars().collect(),
        i: 0,
        single_quotes_quote: !command.contains("<<") || command.contains("<<<"),
        out: Masked::default(),
    };
    scanner.top()?;
    Ok(scanner.out)
}

struct Scanner {
    chars: Vec<char>,
    i: usize,
    /// False when a here-document may expand what single quotes seem to protect.
    single_quotes_quote: bool,
    out: Masked,
}

impl Scanner {
    fn at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.i + offset).copied()
    }

    fn copy(&mut self, n: usize) {
        let end = (self.i + n).min(self.chars.len());
        self.out.line.extend(&self.chars[self.i..end]);
        self.i = end;
    }

    fn top(&mut self) -> Result<(), String> {
        while let Some(c) = self.at(0) {
            match c {
                '\\' => self.copy(2),
                '\'' if self.single_quotes_quote => {
                    let close = find(&self.chars, self.i + 1, '\'')
                        .ok_or("a single quote is never closed")?;
                    self.copy(close + 1 - self.i);
                }
                '"' => {
                    self.copy(1);
                    self.double()?;
                }
                '$' | '<' | '>' if self.at(1) == Some('(') => self.paren()?,
                '`' => self.backtick()?,
                _ => self.copy(1),
            }
        }
        Ok(())
    }

    /// Inside `"…"` after the opening quote: copies through the closing quote, masking
    /// `$(…)` and backticks, which double quotes do not stop.
    fn double(&mut self) -> Result<(), String> {
        while let Some(c) = self.at(0) {
            match c {
                '\\' => self.copy(2),
                '"' => {
                    self.copy(1);
                    return Ok(());
                }
                '$' if self.at(1) == Some('(') => self.paren()?,
                '`' => self.backtick()?,
                _ => self.copy(1),
            }
        }
        Err("a double quote is never closed".into())
    }

    /// At `$(`, `<(` or `>(`: records the body and leaves the placeholder. `$((…))` is
    /// arithmetic, not a command, when its inner parenthesis closes right at the end (as bash
    /// decides); only substitutions inside it are commands.
    fn paren(&mut self) -> Result<(), String> {
        let open = self.i + 2;
        let close = closing_paren(&self.chars, open)
            .ok_or_else(|| format!("`{}(` is never closed", self.chars[self.i]))?;
        let body: String = self.chars[open..close].iter().collect();
        let arithmetic = self.chars[self.i] == '$'
            && self.chars.get(open) == Some(&'(')
            && closing_paren(&self.chars, open + 1) == Some(close - 1);
        if arithmetic {
            let inner: String = self.chars[open + 1..close - 1].iter().collect();
            self.out.bodies.extend(mask(&inner)?.bodies);
        } else {
            self.out.bodies.push(body);
        }
        self.out.line.push_str(PLACEHOLDER);
        self.i = close + 1;
        Ok(())
    }

    fn backtick(&mut self) -> Result<(), String> {
        let close = find(&self.chars, self.i + 1, '`').ok_or("a backtick is never closed")?;
        self.out
            .bodies
            .push(self.chars[self.i + 1..close].iter().collect());
        self.out.line.push_str(PLACEHOLDER);
        self.i = close + 1;
        Ok(())
    }
}

/// Index of the next `target` at or after `from` that no backslash escapes.
fn find(chars: &[char], from: usize, target: char) -> Option<usize> {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        if c == target {
            return Some(i);
        }
        i += if c == '\\' && target != '\'' { 2 } else { 1 };
    }
    None
}

/// Index of the `)` that closes a parenthesis opened just before `from`, skipping quoted
/// text, escapes, backticks and nested parentheses.
fn closing_paren(chars: &[char], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '\'' => i = find(chars, i + 1, '\'')?,
            '`' => i = find(chars, i + 1, '`')?,
            '"' => i = closing_double(chars, i + 1)?,
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Index of the `"` closing a double-quoted string that starts at `from`.
fn closing_double(chars: &[char], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '"' => return Some(i),
            '$' if chars.get(i + 1) == Some(&'(') => i = closing_paren(chars, i + 2)?,
            '`' => i = find(chars, i + 1, '`')?,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(command: &str) -> (String, Vec<String>) {
        let m = mask(command).unwrap_or_else(|e| panic!("{command}: {e}"));
        (m.line, m.bodies)
    }

    #[test]
    fn substitutions_become_one_word_and_their_bodies_are_kept() {
        assert_eq!(
            masked("echo $(ls -l) \"n=$(wc -l < f)\" `date` x"),
            (
                "echo ${…} \"n=${…}\" ${…} x".into(),
                vec!["ls -l".into(), "wc -l < f".into(), "date".into()]
            )
        );
        assert_eq!(
            masked("diff <(sort a) >(tee b)"),
            (
                "diff ${…} ${…}".into(),
                vec!["sort a".into(), "tee b".into()]
            )
        );
    }

    #[test]
    fn nesting_and_quotes_inside_bodies_are_respected() {
        assert_eq!(
            masked("echo \"$(echo \")\" $(cat x))\""),
            ("echo \"${…}\"".into(), vec!["echo \")\" $(cat x)".into()])
        );
        assert_eq!(masked("echo '$(rm x)'"), ("echo '$(rm x)'".into(), vec![]));
    }

    #[test]
    fn arithmetic_is_not_a_command_but_what_it_runs_is() {
        assert_eq!(masked("echo $((1 + 2))"), ("echo ${…}".into(), vec![]));
        assert_eq!(
            masked("echo $(( $(wc -l < f) * 2 ))"),
            ("echo ${…}".into(), vec!["wc -l < f".into()])
        );
        assert_eq!(
            masked("echo $((ls) ; pwd)"),
            ("echo ${…}".into(), vec!["(ls) ; pwd".into()])
        );
    }

    #[test]
    fn here_documents_expand_inside_single_quotes() {
        let (_, bodies) = masked("cat <<EOF\n'$(rm -rf x)'\nEOF");
        assert_eq!(bodies, ["rm -rf x"]);
    }

    #[test]
    fn unclosed_constructs_are_errors() {
        for bad in ["echo $(ls", "echo `ls", "echo \"x", "echo 'x"] {
            assert!(mask(bad).is_err(), "{bad}");
        }
    }
}
