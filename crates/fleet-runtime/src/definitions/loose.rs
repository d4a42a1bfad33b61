//! The forgiving reader for frontmatter that is not valid YAML.
//!
//! Real agent files often hold a one-line `description:` full of `: `, quotes and `<example>`
//! tags, which no YAML parser accepts; Claude Code still loads them, so fleet must too. This
//! reader only understands top-level `key: value` lines: the value is everything after the
//! first `: `, it may go on over the following indented (or otherwise non-key) lines, a key with
//! nothing after it may hold `- item` lines or a nested YAML block, `[a, b]` is a list, and one
//! pair of matching surrounding quotes is removed.

use super::frontmatter::{strict_value, RawField};
use serde_json::Value;

/// Reads `lines` (each with its file line number) as loose `key: value` entries.
pub(crate) fn read(lines: &[(usize, &str)]) -> Vec<RawField> {
    let mut fields = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (no, line) = lines[i];
        i += 1;
        let Some((key, rest)) = key_line(line) else {
            // Text before the first key has nothing to belong to; comments are skipped.
            continue;
        };
        let start = i;
        while i < lines.len() && key_line(lines[i].1).is_none() {
            i += 1;
        }
        let continuation: Vec<&str> = lines[start..i]
            .iter()
            .map(|(_, l)| *l)
            .filter(|l| !is_comment(l))
            .collect();
        fields.push(RawField {
            key: key.to_string(),
            line: Some(no),
            value: value_of(rest.trim(), &continuation),
        });
    }
    fields
}

/// `key: rest` when `line` starts at column 0 with a plain or quoted identifier and a colon
/// followed by a space or the end of the line.
fn key_line(line: &str) -> Option<(&str, &str)> {
    let (quote, start) = match line.chars().next()? {
        q @ ('"' | '\'') => (Some(q), 1),
        c if c.is_ascii_alphabetic() || c == '_' => (None, 0),
        _ => return None,
    };
    let ident_len = line[start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(line.len() - start);
    if ident_len == 0 {
        return None;
    }
    let key = &line[start..start + ident_len];
    let mut after = &line[start + ident_len..];
    if let Some(q) = quote {
        after = after.strip_prefix(q)?;
    }
    let rest = after.strip_prefix(':')?;
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some((key, rest))
    } else {
        None
    }
}

fn is_comment(line: &str) -> bool {
    line.starts_with('#')
}

fn value_of(rest: &str, continuation: &[&str]) -> Value {
    let has_more = continuation.iter().any(|l| !l.trim().is_empty());
    match rest {
        "" if !has_more => Value::Null,
        "" => nested(continuation),
        "|" | "|-" | "|+" => Value::String(block(continuation, "\n")),
        ">" | ">-" | ">+" => Value::String(block(continuation, " ")),
        _ => {
            let text = fold(rest, continuation);
            let inner = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
            if let Some(inner) = inner.filter(|i| !i.contains(['[', ']'])) {
                Value::Array(flow_list(inner))
            } else if text.starts_with('{') {
                strict_value(&text)
                    .filter(Value::is_object)
                    .unwrap_or_else(|| Value::String(text))
            } else {
                Value::String(unquote(&text))
            }
        }
    }
}

/// The lines under a key with nothing after its colon: a YAML block if it parses (lists of
/// objects, hook tables), else `- item` lines, else text.
fn nested(lines: &[&str]) -> Value {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let dedented: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    if let Some(value) = strict_value(&dedented.join("\n")) {
        // A mapping whose keys read like prose is a sentence with a colon in it, not a table.
        let table = value
            .as_object()
            .is_some_and(|map| map.keys().all(|k| !k.contains(char::is_whitespace)));
        if value.is_array() || table {
            return value;
        }
    }
    let items: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if items.iter().all(|l| l.starts_with('-')) {
        return Value::Array(
            items
                .iter()
                .map(|l| Value::String(unquote(l[1..].trim())))
                .collect(),
        );
    }
    Value::String(unquote(&fold("", lines)))
}

/// A `|` or `>` block: the lines dedented and joined by `sep`, blank lines kept as line breaks.
fn block(lines: &[&str], sep: &str) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    let mut after_break = true;
    for line in lines {
        let text = line.get(indent..).unwrap_or("").trim_end();
        if text.is_empty() {
            out.push('\n');
            after_break = true;
            continue;
        }
        if !after_break {
            out.push_str(sep);
        }
        out.push_str(text);
        after_break = false;
    }
    out.trim_end().to_string()
}

/// The first line's text and the continuation lines joined by spaces, as YAML folds a plain
/// value; a blank line between them becomes a line break.
fn fold(first: &str, lines: &[&str]) -> String {
    let mut out = first.to_string();
    let mut pending_break = false;
    for line in lines {
        let text = line.trim();
        if text.is_empty() {
            pending_break = !out.is_empty();
            continue;
        }
        if pending_break {
            out.push('\n');
            pending_break = false;
        } else if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(text);
    }
    out
}

/// The items of `a, "b", c` (the inside of `[...]`), empty items dropped.
fn flow_list(inner: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items
        .iter()
        .map(|i| unquote(i.trim()))
        .filter(|i| !i.is_empty())
        .map(Value::String)
        .collect()
}

/// Removes one pair of matching surrounding quotes, when the quote character does not also
/// occur unescaped inside (then the quotes are part of the text, as in `'a' or 'b'`).
pub(crate) fn unquote(text: &str) -> String {
    let text = text.trim();
    for quote in ['"', '\''] {
        let Some(inner) = text.strip_prefix(quote).and_then(|t| t.strip_suffix(quote)) else {
            continue;
        };
        if text.len() < 2 {
            continue;
        }
        if quote == '"' {
            let mut escaped = false;
            let mut clean = true;
            for c in inner.chars() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => clean = false,
                    _ => escaped = false,
                }
            }
            if clean {
                return inner.replace("\\\"", "\"");
            }
        } else if !inner.replace("''", "").contains('\'') {
            return inner.replace("''", "'");
        }
    }
    text.to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_text(text: &str) -> Vec<(String, Option<usize>, Value)> {
        let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
        read(&lines)
            .into_iter()
            .map(|f| (f.key, f.line, f.value))
            .collect()
    }

    #[test]
    fn value_is_everything_after_the_first_colon() {
        let got = read_text("description: Use it when: the user says 'go' assistant: \"ok\"");
        assert_eq!(
            got[0].2,
            json!("Use it when: the user says 'go' assistant: \"ok\"")
        );
    }

    #[test]
    fn indented_and_stray_lines_continue_the_value() {
        let got = read_text("description: first\n  second\n<example>third</example>\nname: x");
        assert_eq!(got[0].2, json!("first second <example>third</example>"));
        assert_eq!((got[1].0.as_str(), got[1].1), ("name", Some(4)));
    }

    #[test]
    fn lists_in_every_loose_form() {
        let got = read_text("tools:\n  - Read\n  - \"Bash(git *)\"\nskills: [a, 'b', c]\nx: ");
        assert_eq!(got[0].2, json!(["Read", "Bash(git *)"]));
        assert_eq!(got[1].2, json!(["a", "b", "c"]));
        assert_eq!(got[2].2, Value::Null);
    }

    #[test]
    fn nested_yaml_blocks_are_kept_as_structures() {
        let got = read_text("d: a: b: c\nhooks:\n  Stop:\n    - command: echo hi\n");
        assert_eq!(got[1].2, json!({"Stop": [{"command": "echo hi"}]}));
    }

    #[test]
    fn block_scalars_keep_or_fold_lines() {
        let got = read_text("a: |\n  one\n  two\nb: >-\n  one\n  two\n\n  three");
        assert_eq!(got[0].2, json!("one\ntwo"));
        assert_eq!(got[1].2, json!("one two\nthree"));
    }

    #[test]
    fn one_pair_of_matching_quotes_is_removed() {
        assert_eq!(unquote("\"a 'b' c\""), "a 'b' c");
        assert_eq!(unquote("'it''s'"), "it's");
        assert_eq!(unquote("'fix it' user: 'go'"), "'fix it' user: 'go'");
        assert_eq!(unquote("\"say \\\"hi\\\"\""), "say \"hi\"");
        assert_eq!(unquote("\""), "\"");
        assert_eq!(unquote("plain"), "plain");
    }

    #[test]
    fn keys_need_a_colon_then_space_or_end() {
        assert_eq!(key_line("name: a"), Some(("name", " a")));
        assert_eq!(key_line("\"name\": a"), Some(("name", " a")));
        assert_eq!(key_line("max-turns:"), Some(("max-turns", "")));
        assert_eq!(key_line("http://x"), None);
        assert_eq!(key_line("  name: a"), None);
        assert_eq!(key_line("<example>"), None);
    }
}
