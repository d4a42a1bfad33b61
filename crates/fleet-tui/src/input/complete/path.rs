//! The repository's files for `@` completion. Walking a big repository takes longer than a
//! keystroke may, so the walk runs once, on a thread, the first time `@` is typed; until it is
//! done the popup says "indexing…". The walk honours `.gitignore` (even outside a git
//! repository), skips hidden entries except `.claude`, and stops at [`MAX_PATHS`].

use super::fuzzy;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// More files than this are not indexed (the rest cannot be completed, but can be typed).
pub const MAX_PATHS: usize = 50_000;

#[derive(Debug, Default)]
pub struct FileIndex {
    cwd: PathBuf,
    paths: Arc<OnceLock<Vec<String>>>,
    started: bool,
}

impl FileIndex {
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            paths: Arc::new(OnceLock::new()),
            started: false,
        }
    }

    /// Starts the walk unless it has started already.
    pub fn ensure_started(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let cwd = self.cwd.clone();
        let paths = Arc::clone(&self.paths);
        let spawned = std::thread::Builder::new()
            .name("fleet-file-index".into())
            .spawn(move || {
                let _ = paths.set(walk(&cwd));
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "file index thread not started; indexing inline");
            let _ = self.paths.set(walk(&self.cwd));
        }
    }

    /// The paths once the walk is done.
    pub fn paths(&self) -> Option<&[String]> {
        self.paths.get().map(Vec::as_slice)
    }

    /// Up to `limit` paths matching `query`, best first (score, then shorter, then by name).
    pub fn matches(&self, query: &str, limit: usize) -> Option<Vec<String>> {
        let paths = self.paths()?;
        let mut scored: Vec<(i32, &String)> = paths
            .iter()
            .filter_map(|p| fuzzy::score(query, p).map(|s| (s, p)))
            .collect();
        let order = |a: &(i32, &String), b: &(i32, &String)| {
            b.0.cmp(&a.0)
                .then(a.1.len().cmp(&b.1.len()))
                .then(a.1.cmp(b.1))
        };
        if scored.len() > limit && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        scored.truncate(limit);
        Some(scored.into_iter().map(|(_, p)| p.clone()).collect())
    }
}

/// Files under `root`, relative, with `/` separators.
fn walk(root: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0 || !name.starts_with('.') || name == ".claude"
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                tracing::debug!(error = %e, "file index: entry skipped");
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let text = relative.to_string_lossy().replace('\\', "/");
        paths.push(text);
        if paths.len() >= MAX_PATHS {
            tracing::warn!(root = %root.display(), "file index capped at {MAX_PATHS} paths");
            break;
        }
    }
    paths
}
