//! Reading one field's value in the loose ways agent files write it: numbers as quoted text,
//! booleans as `"true"`, lists as comma strings. Each reader returns `None` when the value
//! cannot be read, and the caller says which field and line that was.

use super::ToolEntry;
use serde_json::Value;
use std::borrow::Cow;
use thiserror::Error;

/// A field whose value is not of the shape the field takes. The field is then reported on its
/// line and ignored.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field} must be {expected}, found {found}")]
pub(crate) struct WrongValue {
    pub field: String,
    /// What the field takes, as a phrase: "text", "true or false".
    pub expected: Cow<'static, str>,
    /// What was written, described ("a list", `"x"`).
    pub found: String,
}

impl WrongValue {
    pub(crate) fn new(field: &str, expected: impl Into<Cow<'static, str>>, value: &Value) -> Self {
        Self {
            field: field.to_string(),
            expected: expected.into(),
            found: describe(value),
        }
    }
}

/// A `tools` / `disallowedTools` entry that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum ToolEntryError {
    #[error("`{token}` has no tool name before `(`")]
    NoName { token: String },
    #[error("`{token}` has no closing `)`; write it as {name}(pattern)")]
    Unclosed { token: String, name: String },
}

/// How a value looks, for a message: `"lots"`, `3`, `true`, `a list`, `a mapping`.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
        other => other.to_string(),
    }
}

/// A scalar as text: strings as they are, numbers and booleans as written.
pub(crate) fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A whole number of at least 1, also when written as a quoted number.
pub(crate) fn positive_int(value: &Value) -> Option<u32> {
    let n = match value {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        _ => return None,
    };
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// A whole number of at least 0, also when written as a quoted number.
pub(crate) fn whole_number(value: &Value) -> Option<u32> {
    match value {
        Value::Number(n) => u32::try_from(n.as_u64()?).ok(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `true`/`false`, also as text in any case.
pub(crate) fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A list of names: a YAML list of scalars, or one comma-separated string.
pub(crate) fn string_list(value: &Value) -> Option<Vec<String>> {
    let items: Vec<String> = match value {
        Value::String(s) => s.split(',').map(str::to_string).collect(),
        Value::Array(items) => items.iter().map(text).collect::<Option<_>>()?,
        _ => return None,
    };
    Some(
        items
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

/// The entries of a `tools`-style field, split but not yet checked: a comma string
/// (`Read, Bash(git *)`) or a list whose items may themselves hold several entries. Commas and
/// spaces inside parentheses belong to the entry; outside them they separate entries, so the
/// common mistake `tools: Read Grep` still means two tools.
pub(crate) fn tool_tokens(value: &Value) -> Option<Vec<String>> {
    let pieces: Vec<String> = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(text).collect::<Option<_>>()?,
        _ => return None,
    };
    let mut tokens = Vec::new();
    for piece in &pieces {
        let mut depth = 0usize;
        let mut current = String::new();
        for (at, c) in piece.char_indices() {
            let separates = match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    false
                }
                ',' => depth == 0,
                // `Bash (git *)`: a space before the parenthesis still belongs to the entry.
                c if c.is_whitespace() => depth == 0 && !piece[at..].trim_start().starts_with('('),
                _ => false,
            };
            if separates {
                tokens.push(std::mem::take(&mut current));
            } else {
                current.push(c);
            }
        }
        tokens.push(current);
    }
    Some(
        tokens
            .into_iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
    )
}

/// One entry: `Read`, `Bash(git *)`, `mcp__github__*`. An empty `()` means no specifier.
pub(crate) fn parse_tool(token: &str) -> Result<ToolEntry, ToolEntryError> {
    let Some(open) = token.find('(') else {
        return Ok(ToolEntry::new(token));
    };
    let name = token[..open].trim();
    if name.is_empty() {
        return Err(ToolEntryError::NoName {
            token: token.to_string(),
        });
    }
    let Some(inner) = token[open + 1..].strip_suffix(')') else {
        return Err(ToolEntryError::Unclosed {
            token: token.to_string(),
            name: name.to_string(),
        });
    };
    let inner = inner.trim();
    Ok(ToolEntry {
        name: name.to_string(),
        specifier: (!inner.is_empty()).then(|| inner.to_string()),
    })
}

/// The tool name part of an entry that could not be read (`Bash` of `Bash(rm *`).
pub(crate) fn tool_name_part(token: &str) -> &str {
    token.split('(').next().unwrap_or(token).trim()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tokens(v: Value) -> Vec<String> {
        tool_tokens(&v).unwrap()
    }

    #[test]
    fn tool_tokens_split_outside_parentheses_only() {
        assert_eq!(
            tokens(json!("Read, Bash(git add, git commit),Grep")),
            ["Read", "Bash(git add, git commit)", "Grep"]
        );
        assert_eq!(tokens(json!("Read Grep  Glob")), ["Read", "Grep", "Glob"]);
        assert_eq!(
            tokens(json!(["Read, Write", "Bash(npm run *)"])),
            ["Read", "Write", "Bash(npm run *)"]
        );
        assert_eq!(
            tokens(json!("Bash (git *), Read")),
            ["Bash (git *)", "Read"]
        );
        assert_eq!(tokens(json!("")), Vec::<String>::new());
        assert!(tool_tokens(&json!({"a": 1})).is_none());
        assert!(tool_tokens(&json!([["Read"]])).is_none());
    }

    #[test]
    fn tool_entries_split_name_and_specifier() {
        assert_eq!(parse_tool("Read").unwrap(), ToolEntry::new("Read"));
        let bash = parse_tool("Bash(git *)").unwrap();
        assert_eq!(
            (bash.name.as_str(), bash.specifier.as_deref()),
            ("Bash", Some("git *"))
        );
        assert_eq!(parse_tool("Bash (ls)").unwrap().name, "Bash");
        assert_eq!(parse_tool("Bash()").unwrap(), ToolEntry::new("Bash"));
        let unclosed = parse_tool("Bash(rm *").unwrap_err();
        assert!(
            matches!(&unclosed, ToolEntryError::Unclosed { name, .. } if name == "Bash"),
            "{unclosed}"
        );
        assert!(unclosed.to_string().contains("closing"));
        assert!(matches!(
            parse_tool("(x)"),
            Err(ToolEntryError::NoName { .. })
        ));
        assert_eq!(tool_name_part("Bash(rm *"), "Bash");
    }

    #[test]
    fn scalars_in_loose_spellings() {
        assert_eq!(positive_int(&json!(5)), Some(5));
        assert_eq!(positive_int(&json!(" 12 ")), Some(12));
        assert_eq!(positive_int(&json!(0)), None);
        assert_eq!(positive_int(&json!(-3)), None);
        assert_eq!(positive_int(&json!(2.5)), None);
        assert_eq!(positive_int(&json!("lots")), None);
        assert_eq!(boolean(&json!("TRUE")), Some(true));
        assert_eq!(boolean(&json!("no")), None);
        assert_eq!(string_list(&json!("a, b,,c")).unwrap(), ["a", "b", "c"]);
        assert_eq!(describe(&json!("lots")), "\"lots\"");
        assert_eq!(describe(&json!([1])), "a list");
    }
}
