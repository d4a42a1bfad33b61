//! The tmux backend, through the `tmux` command line. PLACEHOLDER (helper A fills this in).

use super::{BackendError, BackendKind, Pane, PaneBackend, PaneSpec};
use std::path::PathBuf;

/// Teammate panes in tmux: split beside the lead inside its window, or in an external
/// `fleet-<team>` session the person attaches to.
#[derive(Debug)]
pub struct TmuxBackend {
    /// `-S <socket>` for every call (inside tmux); `None` uses the default server
    /// (`$TMUX_TMPDIR` decides where it lives).
    socket: Option<PathBuf>,
    placement: Placement,
}

#[derive(Debug, Clone)]
enum Placement {
    Inside { lead_pane: String },
    External { session: String },
}

impl TmuxBackend {
    /// Panes split from `lead_pane` in its window, on the server at `socket`.
    pub fn inside(socket: PathBuf, lead_pane: String) -> Self {
        Self {
            socket: Some(socket),
            placement: Placement::Inside { lead_pane },
        }
    }

    /// Panes in the session `fleet-<team>` on the default server, made at the first spawn.
    pub fn external(team: &str) -> Self {
        Self {
            socket: None,
            placement: Placement::External {
                session: format!("fleet-{team}"),
            },
        }
    }
}

impl PaneBackend for TmuxBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tmux
    }
    fn spawn(&self, spec: &PaneSpec) -> Result<Pane, BackendError> {
        let _ = (spec, &self.socket, &self.placement);
        Err(BackendError::Failed {
            command: "tmux".into(),
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
