//! The trust gate: what a repository ships that runs code or widens rights counts only once
//! the user trusts that repository.
//!
//! A cloned repository brings `.claude/settings.json` (hooks, allow rules, a default mode, a
//! looser sandbox…), `.mcp.json` servers, skills with `allowed-tools` and agent files with
//! hooks. None of it was written by the user. Until they trust the repository:
//!
//! - `fleet -p` ignores those parts, with one warning line on stderr naming them and how to
//!   trust (`fleet trust`, or `--trust-project` for one run);
//! - the terminal UI asks once, listing them; the answer is remembered in the user's store
//!   (`$FLEET_HOME/trust.json`) with a hash of what was listed, so a change asks again.
//!
//! Tightening settings (deny rules, `sandbox.enabled: true`, …) always apply. A local
//! settings file (`.claude/settings.local.json`) is the user's own unless git tracks it: a
//! committed one is the repository's and goes through the gate like the shared file.
//!
//! The gate itself lives in `fleet_session::config::trust`, beside the settings stack it
//! filters; this module keeps the `fleet trust` command and the store edits of the UI.

pub mod cmd;

pub use fleet_session::config::trust::{repository_of, Item, TrustReport};

use fleet_store::trust::TrustStore;
use std::path::{Path, PathBuf};

/// Adds (or, with `remove`, takes out) allow rules of the repository at `root` in the user's
/// store.
pub fn store_allow_rules(root: &Path, rules: &[String], remove: bool) -> anyhow::Result<PathBuf> {
    let store = TrustStore::from_env()?;
    store.update(root, |p| {
        for rule in rules {
            if remove {
                p.allow.retain(|r| r != rule);
            } else if !p.allow.contains(rule) {
                p.allow.push(rule.clone());
            }
        }
    })?;
    Ok(store.path().to_path_buf())
}
