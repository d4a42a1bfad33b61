//! What one agent has read, so that Write and Edit refuse to overwrite a file the agent has
//! not seen or that changed on disk since it was read.
//!
//! Owned by the Read/Write/Edit helper; see `builtin/read.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// One remembered read: when the file was last modified as we saw it, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub modified: Option<SystemTime>,
    pub len: u64,
}

#[derive(Debug, Default)]
pub struct FileState {
    seen: Mutex<HashMap<PathBuf, Seen>>,
}

impl FileState {
    /// Records that the agent has seen `path` (resolved) as it is on disk now.
    pub fn record(&self, path: &Path, seen: Seen) {
        if let Ok(mut map) = self.seen.lock() {
            map.insert(path.to_path_buf(), seen);
        }
    }

    pub fn get(&self, path: &Path) -> Option<Seen> {
        self.seen.lock().ok().and_then(|map| map.get(path).copied())
    }
}
