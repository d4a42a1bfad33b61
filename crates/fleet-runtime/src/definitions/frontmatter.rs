//! Splitting an agent file into frontmatter and body, and reading the frontmatter into raw
//! top-level fields: strict YAML first, and the line-based reader of [`super::loose`] when the
//! YAML does not parse, because many files people already use are not valid YAML.
//!
//! Line numbers are kept as lines of the *file*, so every message can point at the line the
//! user sees in the editor.

use super::loose;
use super::parse::ParseError;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::options::DuplicateKeyPolicy;
use serde_saphyr::Spanned;

/// One top-level frontmatter entry, before its value is interpreted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawField {
    pub key: String,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    pub value: Value,
}

/// A file cut at its `---` fences.
#[derive(Debug)]
pub(crate) struct Split<'a> {
    /// The line of the opening `---`.
    pub opening_line: usize,
    /// The line of the closing `---`.
    pub closing_line: usize,
    /// The lines between the fences, each with its 1-based line number in the file.
    pub lines: Vec<(usize, &'a str)>,
    /// Everything after the closing fence, trimmed.
    pub body: String,
}

/// Cuts `text` into frontmatter lines and body. A byte-order mark and CRLF endings are
/// accepted, as are blank lines before the opening fence.
pub(crate) fn split(text: &str) -> Result<Split<'_>, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // `str::lines` also drops the `\r` of a CRLF ending.
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let Some((opening_line, first)) = lines.find(|(_, l)| !l.trim().is_empty()) else {
        return Err(ParseError::at(
            1,
            "the file is empty; an agent file starts with `---`, then fields such as \
             `name:` and `description:`, then `---`, then the agent's system prompt",
        ));
    };
    if !is_fence(first) {
        return Err(ParseError::at(
            opening_line,
            "no frontmatter: an agent file must start with a line `---`, then fields such \
             as `name:` and `description:`, then `---`, then the agent's system prompt",
        ));
    }
    let mut front = Vec::new();
    let mut closing_line = None;
    for (no, line) in lines.by_ref() {
        if is_fence(line) {
            closing_line = Some(no);
            break;
        }
        front.push((no, line));
    }
    let Some(closing_line) = closing_line else {
        return Err(ParseError::at(
            opening_line,
            "the frontmatter opened here is never closed; add a line `---` after the last \
             field, before the prompt",
        ));
    };
    let body: Vec<&str> = lines.map(|(_, l)| l).collect();
    Ok(Split {
        opening_line,
        closing_line,
        lines: front,
        body: body.join("\n").trim().to_string(),
    })
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// The top-level fields of the frontmatter, in the order written (duplicates included; the
/// caller decides which one counts).
pub(crate) fn read_fields(lines: &[(usize, &str)]) -> Vec<RawField> {
    strict_fields(lines).unwrap_or_else(|| loose::read(lines))
}

/// The fields if the frontmatter is a valid YAML mapping (or empty), else `None`.
fn strict_fields(lines: &[(usize, &str)]) -> Option<Vec<RawField>> {
    let Some(&(first_line, _)) = lines.first() else {
        return Some(Vec::new());
    };
    let text: Vec<&str> = lines.iter().map(|(_, l)| *l).collect();
    let text = text.join("\n");
    let options = serde_saphyr::options! {
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
    };
    let list: FieldList = serde_saphyr::from_str_with_options(&text, options).ok()?;
    let offset = first_line - 1;
    Some(
        list.0
            .into_iter()
            .map(|(key, value)| {
                let line = usize::try_from(key.referenced.line()).ok();
                RawField {
                    key: key.value,
                    line: line.filter(|l| *l > 0).map(|l| l + offset),
                    value,
                }
            })
            .collect(),
    )
}

/// Parses a block of YAML on its own (a nested value the loose reader met), if it is valid.
pub(crate) fn strict_value(text: &str) -> Option<Value> {
    serde_saphyr::from_str::<Value>(text).ok()
}

/// A top-level mapping read entry by entry, keeping each key's position and every duplicate.
struct FieldList(Vec<(Spanned<String>, Value)>);

impl<'de> Deserialize<'de> for FieldList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldListVisitor)
    }
}

struct FieldListVisitor;

impl<'de> Visitor<'de> for FieldListVisitor {
    type Value = FieldList;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a mapping of frontmatter fields")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<FieldList, E> {
        Ok(FieldList(Vec::new()))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<FieldList, E> {
        Ok(FieldList(Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldList, A::Error> {
        let mut fields = Vec::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let value: Value = map.next_value()?;
            fields.push((key, value));
        }
        Ok(FieldList(fields))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(text: &str) -> Vec<(usize, &str)> {
        text.lines().enumerate().map(|(i, l)| (i + 2, l)).collect()
    }

    #[test]
    fn strict_yaml_keeps_key_lines_in_file_numbering() {
        let text = "name: a\n\ntools:\n  - Read\nmaxTurns: 3";
        let fields = read_fields(&lines(text));
        let got: Vec<_> = fields.iter().map(|f| (f.key.as_str(), f.line)).collect();
        assert_eq!(
            got,
            [("name", Some(2)), ("tools", Some(4)), ("maxTurns", Some(6))]
        );
        assert_eq!(fields[1].value, json!(["Read"]));
        assert_eq!(fields[2].value, json!(3));
    }

    #[test]
    fn duplicate_keys_are_all_reported_in_order() {
        let fields = read_fields(&lines("name: a\nname: b"));
        let values: Vec<_> = fields.iter().map(|f| f.value.clone()).collect();
        assert_eq!(values, [json!("a"), json!("b")]);
    }

    #[test]
    fn invalid_yaml_falls_back_to_the_loose_reader() {
        let fields = read_fields(&lines("name: a\ndescription: Use it: when asked"));
        assert_eq!(fields[1].value, json!("Use it: when asked"));
        assert_eq!(fields[1].line, Some(3));
    }

    #[test]
    fn split_reports_the_fences_and_trims_the_body() {
        let split = split("\u{feff}---\r\nname: a\r\n---\r\n\r\nHello\r\nthere\r\n").unwrap();
        assert_eq!((split.opening_line, split.closing_line), (1, 3));
        assert_eq!(split.lines, [(2, "name: a")]);
        assert_eq!(split.body, "Hello\nthere");
    }

    #[test]
    fn split_rejects_unclosed_and_missing_frontmatter() {
        let unclosed = split("\n---\nname: a\n").unwrap_err();
        assert_eq!(unclosed.line, Some(2));
        assert!(unclosed.message.contains("never closed"));
        let missing = split("# Title\n").unwrap_err();
        assert!(missing.message.starts_with("no frontmatter"));
    }
}
