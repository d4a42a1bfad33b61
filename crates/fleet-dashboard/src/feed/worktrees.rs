//! Worktrees from the store: the record the runtime keeps beside each agent's worktree
//! (`$FLEET_HOME/worktrees/<repo-slug>/agent-<id8>.json`). Only the fields shown are read; the
//! record names the agent, and the worktree goes to the session whose tree has that agent.

use serde::Deserialize;

use crate::api::Worktree;
use crate::hub::Inner;

#[derive(Deserialize)]
struct Record {
    #[serde(default)]
    kind: String,
    agent_id: String,
    path: String,
    #[serde(default)]
    branch: Option<String>,
}

/// `$FLEET_HOME/worktrees`.
pub(crate) fn root(inner: &Inner) -> std::path::PathBuf {
    inner.home.root().join("worktrees")
}

pub(crate) fn scan_all(inner: &Inner) {
    let Ok(repos) = super::store::list_dir(&root(inner)) else {
        return;
    };
    for repo in repos.iter().filter(|p| p.is_dir()) {
        for record in super::store::list_dir(repo).unwrap_or_default() {
            refresh(inner, &record);
        }
    }
}

/// A record appeared or changed.
pub(crate) fn refresh(inner: &Inner, path: &std::path::Path) {
    if path.extension().is_none_or(|e| e != "json") {
        return;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return;
    };
    let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
        return;
    };
    if record.kind == "snapshot" {
        return;
    }
    for shared in inner.all() {
        let owns = crate::hub::lock(&shared)
            .agents
            .find(&record.agent_id)
            .is_some();
        if owns {
            let worktree = Worktree {
                path: record.path.clone(),
                branch: record.branch.clone(),
                agent_id: Some(record.agent_id.clone()),
            };
            inner.edit(&shared, |m| m.add_worktree(worktree));
            return;
        }
    }
}
