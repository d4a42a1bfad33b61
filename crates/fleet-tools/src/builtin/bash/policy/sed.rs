//! Whether a sed script only prints. Without `-i`, sed still writes files with its `w` / `W`
//! commands and the `w` flag of `s`, and runs programs with `e` and the `e` flag, so a
//! read-only agent may run a script only when none of those is in it.
//!
//! The reader knows GNU sed's commands; anything it does not recognise is treated as unsafe,
//! so a misreading can refuse a harmless script but not pass a harmful one.

/// Checks one script; the error names the command that writes or runs something.
pub(super) fn check_script(script: &str) -> Result<(), String> {
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

    fn address(&mut self) -> Result<(), String> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | '~' | '+' | ',' | ' ') => {
                    self.i += 1;
                }
                Some('/') => {
                    self.i += 1;
                    if !self.skip_delimited('/') {
                        return Err("an address `/regex/` is not closed".into());
                    }
                    self.skip_regex_flags();
                }
                Some('\\') => {
                    let delim = self.chars.get(self.i + 1).copied().unwrap_or('\\');
                    self.i += 2;
                    if !self.skip_delimited(delim) {
                        return Err("an address `\\cregexc` is not closed".into());
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

    fn script(&mut self) -> Result<(), String> {
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
                return Err("an address has no command after it".into());
            };
            self.i += 1;
            self.command(command)?;
        }
    }

    fn command(&mut self, command: char) -> Result<(), String> {
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
            'w' | 'W' => Err(format!("its `{command}` command writes a file")),
            'e' => Err("its `e` command runs a shell command".into()),
            's' => self.substitute(),
            'y' => {
                let delim = self.peek().ok_or("`y` has no delimiter")?;
                self.i += 1;
                if self.skip_delimited(delim) && self.skip_delimited(delim) {
                    Ok(())
                } else {
                    Err("a `y` command is not closed".into())
                }
            }
            other => Err(format!(
                "`{other}` is not a sed command this check knows, so it cannot vouch for the script"
            )),
        }
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delim = self
            .peek()
            .filter(|c| *c != '\n' && *c != '\\')
            .ok_or("`s` has no delimiter")?;
        self.i += 1;
        if !(self.skip_delimited(delim) && self.skip_delimited(delim)) {
            return Err("an `s` command is not closed".into());
        }
        while let Some(flag) = self.peek() {
            match flag {
                'w' => return Err("its `s` command has the `w` flag, which writes a file".into()),
                'e' => return Err("its `s` command has the `e` flag, which runs the result".into()),
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
            let err = check_script(script).expect_err(script);
            assert!(err.contains(said), "{script}: {err}");
        }
    }
}
