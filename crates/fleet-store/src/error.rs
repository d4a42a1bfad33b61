//! The one error type of the store. Every variant names the file or folder involved, because a
//! bare "permission denied" gives the user nothing to fix.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// A filesystem call failed. `action` is a verb phrase ("append to", "create folder") so the
    /// message reads as a sentence: `cannot append to /…/x.jsonl: No space left on device (ENOSPC)`.
    #[error("cannot {action} {}: {}", path.display(), crate::io_reason::IoReason(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// An entry could not be turned into JSON (a map key that is not a string, for instance).
    #[error("cannot encode a transcript entry for {}: {source}", path.display())]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// Neither `$FLEET_HOME` nor a home folder is known.
    #[error("cannot find fleet's home folder: set FLEET_HOME (or HOME) to a writable folder")]
    NoHome,

    /// A session id that could name a path outside the project folder, or is otherwise not an id.
    #[error(
        "invalid session id {id:?}: use a session UUID or 1 to 128 letters, digits, '-' or '_'"
    )]
    InvalidSessionId { id: String },

    /// A new session was asked for under an id whose transcript already exists; appending to it
    /// would mix two conversations.
    #[error("a session transcript already exists at {}: resume that session or pick a new id", path.display())]
    SessionExists { path: PathBuf },

    /// Another process is running this session right now; two at once would interleave their
    /// turns in one conversation.
    #[error(
        "session {id} is in use by {}: wait for that run to end, or start a new session \
         (lock file {})",
        pid.map_or("another fleet process".to_string(), |pid| format!("pid {pid}")),
        lock.display()
    )]
    SessionInUse {
        id: String,
        pid: Option<u32>,
        lock: PathBuf,
    },

    /// No transcript has this id (or id prefix).
    #[error("no session {id:?} found under {}: `fleet sessions` lists the sessions of this folder and their ids", projects.display())]
    SessionNotFound { id: String, projects: PathBuf },

    /// An id prefix matched more than one transcript.
    #[error("session id prefix {prefix:?} matches {} sessions ({}): give more of the id", matches.len(), matches.join(", "))]
    AmbiguousSession {
        prefix: String,
        matches: Vec<String>,
    },
}

impl StoreError {
    /// Wraps an I/O error with what was being done and where.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
