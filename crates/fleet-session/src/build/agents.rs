//! Loading the session's agent definitions and skills; files that could not be used are
//! reported and the session goes on without them.

use crate::error::{Result, SessionError};
use crate::report::Report;
use fleet_runtime::definitions::{AgentCatalog, AgentSources, LoadWarning};
use fleet_runtime::skills::{unknown_skill_warnings, SkillSet};
use fleet_store::FleetHome;
use std::path::{Path, PathBuf};

/// Where agent files and skills are looked for, for a session in `cwd` (in the repository
/// at `repo_root`).
pub fn sources(
    cwd: &Path,
    repo_root: Option<PathBuf>,
    command_line: Option<String>,
) -> AgentSources {
    AgentSources {
        cwd: cwd.to_path_buf(),
        repo_root,
        fleet_home: FleetHome::from_env().ok().map(|h| h.root().to_path_buf()),
        user_home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
        command_line,
    }
}

/// The agent definitions in effect; without the repository's trust, its agent files lose
/// their hooks and wider permission modes.
pub fn load(sources: &AgentSources, trusted: bool, report: &dyn Report) -> Result<AgentCatalog> {
    // Only `--agents` can fail the load (a bad agent file is a warning), and its errors name
    // the flag themselves.
    let mut catalog =
        AgentCatalog::load(sources).map_err(|e| SessionError::Invalid(e.to_string()))?;
    warn(catalog.warnings(), report);
    if !trusted {
        catalog.strip_project_widening();
    }
    Ok(catalog)
}

/// The skills of the project and the user; the lines name the skill files that could not be
/// loaded and the agent files preloading a skill that does not exist. A trusted repository's
/// skills grant their tools.
pub fn skills(
    sources: &AgentSources,
    agents: &AgentCatalog,
    trusted: bool,
    report: &dyn Report,
) -> SkillSet {
    let mut skills = SkillSet::load(sources);
    if trusted {
        let mut approval = skills.approval().clone();
        approval.all = true;
        skills = skills.with_approval(approval);
    }
    warn(skills.warnings(), report);
    warn(&unknown_skill_warnings(agents, &skills), report);
    skills
}

fn warn(warnings: &[LoadWarning], report: &dyn Report) {
    for warning in warnings {
        report.line("warning: ", &warning.to_string());
    }
}
