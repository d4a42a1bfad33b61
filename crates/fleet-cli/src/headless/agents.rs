//! Loading the session's agent definitions; warnings about files that could not be used go
//! to stderr, and the run goes on without them.

use crate::settings::repo_root;
use anyhow::Context;
use fleet_runtime::definitions::{AgentCatalog, AgentSources, LoadWarning};
use fleet_runtime::skills::{unknown_skill_warnings, SkillSet};
use fleet_store::FleetHome;
use std::path::{Path, PathBuf};

/// Where agent files and skills are looked for, for a session in `cwd`.
pub(crate) fn sources(cwd: &Path, command_line: Option<String>) -> AgentSources {
    AgentSources {
        cwd: cwd.to_path_buf(),
        repo_root: repo_root(cwd),
        fleet_home: FleetHome::from_env().ok().map(|h| h.root().to_path_buf()),
        user_home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
        command_line,
    }
}

/// The agent definitions in effect; without the repository's trust, its agent files lose
/// their hooks and wider permission modes (see `crate::trust`).
pub fn load(
    cwd: &Path,
    command_line: Option<String>,
    trusted: bool,
) -> anyhow::Result<AgentCatalog> {
    let mut catalog = AgentCatalog::load(&sources(cwd, command_line)).context("--agents")?;
    warn(catalog.warnings());
    if !trusted {
        catalog.strip_project_widening();
    }
    Ok(catalog)
}

/// The skills of `cwd`'s project and the user; warnings name the skill files that could not
/// be loaded and the agent files preloading a skill that does not exist. A trusted
/// repository's skills grant their tools.
pub fn skills(cwd: &Path, agents: &AgentCatalog, trusted: bool) -> SkillSet {
    let mut skills = SkillSet::load(&sources(cwd, None));
    if trusted {
        let mut approval = skills.approval().clone();
        approval.all = true;
        skills = skills.with_approval(approval);
    }
    warn(skills.warnings());
    warn(&unknown_skill_warnings(agents, &skills));
    skills
}

fn warn(warnings: &[LoadWarning]) {
    for warning in warnings {
        eprintln!(
            "fleet: warning: {}",
            crate::visible::visible(&warning.to_string())
        );
    }
}
