//! Turning raw frontmatter fields into an [`AgentDefinition`].
//!
//! Only `name` and `description` can make a definition fail: an agent with a badly written
//! optional field is still useful, so such a field is reported (field, line, what was found)
//! and ignored, and unknown fields are kept in `extra` so nothing the user wrote is lost.

use super::frontmatter::RawField;
use super::parse::ParseError;
use super::values::{
    boolean, describe, parse_tool, positive_int, string_list, text, tool_name_part, tool_tokens,
    whole_number, WrongValue,
};
use super::{
    AgentDefinition, AgentSource, Effort, Isolation, MemoryScope, ModelSetting, ToolEntry,
};
use fleet_tools::permissions::PermissionMode;
use serde_json::Value;

/// Every field fleet reads, as written in the frontmatter.
pub(crate) const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "maxTurns",
    "skills",
    "mcpServers",
    "hooks",
    "memory",
    "background",
    "effort",
    "isolation",
    "color",
    "initialPrompt",
];

/// Something ignored while reading a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub line: Option<usize>,
    pub message: String,
}

/// Builds the definition. `header_line` is where to point when a required field is missing.
pub(crate) fn build(
    fields: Vec<RawField>,
    prompt: String,
    source: AgentSource,
    header_line: Option<usize>,
) -> Result<(AgentDefinition, Vec<Issue>), ParseError> {
    let mut issues = Vec::new();
    let mut seen: Vec<RawField> = Vec::new();
    for field in fields {
        if let Some(first) = seen.iter().find(|f| f.key == field.key) {
            let at = first
                .line
                .map(|l| format!(" (first at line {l})"))
                .unwrap_or_default();
            issues.push(Issue {
                line: field.line,
                message: format!("{} is given twice{at}; this one is ignored", field.key),
            });
        } else {
            seen.push(field);
        }
    }
    let take = |key: &str| seen.iter().find(|f| f.key == key);
    let name = required(take("name"), "name", header_line, "your-agent-name")?;
    if name.contains(char::is_control) {
        return Err(ParseError::new(
            take("name").and_then(|f| f.line),
            "name must be one line of text",
        ));
    }
    let description = required(
        take("description"),
        "description",
        header_line,
        "when to use this agent",
    )?
    // Many files write line breaks as the two characters `\n`; Claude Code turns them into
    // real ones, so the model sees the same description either way.
    .replace("\\n", "\n");
    let mut def = AgentDefinition::new(name, description, prompt, source);
    for field in &seen {
        if field.value.is_null() || field.key == "name" || field.key == "description" {
            continue;
        }
        if let Err(problem) = apply(&mut def, field, &mut issues) {
            issues.push(Issue {
                line: field.line,
                message: format!("{problem}; ignored"),
            });
        }
    }
    Ok((def, issues))
}

/// The text of a required field, or why the file is not an agent.
fn required(
    field: Option<&RawField>,
    key: &str,
    header_line: Option<usize>,
    example: &str,
) -> Result<String, ParseError> {
    let Some(field) = field else {
        return Err(ParseError::new(
            header_line,
            format!("{key} is missing; add a line `{key}: {example}` to the frontmatter"),
        ));
    };
    if field.value.is_null() {
        return Err(ParseError::new(field.line, format!("{key} is empty")));
    }
    let value = text(&field.value).ok_or_else(|| {
        ParseError::new(
            field.line,
            format!("{key} must be text, found {}", describe(&field.value)),
        )
    })?;
    let value = value.trim();
    if value.is_empty() {
        return Err(ParseError::new(field.line, format!("{key} is empty")));
    }
    Ok(value.to_string())
}

/// Sets one optional field; `Err` says why its value was not usable.
fn apply(
    def: &mut AgentDefinition,
    field: &RawField,
    issues: &mut Vec<Issue>,
) -> Result<(), WrongValue> {
    let value = &field.value;
    let key = field.key.as_str();
    let wrong = |expected: &'static str| WrongValue::new(key, expected, value);
    match key {
        "tools" => {
            let entries = tools(value, key, field.line, issues, false)?;
            let all = entries
                .iter()
                .any(|e| e.name == "*" && e.specifier.is_none());
            def.tools = if all { None } else { Some(entries) };
        }
        "disallowedTools" => def.disallowed_tools = tools(value, key, field.line, issues, true)?,
        "model" => {
            let model = text(value).ok_or_else(|| wrong("text"))?;
            let model = model.trim();
            def.model = match model {
                "" => None,
                m if m.eq_ignore_ascii_case("inherit") => Some(ModelSetting::Inherit),
                m => Some(ModelSetting::Named(m.to_string())),
            };
        }
        "permissionMode" => {
            let modes: Vec<_> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
            let mode = text(value)
                .and_then(|t| t.trim().parse::<PermissionMode>().ok())
                .ok_or_else(|| {
                    WrongValue::new(key, format!("one of {}", modes.join(", ")), value)
                })?;
            def.permission_mode = Some(mode);
        }
        "maxTurns" => {
            let n = positive_int(value).ok_or_else(|| wrong("a positive whole number"))?;
            def.max_turns = Some(n);
        }
        "skills" => {
            def.skills = string_list(value).ok_or_else(|| wrong("a list of names"))?;
        }
        "mcpServers" => def.mcp_servers = mcp_servers(value)?,
        "hooks" => {
            if !value.is_object() {
                return Err(wrong("a mapping of events to hooks"));
            }
            def.hooks = Some(value.clone());
        }
        "memory" => {
            def.memory = Some(
                match text(value)
                    .map(|t| t.trim().to_ascii_lowercase())
                    .as_deref()
                {
                    Some("user") => MemoryScope::User,
                    Some("project") => MemoryScope::Project,
                    Some("local") => MemoryScope::Local,
                    _ => return Err(wrong("user, project or local")),
                },
            );
        }
        "background" => {
            def.background = boolean(value).ok_or_else(|| wrong("true or false"))?;
        }
        "effort" => def.effort = Some(effort(value)?),
        "isolation" => {
            def.isolation = Some(
                match text(value)
                    .map(|t| t.trim().to_ascii_lowercase())
                    .as_deref()
                {
                    Some("worktree") => Isolation::Worktree,
                    Some("remote") => Isolation::Remote,
                    _ => return Err(wrong("worktree or remote")),
                },
            );
        }
        "color" => {
            def.color = Some(text(value).ok_or_else(|| wrong("text"))?);
        }
        "initialPrompt" => {
            def.initial_prompt = Some(text(value).ok_or_else(|| wrong("text"))?);
        }
        _ => {
            def.extra.insert(field.key.clone(), value.clone());
            issues.push(Issue {
                line: field.line,
                message: unknown_field_message(key),
            });
        }
    }
    Ok(())
}

/// The entries of `tools` or `disallowedTools`. An entry that cannot be read is dropped from
/// `tools` (which only narrows what the agent may do) but, in `disallowedTools`, denies its
/// whole tool: a typo in a deny rule must not quietly allow what it meant to forbid.
fn tools(
    value: &Value,
    key: &str,
    line: Option<usize>,
    issues: &mut Vec<Issue>,
    deny: bool,
) -> Result<Vec<ToolEntry>, WrongValue> {
    let tokens = tool_tokens(value).ok_or_else(|| {
        WrongValue::new(
            key,
            "a comma-separated string or a list of tool names",
            value,
        )
    })?;
    let mut entries = Vec::new();
    for token in tokens {
        match parse_tool(&token) {
            Ok(entry) => entries.push(entry),
            Err(problem) => {
                let name = tool_name_part(&token);
                let outcome = if deny && !name.is_empty() {
                    entries.push(ToolEntry::new(name));
                    format!("the whole {name} tool is denied instead")
                } else {
                    "entry ignored".to_string()
                };
                issues.push(Issue {
                    line,
                    message: format!("{key}: {problem}; {outcome}"),
                });
            }
        }
    }
    Ok(entries)
}

/// Server names or inline configurations; a mapping of name to config counts as one
/// single-entry mapping per server, and a string as comma-separated names.
fn mcp_servers(value: &Value) -> Result<Vec<Value>, WrongValue> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(map) => Ok(map
            .iter()
            .map(|(k, v)| Value::Object([(k.clone(), v.clone())].into_iter().collect()))
            .collect()),
        Value::String(_) => Ok(string_list(value)
            .unwrap_or_default()
            .into_iter()
            .map(Value::String)
            .collect()),
        other => Err(WrongValue::new(
            "mcpServers",
            "a list of server names or configurations",
            other,
        )),
    }
}

fn effort(value: &Value) -> Result<Effort, WrongValue> {
    if let Some(level) = text(value).map(|t| t.trim().to_ascii_lowercase()) {
        if crate::effort::LEVELS.contains(&level.as_str()) {
            return Ok(Effort::Level(level));
        }
    }
    whole_number(value).map(Effort::Tokens).ok_or_else(|| {
        WrongValue::new(
            "effort",
            "low, medium, high, xhigh, max or a whole number of tokens",
            value,
        )
    })
}

/// Names the field the user probably meant, since fields are case-sensitive and some
/// collections spell them in other styles (`max_turns`, `allowed-tools`).
fn unknown_field_message(key: &str) -> String {
    let folded: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    let hint = if folded == "allowedtools" {
        Some("tools")
    } else {
        KNOWN_FIELDS
            .iter()
            .copied()
            .find(|known| known.to_ascii_lowercase() == folded)
    };
    match hint {
        Some(known) => format!("unknown field {key} (did you mean {known}?); kept but not used"),
        None => format!("unknown field {key}; kept but not used"),
    }
}
