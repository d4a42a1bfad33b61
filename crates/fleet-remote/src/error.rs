//! What can go wrong between fleet and the broker, each saying what and where.

/// A remote operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The broker cannot be reached (or refused the connection).
    #[error("cannot reach the NATS server at {url}: {reason}")]
    Connect { url: String, reason: String },
    /// A JetStream call failed: `what` names the stream, bucket or subject.
    #[error("NATS JetStream: {what}: {reason}")]
    Broker { what: String, reason: String },
    /// A git step on the repository failed.
    #[error("git {step} in {dir}: {reason}")]
    Git {
        step: String,
        dir: String,
        reason: String,
    },
    /// No task with this id on the broker.
    #[error("no remote task {0:?} (fleet remote status lists them)")]
    UnknownTask(String),
    /// Something given as a task id is not one.
    #[error("{0:?} is not a remote task id (r and 16 hex digits; fleet remote status lists them)")]
    NotATaskId(String),
    /// A task is not in a state that allows the request.
    #[error("remote task {task}: {reason}")]
    State { task: String, reason: String },
    /// A message on the bus could not be read.
    #[error("a {what} on the bus is not valid: {reason}")]
    Malformed { what: String, reason: String },
    /// The job signing key cannot be had (see [`crate::signing`]).
    #[error(transparent)]
    Signing(#[from] crate::signing::SigningError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl RemoteError {
    pub(crate) fn broker(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self::Broker {
            what: what.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn malformed(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self::Malformed {
            what: what.into(),
            reason: reason.to_string(),
        }
    }
}
