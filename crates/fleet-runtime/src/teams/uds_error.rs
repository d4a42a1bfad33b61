//! Why a message between fleet sessions over their sockets (`uds:`) did not go through. The
//! text is what the model reads (or, for [`AcceptRefusal`], what the sending session is
//! answered), as these functions wrote it when they returned plain strings.

use super::RosterError;
use fleet_store::StoreError;
use std::path::PathBuf;

/// A `uds:` target that is not a socket of another fleet session.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("`uds:` needs a socket path or a session id after it.")]
    Empty,
    /// A bare target that is not a session id.
    #[error(transparent)]
    BadSessionId(StoreError),
    #[error(
        "`uds:` reaches other fleet sessions only: a socket in {} (give its path or the \
         session id), not {target}.",
        dir.display()
    )]
    Outside { dir: PathBuf, target: String },
}

/// Why this session cannot listen for other sessions' messages.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("cannot create {}: {source}", dir.display())]
    Folder {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A live session answers on the socket already.
    #[error("{} is in use by another session", path.display())]
    InUse { path: PathBuf },
    #[error("cannot listen on {}: {source}", path.display())]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why a line from another session was not taken; the text goes back to it as the answer's
/// `error`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AcceptRefusal {
    #[error("message over {max} bytes")]
    TooLong { max: usize },
    #[error("not a message line: {0}")]
    NotALine(#[source] serde_json::Error),
    #[error("empty text")]
    Empty,
    /// Protocol frames (plan approvals, shutdowns) come from the team only.
    #[error("a {kind} frame cannot come from another session")]
    Frame { kind: String },
    #[error("teams are off")]
    TeamsOff,
    #[error(transparent)]
    Roster(#[from] RosterError),
}

/// Why a message to another session was not delivered, or not confirmed.
#[derive(Debug, thiserror::Error)]
pub enum UdsSendError {
    #[error("No session answered on {} within 5 s.", path.display())]
    ConnectTimeout { path: PathBuf },
    #[error(
        "Nobody listens on {}: that session has ended, or the path is wrong (sessions listen \
         on $FLEET_HOME/sockets/<session id>.sock).",
        path.display()
    )]
    Nobody {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Cannot connect to {}: {source}", path.display())]
    Connect {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Encode(serde_json::Error),
    #[error("Cannot write to {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} took the message but did not confirm it within 5 s.", path.display())]
    Unconfirmed { path: PathBuf },
    #[error("Cannot read the answer from {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The answer is not a fleet session's.
    #[error("{} answered with something that is not fleet's: {answer:?}", path.display())]
    Foreign { path: PathBuf, answer: String },
    #[error("The session on {} refused the message: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
}

impl From<TargetError> for fleet_tools::ToolError {
    fn from(err: TargetError) -> Self {
        Self::BadValue {
            field: "to",
            message: err.to_string(),
            source: Some(Box::new(err)),
        }
    }
}

/// The other session is a service the call stands for; its failure is shown as it is.
impl From<UdsSendError> for fleet_tools::ToolError {
    fn from(err: UdsSendError) -> Self {
        Self::service(err)
    }
}

/// For the session's start-up, which still reports this as text.
impl From<ListenError> for String {
    fn from(err: ListenError) -> Self {
        err.to_string()
    }
}
