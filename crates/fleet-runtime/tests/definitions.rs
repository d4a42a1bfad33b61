//! Agent definition files: every field form, the loose files real collections contain, and
//! broken files with the lines they are reported at. Fixtures are in `tests/definitions/`.
#![allow(clippy::unwrap_used)]

use fleet_runtime::definitions::{
    parse_agent_file, AgentDefinition, AgentSource, Effort, Isolation, LoadWarning, MemoryScope,
    ModelSetting, ParseError, ToolEntry,
};
use fleet_tools::permissions::PermissionMode;
use serde_json::json;
use std::path::{Path, PathBuf};

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/definitions")
        .join(name)
}

fn parse_text(text: &str) -> Result<(AgentDefinition, Vec<LoadWarning>), ParseError> {
    let path = Path::new("/project/.claude/agents/test.md");
    parse_agent_file(text, path, AgentSource::Project(path.to_path_buf()))
}

fn fixture(name: &str) -> Result<(AgentDefinition, Vec<LoadWarning>), ParseError> {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_agent_file(&text, &path, AgentSource::Project(path.clone()))
}

/// A file with `fields` between the fences (they start on line 2) and a one-line prompt.
fn with_fields(fields: &str) -> (AgentDefinition, Vec<LoadWarning>) {
    parse_text(&format!(
        "---\nname: t\ndescription: d\n{fields}\n---\nDo it."
    ))
    .unwrap()
}

fn tool_strings(tools: &[ToolEntry]) -> Vec<String> {
    tools.iter().map(ToolEntry::to_rule_string).collect()
}

fn lines_of(warnings: &[LoadWarning]) -> Vec<Option<usize>> {
    warnings.iter().map(|w| w.line).collect()
}

// ---- field forms ----------------------------------------------------------------------------

#[test]
fn tools_as_comma_string_list_star_and_specifiers() {
    let (def, warnings) = with_fields("tools: Read, Grep,Bash(git *), mcp__github__*");
    assert!(warnings.is_empty(), "{warnings:?}");
    let tools = def.tools.unwrap();
    assert_eq!(
        tool_strings(&tools),
        ["Read", "Grep", "Bash(git *)", "mcp__github__*"]
    );
    assert_eq!(tools[2].name, "Bash");
    assert_eq!(tools[2].specifier.as_deref(), Some("git *"));

    let (def, _) = with_fields("tools:\n  - Read\n  - Bash(npm run test, npm run lint)");
    assert_eq!(
        tool_strings(&def.tools.unwrap()),
        ["Read", "Bash(npm run test, npm run lint)"]
    );
    assert_eq!(with_fields("tools: [\"*\"]").0.tools, None);
    assert_eq!(with_fields("tools: Read, *").0.tools, None);
    assert_eq!(with_fields("tools: []").0.tools, Some(vec![]));
    assert_eq!(with_fields("x: 1").0.tools, None);
}

#[test]
fn disallowed_tools_and_a_broken_deny_entry_denies_the_whole_tool() {
    let (def, warnings) = with_fields("disallowedTools: [Write, \"Bash(rm *\"]");
    assert_eq!(tool_strings(&def.disallowed_tools), ["Write", "Bash"]);
    assert_eq!(lines_of(&warnings), [Some(4)]);
    assert!(warnings[0].message.contains("whole Bash tool is denied"));
    let (def, warnings) = with_fields("tools: Read, Bash(ls");
    assert_eq!(tool_strings(&def.tools.unwrap()), ["Read"]);
    assert!(warnings[0].message.contains("entry ignored"));
}

#[test]
fn model_inherit_alias_and_full_id() {
    let model = |v: &str| with_fields(&format!("model: {v}")).0.model;
    assert_eq!(model("inherit"), Some(ModelSetting::Inherit));
    assert_eq!(model("INHERIT"), Some(ModelSetting::Inherit));
    assert_eq!(model("haiku"), Some(ModelSetting::Named("haiku".into())));
    assert_eq!(
        model("claude-opus-4-1-20250805"),
        Some(ModelSetting::Named("claude-opus-4-1-20250805".into()))
    );
    assert_eq!(model("\"\""), None);
}

#[test]
fn every_permission_mode_and_an_unknown_one() {
    for mode in PermissionMode::ALL {
        let (def, warnings) = with_fields(&format!("permissionMode: {}", mode.as_str()));
        assert_eq!(def.permission_mode, Some(mode));
        assert!(warnings.is_empty());
    }
    let (def, warnings) = with_fields("permissionMode: yolo");
    assert_eq!(def.permission_mode, None);
    assert_eq!(lines_of(&warnings), [Some(4)]);
    assert!(warnings[0].message.contains("found \"yolo\""));
}

#[test]
fn max_turns_forms() {
    assert_eq!(with_fields("maxTurns: 7").0.max_turns, Some(7));
    assert_eq!(with_fields("maxTurns: \"12\"").0.max_turns, Some(12));
    for bad in ["lots", "0", "-2", "2.5"] {
        let (def, warnings) = with_fields(&format!("model: x\nmaxTurns: {bad}"));
        assert_eq!(def.max_turns, None, "{bad}");
        assert_eq!(lines_of(&warnings), [Some(5)], "{bad}");
    }
    let (_, warnings) = with_fields("maxTurns: lots");
    assert_eq!(
        warnings[0].to_string(),
        "/project/.claude/agents/test.md:4: maxTurns must be a positive whole number, \
         found \"lots\"; ignored"
    );
}

#[test]
fn effort_forms() {
    let effort = |v: &str| with_fields(&format!("effort: {v}")).0.effort;
    assert_eq!(effort("low"), Some(Effort::Level("low".into())));
    assert_eq!(effort("MAX"), Some(Effort::Level("max".into())));
    assert_eq!(effort("medium"), Some(Effort::Level("medium".into())));
    assert_eq!(effort("8000"), Some(Effort::Tokens(8000)));
    assert_eq!(effort("\"1024\""), Some(Effort::Tokens(1024)));
    let (def, warnings) = with_fields("effort: extreme");
    assert_eq!(def.effort, None);
    assert_eq!(warnings.len(), 1);
}

#[test]
fn isolation_memory_background_and_lists() {
    let (def, _) = with_fields("isolation: worktree\nmemory: user\nbackground: \"true\"");
    assert_eq!(def.isolation, Some(Isolation::Worktree));
    assert_eq!(def.memory, Some(MemoryScope::User));
    assert!(def.background);
    assert_eq!(
        with_fields("isolation: Remote").0.isolation,
        Some(Isolation::Remote)
    );
    assert!(!with_fields("background: 'false'").0.background);
    assert!(!with_fields("background: false").0.background);
    assert_eq!(with_fields("skills: a, b").0.skills, ["a", "b"]);
    assert_eq!(with_fields("skills:\n  - a\n  - b").0.skills, ["a", "b"]);
    assert_eq!(
        with_fields("mcpServers: github, linear").0.mcp_servers,
        [json!("github"), json!("linear")]
    );
}

#[test]
fn unknown_fields_are_kept_with_a_warning_naming_line_and_hint() {
    let (def, warnings) = fixture("unknown-fields.md").unwrap();
    assert_eq!(def.extra["version"], json!(1.2));
    assert_eq!(def.extra["author"], json!("Data Team"));
    assert_eq!(def.extra["max_turns"], json!(12));
    assert_eq!(def.max_turns, None);
    assert_eq!(tool_strings(&def.tools.unwrap()), ["Bash", "Read", "Write"]);
    assert_eq!(
        lines_of(&warnings),
        [Some(4), Some(5), Some(6), Some(7), Some(8)]
    );
    assert!(warnings[2].message.contains("did you mean tools?"));
    assert!(warnings[3].message.contains("did you mean maxTurns?"));
    assert!(warnings
        .iter()
        .all(|w| w.message.contains("kept but not used")));
}

#[test]
fn a_field_given_twice_keeps_the_first() {
    let (def, warnings) = with_fields("model: opus\nmodel: haiku");
    assert_eq!(def.model, Some(ModelSetting::Named("opus".into())));
    assert_eq!(lines_of(&warnings), [Some(5)]);
    assert!(warnings[0].message.contains("first at line 4"));
}

// ---- fixtures shaped like real collections ---------------------------------------------------

#[test]
fn strict_yaml_file_with_common_fields() {
    let (def, warnings) = fixture("security-reviewer.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(def.name, "security-reviewer");
    assert_eq!(
        tool_strings(def.tools.as_ref().unwrap()),
        ["Read", "Grep", "Glob", "Bash(git diff *)"]
    );
    assert_eq!(def.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(def.max_turns, Some(40));
    assert_eq!(def.memory, Some(MemoryScope::Project));
    assert_eq!(def.color.as_deref(), Some("red"));
    assert!(def.prompt.starts_with("You are a security reviewer."));
    assert!(def.prompt.ends_with("Do not change any file."));
}

#[test]
fn collection_file_without_tools_gets_every_tool() {
    let (def, warnings) = fixture("backend-architect.md").unwrap();
    assert!(warnings.is_empty());
    assert_eq!(def.tools, None);
    assert_eq!(def.model, Some(ModelSetting::Named("opus".into())));
    assert!(def.description.contains("Use PROACTIVELY"));
    assert!(def.prompt.contains("## Focus"));
}

#[test]
fn generated_file_with_examples_and_escaped_newlines_loads() {
    let (def, warnings) = fixture("code-reviewer-generated.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(def
        .description
        .starts_with("Use this agent when the user has written"));
    assert!(def.description.contains(
        "Examples:\n\n<example>\nContext: The user has just finished a new parser.\nuser: \
         \"I wrote the config parser, can you check it?\"\nassistant: \"I'll use"
    ));
    assert!(!def.description.contains("\\n"));
    assert_eq!(def.model, Some(ModelSetting::Inherit));
    assert_eq!(def.tools.unwrap().len(), 6);
    assert_eq!(def.color.as_deref(), Some("blue"));
}

#[test]
fn description_continued_on_indented_lines_with_colons_loads() {
    let (def, warnings) = fixture("test-writer-examples.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(def.description.starts_with(
        "Use this agent after a feature is implemented, to add missing tests. Examples: \
         <example> Context: the user has added a new endpoint."
    ));
    assert!(def.description.contains("</example>\n<example>"));
    assert_eq!(
        tool_strings(&def.tools.unwrap()),
        [
            "Read",
            "Write",
            "Edit",
            "Bash(cargo test *)",
            "Bash(npm test)"
        ]
    );
    assert_eq!(
        def.model,
        Some(ModelSetting::Named("claude-sonnet-4-5-20250929".into()))
    );
}

#[test]
fn quoted_values_and_quoted_numbers() {
    let (def, warnings) = fixture("docs-writer-quoted.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(def.name, "docs-writer");
    assert!(def.description.contains("\"how to\" pages. It's careful"));
    assert_eq!(def.max_turns, Some(30));
    assert!(def.background);
    assert_eq!(def.tools.unwrap().len(), 4);
}

#[test]
fn mixed_case_names_are_kept_as_written() {
    let (def, _) = fixture("Mixed-Case-Name.md").unwrap();
    assert_eq!(def.name, "Code-Reviewer");
}

#[test]
fn every_field_in_one_strict_file() {
    let (def, warnings) = fixture("everything.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(def.tools, None);
    assert_eq!(
        tool_strings(&def.disallowed_tools),
        ["Bash(git push *)", "WebFetch"]
    );
    assert_eq!(def.model, Some(ModelSetting::Named("haiku".into())));
    assert_eq!(def.permission_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(def.max_turns, Some(15));
    assert_eq!(def.skills, ["changelog", "semver"]);
    assert_eq!(def.mcp_servers[0], json!("github"));
    assert_eq!(def.mcp_servers[1]["jira"]["args"], json!(["--read-only"]));
    assert_eq!(
        def.hooks.as_ref().unwrap()["Stop"][0]["hooks"][0]["command"],
        json!("./scripts/notify.sh")
    );
    assert_eq!(def.memory, Some(MemoryScope::Local));
    assert!(def.background);
    assert_eq!(def.effort, Some(Effort::Tokens(4096)));
    assert_eq!(def.isolation, Some(Isolation::Worktree));
    assert_eq!(def.color.as_deref(), Some("green"));
    assert_eq!(def.initial_prompt.as_deref(), Some("/release-notes"));
}

#[test]
fn loose_file_keeps_lists_and_nested_tables() {
    let (def, warnings) = fixture("loose-everything.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(def.description.ends_with("or: \"we have an outage\"."));
    assert_eq!(
        tool_strings(&def.tools.unwrap()),
        ["Read", "Grep", "Bash(kubectl logs *)", "mcp__datadog__*"]
    );
    assert_eq!(def.skills, ["runbooks", "postmortem"]);
    assert_eq!(def.mcp_servers, [json!("datadog")]);
    assert_eq!(
        def.hooks.unwrap()["PreToolUse"][0]["matcher"],
        json!("Bash")
    );
    assert_eq!(def.effort, Some(Effort::Level("high".into())));
    assert_eq!(def.max_turns, Some(20));
}

#[test]
fn unquoted_star_means_every_tool() {
    let (def, warnings) = fixture("star-tools.md").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(def.tools, None);
    assert_eq!(def.model, Some(ModelSetting::Inherit));
}

#[test]
fn wrong_types_are_warnings_with_field_and_line() {
    let (def, warnings) = fixture("bad-types.md").unwrap();
    let got: Vec<(Option<usize>, &str)> = warnings
        .iter()
        .map(|w| (w.line, w.message.split(' ').next().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(4), "maxTurns"),
            (Some(5), "background"),
            (Some(6), "permissionMode"),
            (Some(7), "effort"),
            (Some(8), "memory"),
            (Some(9), "isolation"),
            (Some(10), "hooks"),
            (Some(11), "tools"),
        ]
    );
    assert!(warnings.iter().all(|w| w.message.ends_with("; ignored")));
    assert_eq!(def.max_turns, None);
    assert!(!def.background);
    assert_eq!(def.tools, None);
    assert_eq!(def.prompt, "Do what you are asked.");
}

#[test]
fn byte_order_mark_and_crlf_line_endings() {
    let text = "\u{feff}---\r\nname: win\r\ndescription: Saved on Windows\r\nmaxTurns: nope\r\n\
                ---\r\nLine one.\r\nLine two.\r\n";
    let (def, warnings) = parse_text(text).unwrap();
    assert_eq!(def.name, "win");
    assert_eq!(def.description, "Saved on Windows");
    assert_eq!(def.prompt, "Line one.\nLine two.");
    assert_eq!(lines_of(&warnings), [Some(4)]);
}

// ---- broken files -----------------------------------------------------------------------------

fn error(name: &str) -> ParseError {
    fixture(name).unwrap_err()
}

#[test]
fn broken_files_fail_at_the_right_line() {
    let e = error("no-frontmatter.md");
    assert_eq!(e.line, Some(1));
    assert!(e.message.starts_with("no frontmatter"));

    let e = error("unclosed.md");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("never closed"));

    let e = error("missing-name.md");
    assert_eq!(e.line, Some(1));
    assert!(e.message.starts_with("name is missing"));

    // The file starts with a blank line, so its frontmatter opens on line 2.
    let e = error("missing-description.md");
    assert_eq!(e.line, Some(2));
    assert!(e.message.starts_with("description is missing"));

    let e = error("empty-body.md");
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("prompt is empty"));
    assert_eq!(
        e.to_string(),
        "line 4: the prompt is empty; write the agent's system prompt below this closing `---`"
    );
}

#[test]
fn required_fields_with_wrong_types_or_empty_fail_the_file() {
    let e = parse_text("---\nname: a\ndescription: [x]\n---\nP").unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("description must be text"));
    let e = parse_text("---\nname: \"  \"\ndescription: d\n---\nP").unwrap_err();
    assert_eq!(e.line, Some(2));
    assert_eq!(e.message, "name is empty");
    let e = parse_text("---\nname:\ndescription: d\n---\nP").unwrap_err();
    assert_eq!(e.message, "name is empty");
    assert!(parse_text("").unwrap_err().message.contains("empty"));
}
