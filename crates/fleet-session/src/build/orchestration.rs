//! How the run's agents delegate — plainly, by forking, or under a coordinator — and, for a
//! coordinator, the scratchpad its workers share.

use crate::error::{Result, SessionError};
use fleet_protocol::env;
use fleet_runtime::subagent::Orchestration;
use fleet_store::FleetHome;
use fleet_tools::permissions::folder_rule;
use std::path::{Path, PathBuf};

/// `--coordinator` or `FLEET_COORDINATOR_MODE` wins (forking is always off under a
/// coordinator); then `FLEET_FORK_SUBAGENT`, which overrides the `forkSubagent` setting.
pub fn choose(coordinator: bool, fork_setting: Option<bool>) -> Result<Orchestration> {
    if coordinator || env::FLEET_COORDINATOR_MODE.is_on()? {
        return Ok(Orchestration::Coordinator);
    }
    let fork = match env::FLEET_FORK_SUBAGENT.get()? {
        Some(on) => on,
        None => fork_setting.unwrap_or(false),
    };
    Ok(if fork {
        Orchestration::Fork
    } else {
        Orchestration::Plain
    })
}

/// The coordinator's scratchpad folder. One in the temp dir (the session is not kept) is
/// removed when this is dropped, at the end of the run.
#[derive(Debug)]
pub struct Scratchpad {
    pub path: PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

/// The scratchpad: in the session's folder when the session is kept, else a fresh folder in
/// the temp dir. Created now, so workers can use it from their first call.
pub fn scratchpad(cwd: &Path, session_id: &str, persist: bool) -> Result<Scratchpad> {
    let Some(home) = FleetHome::from_env().ok().filter(|_| persist) else {
        let dir = tempfile::Builder::new()
            .prefix("fleet-scratchpad-")
            .tempdir()
            .map_err(|e| SessionError::step("creating the scratchpad in the temp dir", e))?;
        let path = dir
            .path()
            .canonicalize()
            .unwrap_or(dir.path().to_path_buf());
        return Ok(Scratchpad {
            path,
            _temporary: Some(dir),
        });
    };
    let dir = home.project_dir(cwd).join(session_id).join("scratchpad");
    std::fs::create_dir_all(&dir)
        .map_err(|e| SessionError::step(format!("creating the scratchpad {}", dir.display()), e))?;
    Ok(Scratchpad {
        path: dir.canonicalize().unwrap_or(dir),
        _temporary: None,
    })
}

/// Rules letting every agent read and write in `dir` without being asked. The path is
/// escaped, so a `FLEET_HOME` holding `*`, `[` or `)` names only the scratchpad.
pub fn scratchpad_rules(dir: &Path) -> Vec<String> {
    ["Read", "Edit", "Write"]
        .iter()
        .map(|tool| folder_rule(tool, dir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratchpad_rules_escape_pattern_characters() {
        let rules = scratchpad_rules(Path::new("/tmp/x*y[1]/pad"));
        assert_eq!(rules[0], "Read(//tmp/x\\*y\\[1\\]/pad/**)");
    }

    #[test]
    fn scratchpad_rules_are_absolute() {
        let rules = scratchpad_rules(Path::new("/tmp/fleet-scratchpad-x"));
        assert_eq!(
            rules,
            [
                "Read(//tmp/fleet-scratchpad-x/**)",
                "Edit(//tmp/fleet-scratchpad-x/**)",
                "Write(//tmp/fleet-scratchpad-x/**)"
            ]
        );
    }
}
