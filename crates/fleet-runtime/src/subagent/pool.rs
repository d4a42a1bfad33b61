//! A child's tools and permissions: what its definition asks for, cut down to what its
//! parent holds. A child can be given less than its parent, never more.

use super::{ParentView, Spawner};
use crate::definitions::{AgentDefinition, Restriction};
use crate::subagent::message::SendMessageTool;
use crate::subagent::tool::AgentTool;
use crate::tasks::{TaskOutputTool, TaskStopTool};
use fleet_tools::permissions::{PermissionMode, Permissions, RuleError, RuleKind};
use fleet_tools::{CommandPolicy, GuardedBash, Tool, ToolPool};
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl Spawner {
    /// Builds the pool for the agent `view` describes: base tools and the tree's tools that
    /// `keep` accepts, shaped by `restriction`. Records the names on the view, since they
    /// bound what the agent's own children may get.
    pub(crate) fn assemble(
        self: &Arc<Self>,
        view: &Arc<ParentView>,
        keep: impl Fn(&str) -> bool,
        restriction: Restriction,
    ) -> ToolPool {
        let mut tools: Vec<Arc<dyn Tool>> = self
            .config
            .children
            .base_tools
            .iter()
            .filter(|tool| keep(tool.name()))
            .cloned()
            .collect();
        if keep("Agent") {
            tools.push(Arc::new(AgentTool::new(self.clone(), view.clone())));
        }
        if keep("SendMessage") {
            tools.push(Arc::new(SendMessageTool::new(self.clone(), view.clone())));
        }
        if keep("TaskStop") {
            let mut stop = TaskStopTool::new(self.tasks.clone());
            if let Some(team) = &self.team {
                let team = Arc::downgrade(team);
                stop = stop.with_teammates(Arc::new(move |name: &str| {
                    team.upgrade()?.stop_member(name)
                }));
            }
            tools.push(Arc::new(stop));
        }
        if keep("TaskOutput") {
            tools.push(Arc::new(TaskOutputTool::new(self.tasks.clone())));
        }
        if let Some(team) = &self.team {
            tools.extend(team.clone().tools(&keep));
        }
        let scratch = view
            .scratch
            .clone()
            .unwrap_or_else(|| scratch_dir(&self.config.places.workspace.root));
        let pool = restrict(ToolPool::new(tools), restriction, scratch);
        let _ = view
            .tool_names
            .set(pool.names().into_iter().map(str::to_string).collect());
        pool
    }
}

/// Whether a child defined by `def` may have the tool `name`, given what its parent may grant.
pub(crate) fn child_keeps(parent: &ParentView, def: &AgentDefinition, name: &str) -> bool {
    if !parent.grantable().iter().any(|held| held == name) {
        return false;
    }
    if let Some(wanted) = &def.tools {
        if !wanted.iter().any(|entry| entry.matches_name(name)) {
            return false;
        }
    }
    // An entry with a specifier (`Bash(rm *)`) is a deny rule, not a removal.
    !def.disallowed_tools
        .iter()
        .any(|entry| entry.specifier.is_none() && entry.matches_name(name))
}

/// Applies a built-in's restriction to its pool: Bash is swapped for a guarded Bash that
/// refuses what the restriction forbids before any process starts.
fn restrict(pool: ToolPool, restriction: Restriction, scratch: PathBuf) -> ToolPool {
    let policy = match restriction {
        Restriction::None => return pool,
        Restriction::ReadOnly => CommandPolicy::ReadOnly,
        Restriction::TempWritesOnly => CommandPolicy::WritesOnlyUnder(vec![scratch]),
    };
    let tools = pool
        .iter()
        .filter(|tool| match restriction {
            Restriction::ReadOnly => {
                tool.name() == "Bash" || (tool.is_read_only() && tool.name() != "Agent")
            }
            _ => !matches!(tool.name(), "Edit" | "Write" | "Agent"),
        })
        .map(|tool| -> Arc<dyn Tool> {
            if tool.name() == "Bash" {
                Arc::new(GuardedBash::new(tool.clone(), policy.clone()))
            } else {
                tool.clone()
            }
        })
        .collect();
    ToolPool::new(tools)
}

/// Where an agent restricted to scratch writes may write: the system temp dir — unless the
/// project itself lives there (a checkout in /tmp), in which case a `fleet-scratch` folder in
/// it, so that the project stays out of reach.
pub(crate) fn scratch_dir(project: &Path) -> PathBuf {
    let temp = canonical_temp_dir();
    if !project.starts_with(temp) {
        return temp.clone();
    }
    let scratch = temp.join("fleet-scratch");
    // If it cannot be made, commands writing there fail on their own, with the OS's reason.
    let _ = std::fs::create_dir(&scratch);
    scratch
}

/// The system temp dir, resolved once: every child asks, and resolving it walks each of its
/// components again (a fan-out of thousands paid that many `readlink`s).
fn canonical_temp_dir() -> &'static PathBuf {
    static TEMP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TEMP.get_or_init(|| {
        let temp = std::env::temp_dir();
        temp.canonicalize().unwrap_or(temp)
    })
}

/// The pool shape, for sharing tool definitions between children of one agent type (a
/// definition's scoped tools describe their scope, so the type is part of the shape).
pub(crate) fn shape(pool: &ToolPool, def: &AgentDefinition) -> String {
    format!(
        "{}|{:?}|{}",
        def.name,
        def.restriction,
        pool.names().join(",")
    )
}

/// The child's permissions: the parent's rules (its deny rules bind the child), the
/// definition's `disallowedTools` specifiers as more deny rules, and the narrower of the two
/// modes.
pub(crate) fn child_permissions(
    parent: &Permissions,
    def: &AgentDefinition,
) -> Result<Permissions, RuleError> {
    let mut permissions = parent.clone();
    if let Some(wanted) = def.permission_mode {
        permissions.set_own_mode(narrower(parent.mode(), wanted));
    }
    if def.restriction == Restriction::ReadOnly {
        permissions.set_own_mode(PermissionMode::Plan);
    }
    let source = format!("agent definition {}", def.name);
    let base = parent.workspace.root.clone();
    for entry in def
        .disallowed_tools
        .iter()
        .filter(|e| e.specifier.is_some())
    {
        permissions.rules.add(
            RuleKind::Deny,
            &entry.to_rule_string(),
            base.clone(),
            &source,
        )?;
    }
    Ok(permissions)
}

/// The less permissive of two modes: a child asking for more than its parent has gets the
/// parent's mode.
pub(crate) fn narrower(parent: PermissionMode, wanted: PermissionMode) -> PermissionMode {
    parent.narrower(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_never_gets_a_wider_mode_than_its_parent() {
        use PermissionMode::*;
        assert_eq!(narrower(Plan, BypassPermissions), Plan);
        assert_eq!(narrower(Default, AcceptEdits), Default);
        assert_eq!(narrower(BypassPermissions, Plan), Plan);
        assert_eq!(narrower(AcceptEdits, Default), Default);
    }
}
