//! A small TOML grammar for syntect, whose bundled syntaxes have none — and TOML is what a
//! Rust project's `Cargo.toml` snippets are written in. One flat context of patterns (no
//! pushes or pops), which is enough to colour comments, table headers, keys, strings, dates,
//! numbers and booleans line by line. Strings spanning lines (`"""`) are not followed.

use std::collections::HashMap;
use syntect::parsing::syntax_definition::{Context, MatchOperation, MatchPattern, Pattern};
use syntect::parsing::{Scope, SyntaxDefinition, SyntaxSet, SyntaxSetBuilder};

/// (regex, scope) in order of preference when two match at the same place.
const PATTERNS: [(&str, &str); 8] = [
    (r"#[^\n]*", "comment.line.number-sign.toml"),
    (r"^\s*\[\[?[^\]\n]*\]\]?", "entity.name.section.toml"),
    (r#""(?:[^"\\\n]|\\.)*"?"#, "string.quoted.double.toml"),
    (r"'[^'\n]*'?", "string.quoted.single.toml"),
    (r"[A-Za-z0-9_\-\.]+(?=\s*=)", "entity.name.tag.toml"),
    (
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:\d{2})?",
        "constant.other.date.toml",
    ),
    (
        r"(?<![\w.])[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?|inf|nan)\b",
        "constant.numeric.toml",
    ),
    (r"\b(?:true|false)\b", "constant.language.toml"),
];

/// A set holding only TOML (empty if the grammar cannot be built).
pub(super) fn toml_set() -> SyntaxSet {
    let mut builder = SyntaxSetBuilder::new();
    if let Some(toml) = definition() {
        builder.add(toml);
    }
    builder.build()
}

fn definition() -> Option<SyntaxDefinition> {
    let mut main = Context::new(true);
    for (regex, scope) in PATTERNS {
        main.patterns.push(Pattern::Match(MatchPattern::new(
            false,
            regex.to_string(),
            vec![Scope::new(scope).ok()?],
            None,
            MatchOperation::None,
            None,
        )));
    }
    let scope = Scope::new("source.toml").ok()?;
    main.meta_content_scope = vec![scope];
    // The parser starts in `__start` (which a loaded grammar points at `main` by reference,
    // a kind of reference only syntect itself can build); a flat grammar never leaves its
    // first context, so each of the three is the same list of patterns.
    let mut start = main.clone();
    start.meta_include_prototype = false;
    Some(SyntaxDefinition {
        name: "TOML".to_string(),
        file_extensions: vec!["toml".to_string(), "tml".to_string(), "lock".to_string()],
        scope,
        first_line_match: None,
        hidden: false,
        variables: HashMap::new(),
        contexts: HashMap::from([
            ("__start".to_string(), start),
            ("__main".to_string(), main.clone()),
            ("main".to_string(), main),
        ]),
    })
}
