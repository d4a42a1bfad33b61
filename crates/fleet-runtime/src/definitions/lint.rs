//! Advice on an agent file that loads but is probably not what its author meant, for `fleet
//! agents validate`: a `name` with spaces or punctuation (`name: Bad Name`), and `tools` /
//! `disallowedTools` entries naming a tool fleet does not have (`Frobnicate`, `read`).
//!
//! These are warnings, not errors: the agent still loads (a name is any text the model can
//! type back; an unknown tool is simply never granted). They are not said at every load,
//! because files shared with Claude Code often list its tools fleet lacks (`WebFetch`), and a
//! session would repeat that on every run; `validate` is where they are looked for.

use super::frontmatter::{read_fields, split, RawField};
use super::values::{parse_tool, text, tool_tokens};
use super::LoadWarning;
use std::path::Path;

/// Tools Claude Code has and fleet does not: an agent file written for Claude Code may list
/// them, and the warning says so rather than suggesting a typo.
const CLAUDE_CODE_ONLY: &[&str] = &[
    "AskUserQuestion",
    "BashOutput",
    "EnterPlanMode",
    "KillBash",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "SlashCommand",
    "TodoRead",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Every tool name an agent's `tools` can grant in fleet: the built-in tools, delegation,
/// teams, skills, plan approval and MCP resources (`Task` is also accepted, as `Agent`'s old
/// name). MCP servers' own tools are `mcp__server__tool` and are not listed.
pub fn known_tool_names() -> Vec<String> {
    let mut names: Vec<String> = fleet_tools::ToolPool::builtin()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    let more = crate::subagent::ORCHESTRATION_TOOLS
        .iter()
        .chain(crate::teams::TEAM_TOOLS.iter())
        .chain([
            &"ExitPlanMode",
            &crate::skills::SKILL_TOOL,
            &crate::mcp::LIST_MCP_RESOURCES_TOOL,
            &crate::mcp::READ_MCP_RESOURCE_TOOL,
        ]);
    names.extend(more.map(|name| name.to_string()));
    names
}

/// The advice for one agent file's text (read from `path`, which names it in each warning):
/// empty for a file that is fine, or that does not parse (its errors are said elsewhere).
pub fn lint_agent_file(text_of_file: &str, path: &Path) -> Vec<LoadWarning> {
    let Ok(split) = split(text_of_file) else {
        return Vec::new();
    };
    let fields = read_fields(&split.lines);
    let known = known_tool_names();
    let mut warnings = Vec::new();
    let mut warn = |line: Option<usize>, message: String| {
        warnings.push(LoadWarning {
            path: Some(path.to_path_buf()),
            line,
            message,
        });
    };
    // The first of a repeated field is the one that counts (see `fields::build`).
    let first = |key: &str| fields.iter().find(|f| f.key == key);
    if let Some(field) = first("name") {
        if let Some(message) = text(&field.value).and_then(|name| name_advice(name.trim())) {
            warn(field.line, message);
        }
    }
    for key in ["tools", "disallowedTools"] {
        let Some(field) = first(key) else {
            continue;
        };
        let Some(tokens) = tool_tokens(&field.value) else {
            continue;
        };
        for token in tokens {
            // An entry that cannot be read is already a warning of the loader's.
            let Ok(entry) = parse_tool(&token) else {
                continue;
            };
            if let Some(message) = tool_advice(&entry.name, &known) {
                warn(
                    item_line(field, &fields, &split.lines, &entry.name),
                    message,
                );
            }
        }
    }
    warnings
}

/// Why `name` would be better written otherwise, if it would. fleet takes any case
/// (`Code-Reviewer`; a lookup falls back to a case-insensitive match), so only characters
/// other than letters, digits and hyphens are advised against: the model has to type the
/// name back exactly, and Claude Code's rule is lowercase letters and hyphens.
fn name_advice(name: &str) -> Option<String> {
    let odd: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        .collect();
    if odd.is_empty() {
        return None;
    }
    let what = if odd.iter().all(|c| c.is_whitespace()) {
        "spaces".to_string()
    } else {
        let mut shown: Vec<String> = odd.iter().map(|c| format!("{c:?}")).collect();
        shown.dedup();
        format!("the characters {}", shown.join(" "))
    };
    Some(format!(
        "name {name:?} has {what}, which the model must type back exactly; use lowercase \
         letters, digits and hyphens, e.g. `name: {}`",
        suggested_name(name)
    ))
}

/// `Bad Name` → `bad-name`.
fn suggested_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        "my-agent".to_string()
    } else {
        out.to_string()
    }
}

/// Why the entry naming `tool` grants nothing, if it does not: not a tool fleet has. Patterns
/// (`mcp__github__*`, `*`) and MCP tools (`mcp__server__tool`, whose servers are not known
/// here) are taken as written.
fn tool_advice(tool: &str, known: &[String]) -> Option<String> {
    if tool.contains('*') || tool.starts_with("mcp__") || tool == "Task" {
        return None;
    }
    if known.iter().any(|k| k == tool) {
        return None;
    }
    let list = known.join(", ");
    if let Some(meant) = known.iter().find(|k| k.eq_ignore_ascii_case(tool)) {
        return Some(format!(
            "unknown tool {tool:?} (did you mean {meant}? tool names are case-sensitive; \
             known: {list})"
        ));
    }
    if CLAUDE_CODE_ONLY.contains(&tool) {
        return Some(format!(
            "unknown tool {tool:?} (Claude Code has it, fleet does not, so the agent goes \
             without it; known: {list})"
        ));
    }
    Some(format!("unknown tool {tool:?} (known: {list})"))
}

/// The line of `field`'s block that names `tool` (a YAML list has one entry a line), else the
/// field's own line.
fn item_line(
    field: &RawField,
    fields: &[RawField],
    lines: &[(usize, &str)],
    tool: &str,
) -> Option<usize> {
    let start = field.line?;
    let end = fields
        .iter()
        .filter_map(|f| f.line)
        .filter(|l| *l > start)
        .min()
        .unwrap_or(usize::MAX);
    lines
        .iter()
        .filter(|(no, _)| (start..end).contains(no))
        .find(|(_, line)| names(line, tool))
        .map(|(no, _)| *no)
        .or(Some(start))
}

/// Whether `line` holds `tool` as a whole word (`Read` is not in `ReadMcpResourceTool`).
fn names(line: &str, tool: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(tool).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + tool.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lint(text: &str) -> Vec<String> {
        lint_agent_file(text, Path::new("a.md"))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_name_with_a_space_and_an_unknown_tool_are_each_one_warning_on_their_line() {
        let got = lint(
            "---\nname: Bad Name\ndescription: d\ntools: Read, Frobnicate, Bash(git *), \
             Agent(Explore), mcp__db__query, mcp__gh__*\n---\nprompt\n",
        );
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].starts_with("a.md:2: name \"Bad Name\" has spaces"),
            "{}",
            got[0]
        );
        assert!(got[0].contains("use lowercase letters, digits and hyphens, e.g. `name: bad-name`"));
        assert!(
            got[1].starts_with("a.md:4: unknown tool \"Frobnicate\" (known: Bash, "),
            "{}",
            got[1]
        );
        assert!(
            got[1].contains("Agent") && got[1].contains("Skill"),
            "{}",
            got[1]
        );
    }

    #[test]
    fn a_list_entry_is_pointed_at_on_its_own_line() {
        let got = lint("---\nname: ok\ndescription: d\ntools:\n  - ReadMcpResourceTool\n  - Grpe\n  - read\ndisallowedTools: [WebFetch]\n---\np\n");
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(
            got[0].starts_with("a.md:6: unknown tool \"Grpe\""),
            "{}",
            got[0]
        );
        assert!(
            got[1].starts_with("a.md:7: unknown tool \"read\" (did you mean Read?"),
            "{}",
            got[1]
        );
        assert!(
            got[2].starts_with("a.md:8: unknown tool \"WebFetch\" (Claude Code has it"),
            "{}",
            got[2]
        );
    }

    #[test]
    fn names_fleet_documents_are_fine() {
        assert!(lint("---\nname: Code-Reviewer\ndescription: d\ntools: Task, TeamCreate, ExitPlanMode, *\n---\np\n").is_empty());
        assert!(lint("---\nname: code-reviewer-2\ndescription: d\n---\np\n").is_empty());
        assert_eq!(suggested_name("  My_Agent.v2 "), "my-agent-v2");
        assert_eq!(suggested_name("§"), "my-agent");
        let odd = name_advice("a_b.c").unwrap();
        assert!(odd.contains("the characters '_' '.'"), "{odd}");
    }

    #[test]
    fn a_file_that_does_not_parse_gets_no_advice() {
        assert!(lint("no frontmatter").is_empty());
    }
}
