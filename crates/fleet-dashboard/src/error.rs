//! What can go wrong in the dashboard's model of the store, said once with the place it
//! happened, for the person reading the server's answer or log.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// Reading or watching a file or folder of the store failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The kernel refused the inotify instance or a watch (too many watches, say).
    #[error("cannot {action} {}: {source}", path.display())]
    Watch {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: nix::errno::Errno,
    },
    /// A store reader (team file, task list, inbox) failed.
    #[error(transparent)]
    Store(#[from] fleet_store::StoreError),
    #[error("no session {id} under the fleet home")]
    UnknownSession { id: String },
    #[error("session {session} has no agent {agent}")]
    UnknownAgent { session: String, agent: String },
    /// The caller needs a tokio runtime for this (the watcher runs as a task).
    #[error("{what} needs a tokio runtime")]
    NoRuntime { what: &'static str },
}

impl DashboardError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
