//! Whether a sed script only prints. Without `-i`, sed still writes files with its `w` / `W`
//! commands and the `w` flag of `s`, and runs programs with `e` and the `e` flag, so a
//! read-only agent may run a script only when none of those is in it.
//!
//! The reader knows GNU sed's commands; anything it does not recognise is treated as unsafe,
//! so a misreading can refuse a harmless script but not pass a harmful one.

/// Why a sed script is not known to only print: a command that writes or runs something, or
/// text this reader cannot follow. The text follows "sed: " in a refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SedProblem {
    #[error("an address `/regex/` is not closed")]
    UnclosedAddress,
    #[error("an address `\\cregexc` is not closed")]
    UnclosedCustomAddress,
    #[error("an address has no command after it")]
    NoCommand,
    /// `w` / `W`.
    #[error("its `{0}` command writes a file")]
    Writes(char),
    #[error("its `e` command runs a shell command")]
    Runs,
    /// `s` / `y` at the end of the script.
    #[error("`{0}` has no delimiter")]
    NoDelimiter(char),
    #[error("{article} `{0}` command is not closed", article = article(*.0))]
    Unclosed(char),
    #[error("its `s` command has the `w` flag, which writes a file")]
    SubstituteWrites,
    #[error("its `s` command has the `e` flag, which runs the result")]
    SubstituteRuns,
    #[error("`{0}` is not a sed command this check knows, so it cannot vouch for the script")]
    Unknown(char),
}

/// "an `s`", "a `y`".
fn article(command: char) -> &'static str {
    if command == 's' {
        "an"
    } else {
        "a"
    }
}

/// Checks one script; the error names the command that writes or runs something.
pub(super) fn check_script(script: &str) -> Result<(), SedProblem> {
    let mut reader = Reader {
        chars: script.chars().collect(),
        i: 0,
    };
    reader.script()
}

struct Reader {
    chars: Vec<char>,
    i: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
    }

    /// Skips to the end of the line (text of `a`, `i`, `c`, file names, comments), following
    /// backslash-newline continuations.
    fn skip_line(&mut self) {
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                '\\' => self.i += 1,
                '\n' => return,
                _ => {}
            }
        }
    }

    /// Skips a label, which ends at a newline or `;`.
    fn skip_label(&mut self) {
        while self.peek().is_some_and(|c| c != '\n' && c != ';') {
            self.i += 1;
        }
    }

    /// Skips text up to the unescaped `delim`; false when it never comes.
    fn skip_delimited(&mut self, delim: char) -> bool {
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == '\\' {
                self.i += 1;
            } else if c == delim {
                return true;
            }
        }
        false
    }

    fn address(&mut self) -> Result<(), SedProblem> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | '~' | '+' | ',' | ' ') => {
                    self.i += 1;
                }
                Some('/') => {
                    self.i += 1;
                    if !self.skip_delimited('/') {
                        return Err(SedProblem::UnclosedAddress);
                    }
                    self.skip_regex_flags();
                }
                Some('\\') => {
                    let delim = self.chars.get(self.i + 1).copied().unwrap_or('\\');
                    self.i += 2;
                    if !self.skip_delimited(delim) {
                        return Err(SedProblem::UnclosedCustomAddress);
                    }
                    self.skip_regex_flags();
                }
                _ => return Ok(()),
            }
        }
    }

    fn skip_regex_flags(&mut self) {
        while self.peek().is_some_and(|c| c == 'I' || c == 'M') {
            self.i += 1;
        }
    }

    fn script(&mut self) -> Result<(), SedProblem> {
        loop {
            while self
                .peek()
                .is_some_and(|c| c.is_whitespace() || c == ';' || c == '}')
            {
                self.i += 1;
            }
            if self.peek().is_none() {
                return Ok(());
            }
            self.address()?;
            while self
                .peek()
                .is_some_and(|c| c == '!' || c == ' ' || c == '\t')
            {
                self.i += 1;
            }
            let Some(command) = self.peek() else {
                return Err(SedProblem::NoCommand);
            };
            self.i += 1;
            self.command(command)?;
        }
    }

    fn command(&mut self, command: char) -> Result<(), SedProblem> {
        match command {
            '{' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => Ok(()),
            'l' | 'L' | 'q' | 'Q' => {
                self.skip_blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                Ok(())
            }
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' => {
                self.skip_line();
                Ok(())
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                self.skip_label();
                Ok(())
            }
            'w' | 'W' => Err(SedProblem::Writes(command)),
            'e' => Err(SedProblem::Runs),
            's' => self.substitute(),
            'y' => {
                let delim = self.peek().ok_or(SedProblem::NoDelimiter('y'))?;
                self.i += 1;
                if self.skip_delimited(delim) && self.skip_delimited(delim) {
                    Ok(())
                } else {
                    Err(SedProblem::Unclosed('y'))
                }
            }
            other => Err(SedProblem::Unknown(other)),
        }
    }

    fn substitute(&mut self) -> Result<(), SedProblem> {
        let delim = self
            .peek()
            .filter(|c| *c != '\n' && *c != '\\')
            .ok_or(SedProblem::NoDelimiter('s'))?;
        self.i += 1;
        if !(self.skip_delimited(delim) && self.skip_delimited(delim)) {
            return Err(SedProblem::Unclosed('s'));
        }
        while let Some(flag) = self.peek() {
            match flag {
                'w' => return Err(SedProblem::SubstituteWrites),
                'e' => return Err(SedProblem::SubstituteRuns),
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.i += 1,
                c if c.is_ascii_digit() => self.i += 1,
                _ => break,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_scripts_pass() {
        for script in [
            "1,20p",
            "s/foo/bar/g",
            "s|a/b|c|2p",
            "/^fn /,/^}/p",
            "$!N; s/\\n/ /; P; D",
            "/start/,+3{ s/x/y/; p }",
            "y/abc/xyz/",
            "1~2d",
            "/x/I p",
            ":a;N;$!ba;s/\\n/,/g",
            "3q",
            "/re/a appended text",
        ] {
            assert_eq!(check_script(script), Ok(()), "{script}");
        }
    }

    #[test]
    fn writing_or_running_scripts_are_named() {
        for (script, said) in [
            ("w out.txt", "`w` command"),
            ("1,5W out", "`W` command"),
            ("s/a/b/w out", "`w` flag"),
            ("s/a/b/ge", "`e` flag"),
            ("/x/e rm -rf /", "`e` command"),
            ("p;s/a/b/;w x", "`w` command"),
            ("/[/]/w x", "not a sed command"),
        ] {
            let err = check_script(script).expect_err(script).to_string();
            assert!(err.contains(said), "{script}: {err}");
        }
    }

    #[test]
    fn each_refusal_keeps_its_kind_and_its_words() {
        let cases = [
            (
                "w out",
                SedProblem::Writes('w'),
                "its `w` command writes a file",
            ),
            (
                "s/a/b",
                SedProblem::Unclosed('s'),
                "an `s` command is not closed",
            ),
            (
                "y/a/",
                SedProblem::Unclosed('y'),
                "a `y` command is not closed",
            ),
            ("s", SedProblem::NoDelimiter('s'), "`s` has no delimiter"),
            (
                "/x",
                SedProblem::UnclosedAddress,
                "an address `/regex/` is not closed",
            ),
            (
                "\\%x",
                SedProblem::UnclosedCustomAddress,
                "an address `\\cregexc` is not closed",
            ),
            (
                "1,3",
                SedProblem::NoCommand,
                "an address has no command after it",
            ),
        ];
        for (script, problem, words) in cases {
            let err = check_script(script).expect_err(script);
            assert_eq!(err, problem, "{script}");
            assert_eq!(err.to_string(), words, "{script}");
        }
    }
}
