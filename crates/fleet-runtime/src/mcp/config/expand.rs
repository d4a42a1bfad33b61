//! `${VAR}` and `${VAR:-default}` in server definitions, as Claude Code expands them.
//!
//! The rules, kept the same so a `.mcp.json` means one thing in both tools:
//! - `${NAME}` is the variable's value; a variable that is set but empty gives the empty text.
//! - `${NAME:-default}` is the value when the variable is set (even empty), else `default`
//!   (taken literally, up to the closing brace; it is not expanded again).
//! - `$NAME` without braces, a lone `$`, `${}` and an unclosed `${` are left as written.
//! - A variable that is unset and has no default is collected, so the error can name every
//!   missing one at once instead of one per attempt.

/// Where variables are looked up: the process environment in production, a map in tests.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment as a [`Lookup`]. A value that is not valid UTF-8 counts as unset:
/// it could not be passed on as JSON text faithfully anyway.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Expands every `${…}` in `text`; variables that are unset with no default are pushed onto
/// `missing` (once each) and their reference is left as written.
pub fn expand(text: &str, lookup: Lookup<'_>, missing: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // Unclosed: the rest is literal.
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        if inner.is_empty() {
            out.push_str("${}");
        } else {
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    if !missing.iter().any(|m| m == name) {
                        missing.push(name.to_string());
                    }
                    out.push_str(&rest[start..start + 2 + end + 1]);
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME_DIR" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("t0k".into()),
            _ => None,
        }
    }

    fn run(text: &str) -> (String, Vec<String>) {
        let mut missing = Vec::new();
        let out = expand(text, &env, &mut missing);
        (out, missing)
    }

    #[test]
    fn set_variables_are_replaced_wherever_they_stand() {
        assert_eq!(run("${HOME_DIR}/bin").0, "/home/u/bin");
        assert_eq!(run("Bearer ${TOKEN}").0, "Bearer t0k");
        assert_eq!(run("${TOKEN}${TOKEN}").0, "t0kt0k");
        assert_eq!(run("no variables").0, "no variables");
    }

    #[test]
    fn defaults_apply_only_when_unset() {
        assert_eq!(run("${NOPE:-8080}").0, "8080");
        assert_eq!(run("${TOKEN:-fallback}").0, "t0k");
        // Set but empty is still set (Claude Code's rule, unlike the shell's `:-`).
        assert_eq!(run("[${EMPTY:-x}]").0, "[]");
        assert_eq!(run("${NOPE:-}").0, "");
        // The default is literal: everything up to the closing brace, not expanded again.
        assert_eq!(run("${NOPE:-a:-b}").0, "a:-b");
        assert_eq!(run("${NOPE:-$TOKEN}").0, "$TOKEN");
    }

    #[test]
    fn unset_variables_without_default_are_all_reported_once() {
        let (out, missing) = run("${A}/${B}/${A}");
        assert_eq!(missing, ["A", "B"]);
        assert_eq!(out, "${A}/${B}/${A}");
    }

    #[test]
    fn text_that_is_not_a_reference_is_left_alone() {
        for literal in [
            "$TOKEN", "cost: $5", "${}", "${TOKEN", "a ${ b", "$", "{TOKEN}",
        ] {
            assert_eq!(run(literal), (literal.to_string(), vec![]), "{literal}");
        }
        assert_eq!(run("${TOKEN} ${unclosed").0, "t0k ${unclosed");
    }

    #[test]
    fn multibyte_text_around_references_survives() {
        assert_eq!(run("é${TOKEN}ü${NOPE:-ß}").0, "ét0küß");
    }
}
