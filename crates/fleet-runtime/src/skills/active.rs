//! What loading a skill changes for the agent that loaded it, until its run ends.
//!
//! When the model loads a skill through the [`super::SkillTool`], the call's structured output
//! names the allow rules the skill grants (`granted_tools`: its `allowed-tools`, when
//! `trust.rs` lets it grant them) and the model it runs on (`model`). Once the reply's calls
//! are answered, the agent loop hands those outputs to [`SkillEffects::apply`]:
//!
//! - each granted entry becomes an allow rule of this agent's permissions (same syntax as
//!   settings rules: `Bash(git diff:*)`, `Read`). Allow rules are weighed after deny rules,
//!   plan mode and the workspace boundary, so a grant never lifts any of those; the agent's
//!   sandbox is not touched, so a read-only agent's Bash stays read-only. The agent's
//!   children are built from the session's permissions, not these, so a grant is the loading
//!   agent's alone.
//! - the model (an alias such as `haiku`, or an id) is used for the agent's following
//!   requests; thinking is dropped if that model does not take it, and `max_tokens` is held
//!   to what it may write.
//!
//! [`SkillEffects::revert`] puts everything back when the run ends, so the next prompt of a
//! session starts as configured.

use crate::config::AgentConfig;
use crate::dispatch::{Call, Outcome};
use fleet_model::Catalog;
use fleet_protocol::{ContentBlock, ThinkingConfig};
use fleet_tools::permissions::{Permissions, RuleKind};
use serde_json::Value;
use std::sync::Arc;

/// The structured outputs of the calls in `calls` that loaded a skill (by the Skill tool,
/// without error).
pub(crate) fn loaded_skills(calls: &[Call], outcomes: &[Outcome]) -> Vec<Value> {
    outcomes
        .iter()
        .filter_map(|outcome| {
            let ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                ..
            } = &outcome.block
            else {
                return None;
            };
            let by_skill_tool = calls
                .iter()
                .any(|c| &c.id == tool_use_id && c.name == super::SKILL_TOOL);
            (by_skill_tool && *is_error != Some(true))
                .then(|| outcome.structured.as_deref().cloned())
                .flatten()
        })
        .collect()
}

/// What the agent was configured with before a skill changed it.
#[derive(Debug, Clone)]
struct Saved {
    model: String,
    max_tokens: u32,
    thinking: Option<ThinkingConfig>,
    permissions: Arc<Permissions>,
}

/// The skills loaded in the current run and what to restore when it ends.
#[derive(Debug, Default)]
pub(crate) struct SkillEffects {
    saved: Option<Saved>,
}

impl SkillEffects {
    /// Applies the skills loaded by one reply's calls (their structured outputs).
    pub fn apply(&mut self, loaded: &[Value], config: &mut AgentConfig, catalog: &Catalog) {
        for skill in loaded {
            let name = skill.get("skill").and_then(Value::as_str).unwrap_or("?");
            let grants: Vec<&str> = skill
                .get("granted_tools")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let model = skill.get("model").and_then(Value::as_str);
            if grants.is_empty() && model.is_none() {
                continue;
            }
            self.save(config);
            if !grants.is_empty() {
                grant(config, name, &grants);
            }
            if let Some(model) = model {
                switch_model(config, catalog, name, model);
            }
        }
    }

    /// Restores the agent's model and permissions as they were before any skill of this run.
    pub fn revert(&mut self, config: &mut AgentConfig) {
        if let Some(saved) = self.saved.take() {
            config.model.id = saved.model;
            config.model.max_tokens = saved.max_tokens;
            config.model.thinking = saved.thinking;
            config.tools.permissions = saved.permissions;
        }
    }

    fn save(&mut self, config: &AgentConfig) {
        self.saved.get_or_insert_with(|| Saved {
            model: config.model.id.clone(),
            max_tokens: config.model.max_tokens,
            thinking: config.model.thinking.clone(),
            permissions: config.tools.permissions.clone(),
        });
    }
}

/// Adds `grants` as allow rules of `config`'s permissions. An entry that is not a valid rule
/// is skipped with a warning: it grants nothing.
fn grant(config: &mut AgentConfig, skill: &str, grants: &[&str]) {
    let mut permissions = Permissions::clone(&config.tools.permissions);
    let base = permissions.workspace.root.clone();
    let source = format!("skill {skill}");
    for entry in grants {
        if let Err(err) = permissions
            .rules
            .add(RuleKind::Allow, entry, base.clone(), &source)
        {
            tracing::warn!("skill {skill}: allowed-tools entry {entry:?} grants nothing: {err}");
        }
    }
    config.tools.permissions = Arc::new(permissions);
}

/// Makes `model` (an alias or id) the model of the following requests. A Claude alias is
/// only resolved for an agent on a Claude model: on another provider it would name a model
/// that provider does not serve, so the agent keeps its own.
fn switch_model(config: &mut AgentConfig, catalog: &Catalog, skill: &str, model: &str) {
    let alias = matches!(
        model.to_ascii_lowercase().as_str(),
        "sonnet" | "opus" | "haiku"
    );
    if alias && !config.model.id.starts_with("claude") {
        tracing::warn!(
            "skill {skill}: model {model:?} is a Claude alias and this agent runs {}; kept",
            config.model.id
        );
        return;
    }
    let id = catalog.resolve_id(model);
    let info = catalog.info(&id);
    if !info.thinking {
        config.model.thinking = None;
    }
    let ceiling = u32::try_from(info.max_output_tokens).unwrap_or(u32::MAX);
    config.model.max_tokens = config.model.max_tokens.min(ceiling).max(1);
    config.model.id = id;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fleet_tools::permissions::{Behavior, PermissionMode, RuleSet};
    use fleet_tools::{Access, ToolPool, Workspace};
    use serde_json::json;

    fn config(mode: PermissionMode, deny: &[&str]) -> AgentConfig {
        let workspace = Arc::new(Workspace::new("/p"));
        let mut rules = RuleSet::default();
        for rule in deny {
            rules
                .add(RuleKind::Deny, rule, "/p".into(), "settings")
                .unwrap();
        }
        let permissions = Permissions::new(mode, rules, workspace);
        AgentConfig::new(
            "claude-sonnet-4-5",
            ToolPool::default(),
            Arc::new(permissions),
        )
    }

    fn bash(config: &AgentConfig, command: &str) -> Behavior {
        config
            .tools
            .permissions
            .check(
                "Bash",
                false,
                &Access::Command(command.into()),
                std::path::Path::new("/p"),
            )
            .behavior
    }

    #[test]
    fn grants_allow_until_the_run_ends_and_never_lift_a_deny_rule() {
        let mut config = config(PermissionMode::DontAsk, &["Bash(echo secret*)"]);
        let mut effects = SkillEffects::default();
        let loaded = [json!({"skill": "s", "granted_tools": ["Bash(echo:*)"], "model": null})];
        assert_eq!(bash(&config, "echo hi"), Behavior::Deny);
        effects.apply(&loaded, &mut config, &Catalog::builtin());
        assert_eq!(bash(&config, "echo hi"), Behavior::Allow);
        assert_eq!(bash(&config, "echo secret"), Behavior::Deny);
        assert_eq!(bash(&config, "rm x"), Behavior::Deny);
        effects.revert(&mut config);
        assert_eq!(bash(&config, "echo hi"), Behavior::Deny);
    }

    #[test]
    fn plan_mode_stays_read_only_whatever_a_skill_grants() {
        let mut config = config(PermissionMode::Plan, &[]);
        let mut effects = SkillEffects::default();
        let loaded = [json!({"skill": "s", "granted_tools": ["Bash"]})];
        effects.apply(&loaded, &mut config, &Catalog::builtin());
        assert_eq!(bash(&config, "touch x"), Behavior::Deny);
    }

    #[test]
    fn the_model_switches_for_the_run_and_comes_back() {
        let mut config = config(PermissionMode::Default, &[]);
        let mut effects = SkillEffects::default();
        let loaded = [json!({"skill": "s", "granted_tools": [], "model": "haiku"})];
        effects.apply(&loaded, &mut config, &Catalog::builtin());
        assert_eq!(config.model.id, Catalog::builtin().resolve_id("haiku"));
        assert_ne!(config.model.id, "claude-sonnet-4-5");
        effects.revert(&mut config);
        assert_eq!(config.model.id, "claude-sonnet-4-5");
    }

    #[test]
    fn a_claude_alias_is_ignored_on_another_provider() {
        let mut config = config(PermissionMode::Default, &[]);
        config.model.id = "llama3.1:8b".into();
        let mut effects = SkillEffects::default();
        let loaded = [json!({"skill": "s", "model": "haiku"})];
        effects.apply(&loaded, &mut config, &Catalog::builtin());
        assert_eq!(config.model.id, "llama3.1:8b");
    }
}
