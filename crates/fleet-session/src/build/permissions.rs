//! The main agent's permissions and tool list: every settings file's rules and folders, then
//! the command line's; and which tools `--tools` / `--disallowedTools` leave it.

use super::orchestration;
use crate::error::{Result, SessionError};
use crate::options::SessionOptions;
use fleet_runtime::subagent::ORCHESTRATION_TOOLS;
use fleet_runtime::teams::TEAM_TOOLS;
use fleet_tools::permissions::{split_rule_list, CommandLinePermissions, Permissions, RuleKind};
use fleet_tools::{ToolPool, Workspace};
use std::path::Path;

/// The permissions of the run. The workspace is the project (the repository root, else the
/// cwd) plus every added folder, and the coordinator's scratchpad, which every agent may use
/// without being asked.
pub(super) fn permissions(
    options: &SessionOptions,
    scratchpad: Option<&Path>,
) -> Result<Permissions> {
    let cwd = &options.cwd;
    for dir in &options.add_dirs {
        if !cwd.join(dir).is_dir() {
            return Err(SessionError::invalid(format!(
                "--add-dir {}: no such folder",
                dir.display()
            )));
        }
    }
    let root = options.project();
    let mut cli = CommandLinePermissions {
        allowed_tools: options.allowed_tools.clone(),
        disallowed_tools: options.disallowed_tools.clone(),
        mode: options.permission_mode,
        add_dirs: options.add_dirs.clone(),
    };
    if let Some(dir) = scratchpad {
        cli.add_dirs.push(dir.to_path_buf());
    }
    let mut permissions = Permissions::from_sources(
        Workspace::new(&root),
        &options.permission_sources,
        &cli,
        cwd,
    )?;
    // Added as rules, not as flag text: a flag list is split on spaces and commas, which a
    // scratchpad path may hold.
    for rule in scratchpad
        .map(orchestration::scratchpad_rules)
        .unwrap_or_default()
    {
        permissions.rules.add(
            RuleKind::Allow,
            &rule,
            root.clone(),
            "the coordinator scratchpad",
        )?;
    }
    Ok(permissions)
}

/// Which tools the main agent gets: `--tools` picks (`default` = all), a bare name in
/// `--disallowedTools` removes. `Task` is the Agent tool's old name.
pub(super) fn tool_filter(
    tools: Option<&str>,
    disallowed: &[String],
) -> Result<impl Fn(&str) -> bool> {
    let canonical = |name: &str| {
        if name == "Task" {
            "Agent".to_string()
        } else {
            name.to_string()
        }
    };
    let mut known: Vec<String> = ToolPool::builtin()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    known.extend(ORCHESTRATION_TOOLS.iter().map(|t| t.to_string()));
    known.extend(TEAM_TOOLS.iter().map(|t| t.to_string()));
    known.push(fleet_runtime::skills::SKILL_TOOL.to_string());
    let wanted: Option<Vec<String>> = match tools {
        None => None,
        Some(list) => {
            let names: Vec<String> = list
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|name| !name.is_empty())
                .map(canonical)
                .collect();
            if names == ["default"] {
                None
            } else {
                if let Some(unknown) = names
                    .iter()
                    .find(|n| !known.contains(n) && !n.starts_with("mcp__"))
                {
                    return Err(SessionError::invalid(format!(
                        "--tools: no tool named {unknown:?}; the tools are {}",
                        known.join(", ")
                    )));
                }
                Some(names)
            }
        }
    };
    // A bare tool name in --disallowedTools takes the tool away entirely, so the model is not
    // even offered it.
    let removed: Vec<String> = disallowed
        .iter()
        .flat_map(|list| split_rule_list(list))
        .filter(|rule| !rule.contains('('))
        .map(|rule| canonical(&rule))
        .collect();
    Ok(move |name: &str| {
        wanted.as_ref().is_none_or(|w| w.iter().any(|n| n == name))
            && !removed.iter().any(|n| n == name)
    })
}
