//! The iTerm2 backend, through the `it2` CLI. PLACEHOLDER (helper A fills this in).

use super::{BackendError, BackendKind, Pane, PaneBackend, PaneSpec};
use std::path::PathBuf;

/// Teammate panes as native iTerm2 split panes.
#[derive(Debug)]
pub struct ITermBackend {
    it2: PathBuf,
}

impl ITermBackend {
    /// Uses the `it2` program at `it2`.
    pub fn new(it2: PathBuf) -> Self {
        Self { it2 }
    }
}

impl PaneBackend for ITermBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::ITerm2
    }
    fn spawn(&self, spec: &PaneSpec) -> Result<Pane, BackendError> {
        let _ = (spec, &self.it2);
        Err(BackendError::Failed {
            command: "it2".into(),
            stderr: "not built yet".into(),
        })
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        let _ = pane;
        Ok(())
    }
    fn list(&self) -> Result<Vec<String>, BackendError> {
        Ok(Vec::new())
    }
    fn is_alive(&self, pane: &str) -> Result<bool, BackendError> {
        let _ = pane;
        Ok(false)
    }
    fn where_to_look(&self) -> Option<String> {
        None
    }
}
