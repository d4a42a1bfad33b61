//! Builds the main agent of a headless run from flags and settings: workspace, permissions,
//! tools and system prompt.

use crate::args::PrintArgs;
use crate::model_choice::Choice;
use crate::settings::{repo_root, Settings};
use anyhow::{bail, Context};
use fleet_runtime::system_prompt::DEFAULT_PROMPT;
use fleet_runtime::{Agent, AgentConfig, Environment, SystemPromptBuilder};
use fleet_tools::permissions::{split_rule_list, PermissionMode, Permissions, RuleKind, RuleSet};
use fleet_tools::{ToolContext, ToolPool, Workspace};
use std::path::Path;
use std::sync::Arc;

pub fn agent(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    choice: Choice,
    session_id: &str,
) -> anyhow::Result<Agent> {
    let workspace = Arc::new(workspace(args, cwd, settings)?);
    let permissions = Arc::new(permissions(args, cwd, settings, workspace.clone())?);
    let mut tools = ToolPool::builtin();
    // A bare tool name in --disallowedTools takes the tool away entirely, so the model is not
    // even offered it.
    let removed: Vec<String> = args
        .disallowed_tools
        .iter()
        .flat_map(|list| split_rule_list(list))
        .filter(|rule| !rule.contains('('))
        .collect();
    tools.retain(|tool| !removed.iter().any(|name| name == tool.name()));

    let prompt = args.system_prompt.clone().unwrap_or_else(|| DEFAULT_PROMPT.to_string());
    let mut system = SystemPromptBuilder::new(prompt).environment(Environment::detect(cwd));
    if let Some(append) = &args.append_system_prompt {
        system = system.append(append.clone());
    }

    let mut config = AgentConfig::new(choice.model, tools, permissions);
    config.system = system.build();
    config.max_turns = args.max_turns;
    if let Some(budget) = args.max_budget_usd {
        if !(budget > 0.0) {
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

/// The project (the repository root, else the cwd) plus every added folder.
fn workspace(args: &PrintArgs, cwd: &Path, settings: &Settings) -> anyhow::Result<Workspace> {
    let root = repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let mut workspace = Workspace::new(root);
    for dir in &args.add_dir {
        let full = cwd.join(dir);
        if !full.is_dir() {
            bail!("--add-dir {}: no such folder", dir.display());
        }
        workspace = workspace.with_dir(full);
    }
    for source in &settings.permissions {
        for dir in &source.settings.additional_directories {
            let full = source.base.join(expand_home(dir));
            if !full.is_dir() {
                bail!(
                    "{}: permissions.additionalDirectories names {dir:?}, which is not a folder",
                    source.file.display()
                );
            }
            workspace = workspace.with_dir(full);
        }
    }
    Ok(workspace)
}

fn expand_home(dir: &str) -> std::path::PathBuf {
    match (dir.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => dir.into(),
    }
}

fn permissions(
    args: &PrintArgs,
    cwd: &Path,
    settings: &Settings,
    workspace: Arc<Workspace>,
) -> anyhow::Result<Permissions> {
    let mut rules = RuleSet::default();
    let mut mode = None;
    for source in &settings.permissions {
        let file = source.file.display().to_string();
        let lists = [
            (RuleKind::Allow, &source.settings.allow),
            (RuleKind::Ask, &source.settings.ask),
            (RuleKind::Deny, &source.settings.deny),
        ];
        for (kind, list) in lists {
            for rule in list {
                rules.add(kind, rule, source.base.clone(), &file)?;
            }
        }
        if let Some(name) = &source.settings.default_mode {
            let parsed: PermissionMode = name
                .parse()
                .map_err(|e: String| anyhow::anyhow!("{file}: permissions.defaultMode: {e}"))?;
            mode = Some(parsed);
        }
    }
    for (kind, flag, lists) in [
        (RuleKind::Allow, "--allowedTools", &args.allowed_tools),
        (RuleKind::Deny, "--disallowedTools", &args.disallowed_tools),
    ] {
        for list in lists {
            for rule in split_rule_list(list) {
                rules
                    .add(kind, &rule, cwd.to_path_buf(), flag)
                    .with_context(|| format!("{flag} {list:?}"))?;
            }
        }
    }
    let mode = args.mode().or(mode).unwrap_or_default();
    Ok(Permissions::new(mode, rules, workspace))
}
