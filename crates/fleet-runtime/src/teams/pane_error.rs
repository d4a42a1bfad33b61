//! Why a pane teammate's pane could not be opened, and why a stopped teammate could not be
//! brought back. The text is what the model or the log reads, as these functions wrote it
//! when they returned plain strings.

use crate::backends::BackendError;
use fleet_tools::ToolError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PaneError {
    /// An in-process teammate asked to open a pane.
    #[error("{name:?} is not a pane teammate")]
    NotPane { name: String },
    /// The blocking task that asks the terminal backend for the pane was lost.
    #[error("the pane could not be opened: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The terminal backend (tmux, iTerm) refused.
    #[error("the pane could not be opened: {0}")]
    Backend(#[source] BackendError),
    #[error("cannot make {}: {source}", dir.display())]
    SecretsDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    SecretsFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A stopped teammate that could not be brought back (its run is marked stopped again).
#[derive(Debug, thiserror::Error)]
#[error("Cannot bring {name:?} back: {why}")]
pub struct RevivalError {
    pub name: String,
    #[source]
    pub why: RevivalProblem,
}

#[derive(Debug, thiserror::Error)]
pub enum RevivalProblem {
    /// A pane teammate's new pane.
    #[error(transparent)]
    Pane(PaneError),
    /// An in-process teammate's transcript could not be read, or its agent built.
    #[error(transparent)]
    Start(Box<ToolError>),
}

/// The team's own machinery failed, not the model's call.
impl From<PaneError> for ToolError {
    fn from(err: PaneError) -> Self {
        ToolError::Internal {
            message: err.to_string(),
            source: Some(Box::new(err)),
        }
    }
}

impl From<RevivalError> for ToolError {
    fn from(err: RevivalError) -> Self {
        ToolError::Internal {
            message: err.to_string(),
            source: Some(Box::new(err)),
        }
    }
}
