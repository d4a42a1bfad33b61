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
//! Which files the gate looks at is decided by their [`Layer`](super::Layer) in the stack —
//! the one answer to "where did this come from" (see [`super::load`]).

pub mod widening;

use fleet_runtime::locations::Locations;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How much of a value one summary line shows.
const SUMMARY_CHARS: usize = 200;

/// One thing the repository asks for. Its serialised form is what the trust hash is taken
/// over: adding a field changes every recorded hash, so think twice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// Where it is written, relative to the repository.
    pub file: String,
    /// What it is: `hooks`, `permissions.allow`, `MCP server "db"`…
    pub what: String,
    pub value: Value,
}

impl Item {
    /// One line for the user: what, where, and the gist of the value.
    pub fn summary(&self) -> String {
        let gist = match &self.value {
            Value::Object(map) if self.what == "hooks" => {
                map.keys().cloned().collect::<Vec<_>>().join(", ")
            }
            Value::String(text) => text.clone(),
            Value::Array(list) => list
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        // Long values are cut visibly, never silently: the person decides on what is shown.
        let total = gist.chars().count();
        let gist = if total > SUMMARY_CHARS {
            let kept: String = gist.chars().take(SUMMARY_CHARS).collect();
            format!("{kept}… ({} more characters)", total - SUMMARY_CHARS)
        } else {
            gist
        };
        format!("{} ({}) in {}", self.what, gist, self.file)
    }
}

/// How a repository stands with the user, for one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustReport {
    /// The repository (canonical), when the session is in one.
    pub root: Option<PathBuf>,
    /// What it asks for that needs trust (empty: nothing to decide).
    pub items: Vec<Item>,
    /// The hash of `items`, as recorded when trusted.
    pub hash: String,
    /// Whether `items` apply.
    pub trusted: bool,
    /// Local settings files git tracks (so they are the repository's).
    pub tracked_local: Vec<PathBuf>,
    /// User-only keys found in other files and ignored.
    pub user_only_ignored: Vec<String>,
    /// fleet's user settings file, named in the warning about user-only keys.
    pub user_settings: Option<PathBuf>,
}

impl TrustReport {
    /// The one warning line `-p` prints, if anything was held back or ignored.
    pub fn warning(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.trusted && !self.items.is_empty() {
            let root = self
                .root
                .as_deref()
                .map_or_else(|| ".".to_string(), |r| r.display().to_string());
            let list: Vec<String> = self.items.iter().map(Item::summary).collect();
            parts.push(format!(
                "this repository is not trusted, so fleet ignores what it asks for: {}; to \
                 trust it, run `fleet trust {root}` (or pass --trust-project for one run)",
                list.join("; ")
            ));
        }
        if !self.tracked_local.is_empty() {
            let files: Vec<String> = self
                .tracked_local
                .iter()
                .map(|f| f.display().to_string())
                .collect();
            parts.push(format!(
                "{} is tracked by git, so it is the repository's, not yours: it approves \
                 nothing and loosens nothing without trust",
                files.join(", ")
            ));
        }
        if !self.user_only_ignored.is_empty() {
            let hint = self.user_settings.as_deref().map_or_else(
                || "~/.fleet/settings.json".to_string(),
                |file| file.display().to_string(),
            );
            parts.push(format!(
                "{} count only in your user settings ({hint}), not in a project's",
                self.user_only_ignored.join(", "),
            ));
        }
        (!parts.is_empty()).then(|| parts.join(". "))
    }
}

/// The hash recorded with a trust decision: of every item, in order.
pub fn hash(items: &[Item]) -> String {
    fleet_runtime::tracked::approval_hash(&serde_json::to_string(items).unwrap_or_default())
}

/// The repository a session in `cwd` belongs to: the git root, else `cwd` (canonical).
pub fn repository_of(cwd: &Path) -> PathBuf {
    fleet_runtime::tracked::repository_root(cwd)
}

/// Allow rules the user gave through fleet for the repository at `root` ("always allow" in
/// the terminal UI, `/permissions`), kept in the user's store.
pub fn stored_allow_rules(at: &Locations, root: &Path) -> Vec<String> {
    at.trust_store()
        .and_then(|store| store.project(root).ok())
        .map(|p| p.allow)
        .unwrap_or_default()
}

/// How rules from the user's store are named in permission messages.
pub fn store_label(at: &Locations, root: &Path) -> PathBuf {
    let store = at
        .trust_store()
        .map(|s| s.path().display().to_string())
        .unwrap_or_else(|| "trust.json".into());
    PathBuf::from(format!("{store} (your approvals for {})", root.display()))
}

/// Whether the user's store trusts `root` as it asks for `hash` now.
pub fn stored_trust(at: &Locations, root: &Path, hash: &str) -> bool {
    at.trust_store()
        .and_then(|store| store.project(root).ok())
        .and_then(|p| p.trusted)
        .is_some_and(|record| record.hash == hash)
}

/// What the repository's `.mcp.json`, skills and agent files ask for beyond its settings:
/// project servers the user has not approved one by one, project skills whose tools are not
/// granted, agent files with hooks or a wider mode. Every list is read from `at`'s folders.
pub fn repository_items(at: &Locations, root: &Path) -> Vec<Item> {
    let rel = |path: &Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let mut items = Vec::new();
    let mcp = fleet_runtime::mcp::config::McpConfig::load(at, Vec::new(), false);
    for server in &mcp.unapproved {
        items.push(Item {
            file: server.source.to_string(),
            what: format!("MCP server {:?}", server.name),
            value: Value::String(format!("{:?}", server.transport)),
        });
    }
    let sources = at.agent_sources(None);
    let skills = fleet_runtime::skills::SkillSet::load(&sources);
    for skill in skills.skills() {
        if skills.grants(skill).is_err() {
            items.push(Item {
                file: rel(&skill.dir.join("SKILL.md")),
                what: format!("skill {:?} allowed-tools", skill.name),
                value: Value::from(skill.allowed_tools.clone()),
            });
        }
    }
    if let Ok(catalog) = fleet_runtime::definitions::AgentCatalog::load(&sources) {
        for (agent, file, what, value) in catalog.project_widening() {
            items.push(Item {
                file: rel(&file),
                what: format!("agent {agent:?} {what}"),
                value,
            });
        }
    }
    items
}
