//! The built-in agents whose names promise a confinement, and what a repository may say about
//! agents before the user trusts it.
//!
//! `Explore` and `Plan` are read-only and `verification` writes only to scratch space: the
//! model (and the user) rely on that when they pick one. A repository that ships
//! `.claude/agents/Explore.md` would otherwise replace the read-only agent with one of its
//! own making, neither read-only nor sandboxed, under the same trusted name. So:
//!
//! - a **project** definition may not reuse these names (in any letter case): it is skipped
//!   with a warning and the built-in stays;
//! - a definition of the **user's** (their own folders, `--agents`) may replace the prompt and
//!   settings, but keeps the built-in's confinement whatever it says.
//!
//! Before the user trusts a repository, its agent files also lose what runs code or widens
//! rights: `hooks` and a `permissionMode` wider than `default` (see
//! [`project_widening`]); their inline MCP servers are held back by the MCP approval.

use super::{AgentDefinition, AgentSource, LoadWarning, Restriction};
use fleet_tools::permissions::PermissionMode;
use serde_json::{json, Value};

/// The confinement a built-in name carries, if it carries one.
pub fn confined_name(name: &str) -> Option<Restriction> {
    if name.eq_ignore_ascii_case("Explore") || name.eq_ignore_ascii_case("Plan") {
        Some(Restriction::ReadOnly)
    } else if name.eq_ignore_ascii_case("verification") {
        Some(Restriction::TempWritesOnly)
    } else {
        None
    }
}

/// Applies the rules above to loaded definitions (built-ins not yet added).
pub(crate) fn confine(
    defs: Vec<AgentDefinition>,
    warnings: &mut Vec<LoadWarning>,
) -> Vec<AgentDefinition> {
    defs.into_iter()
        .filter_map(|mut def| {
            let Some(restriction) = confined_name(&def.name) else {
                return Some(def);
            };
            if let AgentSource::Project(path) = &def.source {
                warnings.push(LoadWarning {
                    path: Some(path.clone()),
                    line: None,
                    message: format!(
                        "a project agent may not replace the built-in {:?} agent, which is \
                         confined ({}); this file is ignored and the built-in is used — rename \
                         the agent to use it",
                        def.name,
                        describe(restriction)
                    ),
                });
                return None;
            }
            def.restriction = restriction;
            Some(def)
        })
        .collect()
}

fn describe(restriction: Restriction) -> &'static str {
    match restriction {
        Restriction::ReadOnly => "read-only",
        Restriction::TempWritesOnly => "it writes only to scratch space",
        Restriction::None => "unconfined",
    }
}

/// What a project definition asks for that needs the user's trust: `(what, value)` pairs.
pub fn project_widening(def: &AgentDefinition) -> Vec<(String, Value)> {
    if !matches!(def.source, AgentSource::Project(_)) {
        return Vec::new();
    }
    let mut asked = Vec::new();
    if let Some(mode) = def.permission_mode.filter(|m| widens(*m)) {
        asked.push(("permissionMode".to_string(), json!(mode.as_str())));
    }
    if let Some(hooks) = def.hooks.as_ref().filter(|h| !is_empty(h)) {
        asked.push(("hooks".to_string(), hooks.clone()));
    }
    asked
}

/// The definition without what [`project_widening`] lists.
pub fn strip_project_widening(def: &mut AgentDefinition) {
    if !matches!(def.source, AgentSource::Project(_)) {
        return;
    }
    if def.permission_mode.is_some_and(widens) {
        def.permission_mode = None;
    }
    def.hooks = None;
}

fn widens(mode: PermissionMode) -> bool {
    matches!(
        mode,
        PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
    )
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(list) => list.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn def(name: &str, source: AgentSource) -> AgentDefinition {
        AgentDefinition::new(name, "d", "p", source)
    }

    #[test]
    fn a_project_cannot_replace_a_confined_built_in_and_a_user_file_keeps_the_confinement() {
        let mut warnings = Vec::new();
        let kept = confine(
            vec![
                def(
                    "explore",
                    AgentSource::Project(PathBuf::from("/r/.claude/agents/e.md")),
                ),
                def(
                    "Plan",
                    AgentSource::User(PathBuf::from("/h/.claude/agents/plan.md")),
                ),
                def("verification", AgentSource::CommandLine),
                def("helper", AgentSource::Project(PathBuf::from("/r/h.md"))),
            ],
            &mut warnings,
        );
        let names: Vec<_> = kept.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Plan", "verification", "helper"]);
        assert_eq!(kept[0].restriction, Restriction::ReadOnly);
        assert_eq!(kept[1].restriction, Restriction::TempWritesOnly);
        assert_eq!(kept[2].restriction, Restriction::None);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].message.contains("may not replace"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn project_hooks_and_wide_modes_need_trust_and_are_stripped_without_it() {
        let mut d = def("x", AgentSource::Project(PathBuf::from("/r/x.md")));
        d.permission_mode = Some(PermissionMode::BypassPermissions);
        d.hooks = Some(json!({"Stop": [{"hooks": [{"type": "command", "command": "id"}]}]}));
        let asked = project_widening(&d);
        assert_eq!(asked.len(), 2);
        strip_project_widening(&mut d);
        assert!(d.permission_mode.is_none() && d.hooks.is_none());
        let mut plan = def("y", AgentSource::Project(PathBuf::from("/r/y.md")));
        plan.permission_mode = Some(PermissionMode::Plan);
        assert!(project_widening(&plan).is_empty());
        let mut user = def("z", AgentSource::User(PathBuf::from("/h/z.md")));
        user.hooks = d.hooks.clone();
        assert!(project_widening(&user).is_empty());
    }
}
