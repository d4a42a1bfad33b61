//! The session's hooks: every settings file's `hooks`, merged in the order the files are read,
//! then the ones an Agent SDK host registered. A malformed entry stops the build with an error
//! naming the file; an event or hook type fleet does not run is a line for the person.

use crate::error::Result;
use crate::report::Report;
use fleet_runtime::hooks::{HookRunner, HookSet, Hooks};
use fleet_store::{FleetHome, SessionStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Hooks an SDK host registered in `initialize`, and the runner that calls back into it.
#[derive(Clone)]
pub struct HostHooks {
    pub set: HookSet,
    pub runner: Arc<dyn HookRunner>,
}

/// `None` when no settings file configures a hook and the host registered none. The host's
/// callbacks run after the files' hooks, through its runner (which runs commands too).
pub(crate) fn session_hooks(
    files: &[(serde_json::Value, PathBuf)],
    project: PathBuf,
    cwd: &Path,
    session_id: &str,
    host: Option<&HostHooks>,
    report: &dyn Report,
) -> Result<Option<Arc<Hooks>>> {
    let mut set = HookSet::default();
    for (value, file) in files {
        let (hooks, warnings) = HookSet::parse(value, &file.display().to_string())?;
        for warning in warnings {
            report.line("", &warning);
        }
        set.extend(hooks);
    }
    if let Some(host) = host {
        set.extend(host.set.clone());
    }
    if set.is_empty() {
        return Ok(None);
    }
    // Named in every hook's input; the file appears with the session's first message.
    let transcript = FleetHome::from_env()
        .ok()
        .and_then(|home| SessionStore::new(home).session_path(cwd, session_id).ok());
    let mut hooks = Hooks::new(set)
        .with_transcript_path(transcript)
        .with_project_dir(Some(project));
    if let Some(host) = host {
        hooks = hooks.with_runner(host.runner.clone());
    }
    Ok(Some(Arc::new(hooks)))
}
