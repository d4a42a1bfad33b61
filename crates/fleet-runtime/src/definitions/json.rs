//! `--agents '<json>'`: definitions given on the command line, in Claude Code's shape — an
//! object keyed by agent name whose values hold `description`, `prompt` and the same optional
//! fields as a file's frontmatter.
//!
//! Unlike a file among many, the JSON was typed for this run, so a definition that cannot be
//! used is an error rather than a skipped file; badly written optional fields are still only
//! warnings, as in files.

use super::fields::{build, Issue};
use super::frontmatter::RawField;
use super::parse::ParseError;
use super::values::describe;
use super::{AgentDefinition, AgentSource, LoadWarning};
use serde_json::Value;

const SHAPE: &str = r#"give an object keyed by agent name, e.g. {"reviewer": {"description": "Reviews diffs", "prompt": "You review code."}}"#;

/// The definitions in `json`, in the order written. Warnings about ignored fields are
/// dropped here; [`super::AgentCatalog::load`] reports them.
pub fn parse_command_line_agents(json: &str) -> Result<Vec<AgentDefinition>, ParseError> {
    parse_with_warnings(json).map(|(defs, _)| defs)
}

pub(crate) fn parse_with_warnings(
    json: &str,
) -> Result<(Vec<AgentDefinition>, Vec<LoadWarning>), ParseError> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| ParseError::new(None, format!("--agents is not valid JSON ({e}); {SHAPE}")))?;
    let Value::Object(agents) = value else {
        return Err(ParseError::new(
            None,
            format!(
                "--agents must be a JSON object, found {}; {SHAPE}",
                describe(&value)
            ),
        ));
    };
    let mut defs = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in agents {
        let (def, issues) = one_agent(&name, entry)?;
        warnings.extend(issues.into_iter().map(|Issue { message, .. }| LoadWarning {
            path: None,
            line: None,
            message: format!("--agents: agent {name:?}: {message}"),
        }));
        defs.push(def);
    }
    Ok((defs, warnings))
}

fn one_agent(name: &str, entry: Value) -> Result<(AgentDefinition, Vec<Issue>), ParseError> {
    let fail =
        |message: String| ParseError::new(None, format!("--agents: agent {name:?}: {message}"));
    if name.trim().is_empty() {
        return Err(ParseError::new(None, "--agents: an agent name is empty"));
    }
    let Value::Object(mut fields) = entry else {
        return Err(fail(format!(
            "must be an object with description and prompt, found {}",
            describe(&entry)
        )));
    };
    let prompt = match fields.remove("prompt") {
        Some(Value::String(p)) if !p.trim().is_empty() => p.trim().to_string(),
        Some(Value::String(_)) => return Err(fail("prompt is empty".into())),
        Some(other) => {
            return Err(fail(format!(
                "prompt must be text (the agent's system prompt), found {}",
                describe(&other)
            )))
        }
        None => {
            return Err(fail(
                r#"prompt is missing; add "prompt": "<the agent's system prompt>""#.into(),
            ))
        }
    };
    match fields.get("description") {
        None | Some(Value::Null) => {
            return Err(fail(
                r#"description is missing; add "description": "<when to use this agent>""#.into(),
            ))
        }
        Some(_) => {}
    }
    // The key names the agent; a `name` inside the object would only be a second opinion.
    fields.remove("name");
    let mut raw = vec![RawField {
        key: "name".into(),
        line: None,
        value: Value::String(name.to_string()),
    }];
    raw.extend(fields.into_iter().map(|(key, value)| RawField {
        key,
        line: None,
        value,
    }));
    build(raw, prompt, AgentSource::CommandLine, None).map_err(|e| fail(e.message))
}
