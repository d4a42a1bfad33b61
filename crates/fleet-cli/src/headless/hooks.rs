//! The session's hooks: every settings file's `hooks`, merged in the order the files are read.
//! A malformed entry stops the run with an error naming the file; an event or hook type
//! fleet does not run is a warning on stderr.

pub use crate::control::host::SdkHooks;
use crate::settings::{repo_root, Settings};
use fleet_runtime::hooks::{HookSet, Hooks};
use fleet_store::{FleetHome, SessionStore};
use std::path::Path;
use std::sync::Arc;

/// `None` when no settings file configures a hook and the SDK host registered none. The
/// host's callbacks run after the files' hooks, through its runner (which runs commands too).
pub fn session_hooks(
    settings: &Settings,
    cwd: &Path,
    session_id: &str,
    host: Option<&SdkHooks>,
) -> anyhow::Result<Option<Arc<Hooks>>> {
    let mut set = HookSet::default();
    for (value, file) in &settings.hooks {
        let (hooks, warnings) = HookSet::parse(value, &file.display().to_string())?;
        for warning in warnings {
            eprintln!("fleet: {}", crate::visible::visible(&warning));
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
    let project = repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let mut hooks = Hooks::new(set)
        .with_transcript_path(transcript)
        .with_project_dir(Some(project));
    if let Some(host) = host {
        hooks = hooks.with_runner(host.runner.clone());
    }
    Ok(Some(Arc::new(hooks)))
}
