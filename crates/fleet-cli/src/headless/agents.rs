//! Loading the session's agent definitions; warnings about files that could not be used go
//! to stderr, and the run goes on without them.

use crate::settings::repo_root;
use anyhow::Context;
use fleet_runtime::definitions::{AgentCatalog, AgentSources};
use fleet_store::FleetHome;
use std::path::{Path, PathBuf};

pub fn load(cwd: &Path, command_line: Option<String>) -> anyhow::Result<AgentCatalog> {
    let sources = AgentSources {
        cwd: cwd.to_path_buf(),
        repo_root: repo_root(cwd),
        fleet_home: FleetHome::from_env().ok().map(|h| h.root().to_path_buf()),
        user_home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from),
        command_line,
    };
    let catalog = AgentCatalog::load(&sources).context("--agents")?;
    for warning in catalog.warnings() {
        eprintln!(
            "fleet: warning: {}",
            crate::visible::visible(&warning.to_string())
        );
    }
    Ok(catalog)
}
