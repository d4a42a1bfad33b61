//! `Bash(...)` specifiers: a glob where `*` matches anything, the legacy `prefix:*`, or an
//! exact command, matched against the simple commands [`super::bash_split`] finds in a line.

use super::bash_split::SimpleCommand;

/// A `Bash(...)` specifier, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BashPattern {
    /// No `*`: the simple command must equal this text.
    Exact(String),
    /// `*` matches any run of characters, spaces included. A pattern ending in ` *` also
    /// matches the bare command before it, so `git *` covers `git`.
    Glob(String),
}

impl BashPattern {
    /// Compiles a specifier. The legacy `prefix:*` spelling becomes the glob `prefix *`, which
    /// is the same word-boundary prefix match.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let spec = collapse_spaces(spec.trim());
        if let Some(prefix) = spec.strip_suffix(":*") {
            let prefix = prefix.trim_end();
            if prefix.is_empty() {
                return Err("`:*` needs a command before it, as in `Bash(npm run test:*)`".into());
            }
            return Ok(Self::Glob(format!("{prefix} *")));
        }
        if has_wildcard(&spec) {
            Ok(Self::Glob(spec))
        } else {
            Ok(Self::Exact(spec.replace("\\*", "*")))
        }
    }

    pub fn matches(&self, command: &str) -> bool {
        match self {
            Self::Exact(text) => text == command,
            Self::Glob(pattern) => {
                glob_match(pattern, command)
                    || pattern
                        .strip_suffix(" *")
                        .is_some_and(|bare| glob_match(bare, command))
            }
        }
    }

    /// Whether an allow rule vouches for `part`: the text after harmless assignments, or the
    /// full text when an assignment could change what runs.
    pub fn allows(&self, part: &SimpleCommand) -> bool {
        if part.risky_env {
            self.matches(&part.full)
        } else {
            self.matches(&part.text)
        }
    }

    /// Whether a deny or ask rule catches `part` in any of its spellings.
    pub fn catches(&self, part: &SimpleCommand) -> bool {
        self.matches(&part.text) || self.matches(&part.unquoted) || self.matches(&part.full)
    }
}

/// An unescaped `*`.
fn has_wildcard(spec: &str) -> bool {
    let mut escaped = false;
    for c in spec.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '*' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

/// `*` matches any characters; `\*` is a literal star; everything else is literal.
fn glob_match(pattern: &str, text: &str) -> bool {
    #[derive(PartialEq)]
    enum Token {
        Any,
        Char(char),
    }
    let mut tokens = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'*') => {
                chars.next();
                tokens.push(Token::Char('*'));
            }
            '*' => tokens.push(Token::Any),
            c => tokens.push(Token::Char(c)),
        }
    }
    let text: Vec<char> = text.chars().collect();
    // Classic wildcard matching: remember the last star and retry from one further on.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::Char(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            Some(Token::Any) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(|token| *token == Token::Any)
}

/// Runs of unquoted whitespace become one space, so `git  status` and `git status` compare
/// equal while `echo "a  b"` keeps its inner spaces.
pub(super) fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut pending_space = false;
    for c in text.chars() {
        if quote.is_none() && !escaped && c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some('"'), '"') => quote = None,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matching() {
        assert!(glob_match("git * main", "git push origin main"));
        assert!(!glob_match("git * main", "git push origin dev"));
        assert!(glob_match("a\\*b", "a*b"));
        assert!(!glob_match("a\\*b", "axb"));
        assert!(glob_match("*", ""));
    }
}
