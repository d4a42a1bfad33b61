//! Which tool (or source, or agent type) a matcher group applies to.
//!
//! As in Claude Code: an empty matcher or `*` matches everything; a matcher made only of
//! name characters and `|` (`Bash|Edit`) is a list of exact names, so `Edit` does not catch
//! `NotebookEdit`; anything else is a regular expression searched in the name (`mcp__.*`,
//! `Notebook.*`).

use regex::Regex;

#[derive(Debug, Clone)]
pub enum Matcher {
    Any,
    Names(Vec<String>),
    Pattern(Regex),
}

impl Matcher {
    pub fn any() -> Self {
        Self::Any
    }

    pub fn parse(text: &str) -> Result<Self, regex::Error> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Self::Any);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == '-');
        if plain {
            return Ok(Self::Names(
                text.split('|')
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect(),
            ));
        }
        Regex::new(text).map(Self::Pattern)
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Names(names) => names.iter().any(|n| n == name),
            Self::Pattern(regex) => regex.is_match(name),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn matches_as_claude_code_does() {
        let m = |s: &str| Matcher::parse(s).unwrap();
        assert!(m("").matches("Bash"));
        assert!(m("*").matches("Anything"));
        assert!(m("Bash|Edit").matches("Edit"));
        assert!(!m("Edit").matches("NotebookEdit"));
        assert!(m("mcp__.*").matches("mcp__memory__create"));
        assert!(!m("mcp__.*").matches("Bash"));
        assert!(m("Notebook.*").matches("NotebookEdit"));
        assert!(Matcher::parse("(").is_err());
    }
}
