//! `Bash(...)` specifiers: an exact command, a glob where `*` matches anything, or the legacy
//! `prefix:*`, matched against what [`super::bash_split`] finds in a line.
//!
//! An exact specifier is itself read as a command: `Bash(git commit -m "a b")` matches the
//! simple command whose words are exactly `git`, `commit`, `-m`, `a b`, however it is quoted.
//! A glob is matched against a command's words joined by single spaces; quoting in the glob
//! makes its characters literal (`Bash(echo '*')` has no wildcard). A `*` never stands for an
//! option that makes a reading program write or run something: `Bash(find *)` does not allow
//! `find . -delete` or `find . -exec …`, nor `Bash(sed -n *)` `sed -n -i …`; only an exact
//! rule allows those.

use super::bash_split::{SimpleCommand, Unit};
use super::rule_error::RuleProblem;
use crate::shell;

/// A `Bash(...)` specifier, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BashPattern {
    /// One simple command of known words: it must be exactly this.
    Exact {
        assignments: Vec<(String, String)>,
        words: Vec<String>,
    },
    /// `*` matches any run of characters, spaces included. A pattern ending in ` *` also
    /// matches the bare command before it, so `git *` covers `git`.
    Glob(Vec<Token>),
    /// Text that is not one simple command (`git fetch && git push`): compared with the whole
    /// line, and with each command's text, by deny and ask rules.
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    Any,
    Char(char),
}

impl BashPattern {
    /// Compiles a specifier. The legacy `prefix:*` spelling becomes the glob `prefix *`, which
    /// is the same word-boundary prefix match.
    pub fn parse(spec: &str) -> Result<Self, RuleProblem> {
        let spec = collapse_spaces(spec.trim());
        if let Some(prefix) = spec.strip_suffix(":*") {
            let prefix = prefix.trim_end();
            if prefix.is_empty() {
                return Err(RuleProblem::EmptyPrefix);
            }
            return Ok(Self::Glob(tokens(&format!("{prefix} *"))));
        }
        let tokens = tokens(&spec);
        if tokens.contains(&Token::Any) {
            return Ok(Self::Glob(tokens));
        }
        Ok(exact(&spec).unwrap_or(Self::Text(spec)))
    }

    /// Whether an allow rule vouches for `unit`.
    pub fn allows(&self, unit: &Unit) -> bool {
        match self {
            Self::Exact { assignments, words } => {
                *words == unit.words
                    && (*assignments == unit.assignments || (!unit.risky && assignments.is_empty()))
            }
            Self::Glob(tokens) => !unit.hidden_action && glob_matches(tokens, &unit.text()),
            Self::Text(text) => !unit.hidden_action && *text == unit.text(),
        }
    }

    /// Whether a deny or ask rule catches `part` in any of its spellings.
    pub fn catches(&self, part: &SimpleCommand) -> bool {
        part.spellings.iter().any(|text| self.matches_text(text))
    }

    /// Whether the pattern matches `text` as a whole.
    pub fn matches_text(&self, text: &str) -> bool {
        match self {
            Self::Exact { assignments, words } => {
                let mut parts: Vec<String> = assignments
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                parts.extend(words.iter().cloned());
                parts.join(" ") == text || words.join(" ") == text
            }
            Self::Glob(tokens) => glob_matches(tokens, text),
            Self::Text(spec) => spec == text,
        }
    }
}

/// The specifier as one simple command of known words, when it is one.
fn exact(spec: &str) -> Option<BashPattern> {
    let line = shell::parse(spec);
    if line.unreadable.is_some()
        || !line.nested.is_empty()
        || !line.redirects.is_empty()
        || !line.arithmetic.is_empty()
    {
        return None;
    }
    let [command] = line.commands.as_slice() else {
        return None;
    };
    if !command.redirects.is_empty() {
        return None;
    }
    let words = command
        .words
        .iter()
        .map(|w| w.known().map(str::to_string))
        .collect::<Option<Vec<_>>>()?;
    let assignments = command
        .assignments
        .iter()
        .map(|a| {
            let op = if a.append { "+" } else { "" };
            Some((format!("{}{op}", a.name), a.value.known()?.to_string()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(BashPattern::Exact { assignments, words })
}

/// The glob's tokens: an unquoted, unescaped `*` is a wildcard; quotes are removed, escapes
/// applied, and each run of unquoted blanks is one space.
fn tokens(spec: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = spec.chars().peekable();
    let mut blank = false;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            blank = true;
            continue;
        }
        if blank && !out.is_empty() {
            out.push(Token::Char(' '));
        }
        blank = false;
        match c {
            '*' => out.push(Token::Any),
            '\\' => match chars.next() {
                Some(next) => out.push(Token::Char(next)),
                None => out.push(Token::Char('\\')),
            },
            '\'' => {
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    out.push(Token::Char(q));
                }
            }
            '"' => {
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            if let Some(next) = chars.next() {
                                out.push(Token::Char(next));
                            }
                        }
                        q => out.push(Token::Char(q)),
                    }
                }
            }
            c => out.push(Token::Char(c)),
        }
    }
    out
}

/// A glob against text; one ending in ` *` also matches the text before it.
fn glob_matches(tokens: &[Token], text: &str) -> bool {
    glob_match(tokens, text)
        || tokens
            .strip_suffix(&[Token::Char(' '), Token::Any])
            .is_some_and(|bare| glob_match(bare, text))
}

/// `*` matches any characters; everything else is literal.
fn glob_match(tokens: &[Token], text: &str) -> bool {
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

    fn glob(pattern: &str, text: &str) -> bool {
        glob_matches(&tokens(pattern), text)
    }

    #[test]
    fn glob_matching() {
        assert!(glob("git * main", "git push origin main"));
        assert!(!glob("git * main", "git push origin dev"));
        assert!(glob("a\\*b", "a*b"));
        assert!(!glob("a\\*b", "axb"));
        assert!(glob("echo '*' *", "echo * x"));
        assert!(!glob("echo '*' *", "echo x y"));
        assert!(glob("*", ""));
        assert!(glob("git *", "git"));
    }

    #[test]
    fn exact_specifiers_are_read_as_commands() {
        let pattern = BashPattern::parse("git commit -m \"a  b\"").expect("parses");
        assert_eq!(
            pattern,
            BashPattern::Exact {
                assignments: Vec::new(),
                words: vec!["git".into(), "commit".into(), "-m".into(), "a  b".into()],
            }
        );
        assert!(matches!(
            BashPattern::parse("git fetch && git push"),
            Ok(BashPattern::Text(_))
        ));
        assert!(matches!(
            BashPattern::parse("npm run test:*"),
            Ok(BashPattern::Glob(_))
        ));
    }
}
