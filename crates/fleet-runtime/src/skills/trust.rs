//! Whose `allowed-tools` count: what a loaded skill may grant.
//!
//! A skill's `allowed-tools` become allow rules for the agent that loads it. A skill in the
//! user's own folders (`~/.claude/skills/`, `~/.fleet/skills/`) was put there by the user, so
//! its list counts as written. A project skill (`.claude/skills/`, `.fleet/skills/`) is text
//! whoever wrote the repository controls, and the model loads skills on its own judgement —
//! which a prompt injection in a file it read can steer. Honoured unasked, a cloned
//! repository's `allowed-tools: Bash` would let every command run without a prompt as soon as
//! the model was talked into loading that skill. So a project skill's list grants nothing
//! until the user approves it, in a place the repository's authors cannot write by committing
//! a file — the same places that approve a project's MCP servers:
//!
//! - the user's settings (`$FLEET_HOME/settings.json`, `~/.claude/settings.json`);
//! - the project's *local* settings (`.claude/settings.local.json`,
//!   `.fleet/settings.local.json`), which are the user's own and not shared — unless git
//!   tracks them (then they are the repository's and approve nothing);
//! - a trusted repository (`fleet trust`): its skills' tools are part of what was trusted.
//!
//! The keys (fleet's own; Claude Code has none for this):
//! - `enabledProjectSkillTools: [names]` lets those project skills grant their tools;
//! - `enableAllProjectSkillTools: true` lets every project skill grant its tools.
//!
//! Without approval a project skill still loads (its instructions are only text); the model is
//! told its tools were not granted, and its calls go through the permission check as before.
//! A granted rule never outranks a deny rule, plan mode or the sandbox (see `active.rs`).

use super::{Skill, SkillScope};
use crate::definitions::AgentSources;
use crate::locations::Locations;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The settings key naming project skills whose `allowed-tools` count.
pub const ENABLED_KEY: &str = "enabledProjectSkillTools";
/// The settings key letting every project skill's `allowed-tools` count.
pub const ALL_KEY: &str = "enableAllProjectSkillTools";

/// The user's approvals of project skills' tools, merged from every trusted file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillApproval {
    pub all: bool,
    pub enabled: BTreeSet<String>,
}

impl SkillApproval {
    /// Reads the trusted files for a session whose folders `sources` describes. Missing or
    /// unreadable files add nothing (the settings loader reports bad files itself).
    pub fn read(sources: &AgentSources) -> Self {
        let mut approval = Self::default();
        for file in trusted_files(sources) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if doc.get(ALL_KEY) == Some(&Value::Bool(true)) {
                approval.all = true;
            }
            if let Some(names) = doc.get(ENABLED_KEY).and_then(Value::as_array) {
                approval
                    .enabled
                    .extend(names.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
        approval
    }

    /// The allow rules loading `skill` grants, or why it grants none.
    pub fn grants(&self, skill: &Skill) -> Result<Vec<String>, NotGranted> {
        if skill.allowed_tools.is_empty() {
            return Ok(Vec::new());
        }
        match skill.scope {
            SkillScope::User => Ok(skill.allowed_tools.clone()),
            SkillScope::Project if self.all || self.enabled.contains(&skill.name) => {
                Ok(skill.allowed_tools.clone())
            }
            SkillScope::Project => Err(NotGranted {
                skill: skill.name.clone(),
            }),
        }
    }
}

/// Why a skill's `allowed-tools` were not granted: it is a project skill the user has not
/// approved. The text completes "they were not granted, because …".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "it is a project skill, and a repository's skills grant tools only once the user approves \
     them (`fleet trust` for the repository, or \"{}\": [{:?}] in the user settings)",
    ENABLED_KEY,
    .skill
)]
pub struct NotGranted {
    pub skill: String,
}

/// The files whose approvals count: the user's settings, then each project folder's local
/// settings — the same list that approves project MCP servers
/// ([`Locations::approval_files`]). Never the project's shared `settings.json`, which the
/// repository controls.
fn trusted_files(sources: &AgentSources) -> Vec<PathBuf> {
    Locations::of_agent_sources(sources).approval_files(&sources.project_dirs())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    fn skill(name: &str, scope: SkillScope) -> Skill {
        Skill {
            name: name.into(),
            description: "d".into(),
            allowed_tools: vec!["Bash".into()],
            model: None,
            body: "b".into(),
            dir: PathBuf::from("/s"),
            scope,
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn project_skills_grant_only_when_the_user_approved_them_in_a_trusted_file() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&repo).unwrap();
        let sources = AgentSources {
            cwd: repo.clone(),
            repo_root: Some(repo.clone()),
            fleet_home: Some(tmp.path().join("fleet-home")),
            user_home: Some(home.clone()),
            command_line: None,
        };
        // The repository approving its own skill in its shared settings counts for nothing.
        write(
            &repo.join(".claude/settings.json"),
            r#"{"enableAllProjectSkillTools": true, "enabledProjectSkillTools": ["x"]}"#,
        );
        let approval = SkillApproval::read(&sources);
        assert_eq!(approval, SkillApproval::default());
        assert_eq!(
            approval.grants(&skill("x", SkillScope::Project)),
            Err(NotGranted { skill: "x".into() })
        );
        assert_eq!(
            approval.grants(&skill("x", SkillScope::User)).unwrap(),
            ["Bash"]
        );
        write(
            &repo.join(".claude/settings.local.json"),
            r#"{"enabledProjectSkillTools": ["x"]}"#,
        );
        let approval = SkillApproval::read(&sources);
        assert_eq!(
            approval.grants(&skill("x", SkillScope::Project)).unwrap(),
            ["Bash"]
        );
        assert!(approval.grants(&skill("y", SkillScope::Project)).is_err());
        write(
            &home.join(".claude/settings.json"),
            r#"{"enableAllProjectSkillTools": true}"#,
        );
        let approval = SkillApproval::read(&sources);
        assert!(approval.grants(&skill("y", SkillScope::Project)).is_ok());
    }
}
