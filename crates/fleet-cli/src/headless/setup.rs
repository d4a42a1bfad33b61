//! Builds the main agent of a headless run from flags and settings: workspace, permissions,
//! tools and system prompt.

use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::{repo_root, Settings};
use anyhow::bail;
use fleet_runtime::system_prompt::DEFAULT_PROMPT;
use fleet_runtime::{Agent, AgentConfig, Approver, Environment, SystemPromptBuilder};
use fleet_tools::permissions::{
    split_rule_list, CommandLinePermissions, Permissions, SettingsSource,
};
use fleet_tools::{ToolContext, ToolPool, Workspace};
use std::path::Path;
use std::sync::Arc;

pub fn agent(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    choice: Choice,
    session_id: &str,
    approver: Option<Arc<dyn Approver>>,
) -> anyhow::Result<Agent> {
    let permissions = permissions(args, cwd, settings)?;
    let workspace = permissions.workspace.clone();
    let permissions = Arc::new(permissions);
    let mut tools = ToolPool::builtin();
    if let Some(list) = &args.tools {
        let wanted: Vec<&str> = list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|name| !name.is_empty())
            .collect();
        if wanted != ["default"] {
            let known = tools.names().join(", ");
            if let Some(unknown) = wanted.iter().find(|name| tools.get(name).is_none()) {
                bail!("--tools: no tool named {unknown:?}; the built-in tools are {known}");
            }
            tools.retain(|tool| wanted.contains(&tool.name()));
        }
    }
    // A bare tool name in --disallowedTools takes the tool away entirely, so the model is not
    // even offered it.
    let removed: Vec<String> = args
        .disallowed_tools
        .iter()
        .flat_map(|list| split_rule_list(list))
        .filter(|rule| !rule.contains('('))
        .collect();
    tools.retain(|tool| !removed.iter().any(|name| name == tool.name()));

    let prompt = args
        .system_prompt
        .clone()
        .unwrap_or_else(|| DEFAULT_PROMPT.to_string());
    let mut system = SystemPromptBuilder::new(prompt).environment(Environment::detect(cwd));
    if let Some(append) = &args.append_system_prompt {
        system = system.append(append.clone());
    }

    let mut config = AgentConfig::new(choice.model, tools, permissions);
    config.system = system.build();
    config.max_turns = args.max_turns;
    config.approver = approver;
    if let Some(budget) = args.max_budget_usd {
        if budget.is_nan() || budget <= 0.0 {
            bail!("--max-budget-usd must be a positive number of dollars, got {budget}");
        }
        config.max_budget_usd = Some(budget);
    }
    if args.max_turns == Some(0) {
        bail!("--max-turns must be at least 1");
    }
    let ctx = ToolContext::new(cwd.to_path_buf(), workspace);
    Ok(Agent::new(
        choice.client,
        Arc::new(choice.catalog),
        config,
        ctx,
        session_id,
    ))
}

/// The permissions of the run: every settings file's rules and folders, then the command
/// line's. The workspace is the project (the repository root, else the cwd) plus every added
/// folder.
fn permissions(args: &PrintArgs, cwd: &Path, settings: &Settings) -> anyhow::Result<Permissions> {
    for dir in &args.add_dir {
        if !cwd.join(dir).is_dir() {
            bail!("--add-dir {}: no such folder", dir.display());
        }
    }
    let root = repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let sources: Vec<SettingsSource> = settings
        .permissions
        .iter()
        .map(|source| SettingsSource {
            settings: source.settings.clone(),
            base: source.base.clone(),
            name: source.file.display().to_string(),
        })
        .collect();
    let cli = CommandLinePermissions {
        allowed_tools: args.allowed_tools.clone(),
        disallowed_tools: args.disallowed_tools.clone(),
        mode: args.mode(),
        add_dirs: args.add_dir.clone(),
    };
    Ok(Permissions::from_sources(
        Workspace::new(root),
        &sources,
        &cli,
        cwd,
    )?)
}
