//! Why the session's team could not be made, opened or written to. The text is what the
//! model (or the log) reads, as the roster wrote it when it returned plain strings; the
//! store's own error is kept as the source.

use fleet_store::{MailboxError, TaskListError, TeamError};
use fleet_tools::ToolError;

#[derive(Debug, thiserror::Error)]
pub enum RosterError {
    /// A pane teammate's session is the member of one team only.
    #[error("this session already joined a team")]
    AlreadyJoined,
    /// TeamCreate while the session leads a team.
    #[error(
        "This session already leads team {team:?}; end it with TeamDelete before creating \
         another."
    )]
    AlreadyLeads { team: String },
    #[error("Cannot create the team: {0}")]
    Create(#[source] TeamError),
    #[error("Cannot list teams: {0}")]
    List(#[source] TeamError),
    #[error("Cannot join team {team:?}: {source}")]
    Join {
        team: String,
        #[source]
        source: TeamError,
    },
    #[error("Cannot read team {team:?}: {source}")]
    Read {
        team: String,
        #[source]
        source: TeamError,
    },
    #[error("Cannot open the lead's inbox: {0}")]
    LeadInbox(#[source] MailboxError),
    #[error("Cannot open the team's task list: {0}")]
    TaskList(#[source] TaskListError),
    #[error("Cannot open the inbox of {member:?}: {source}")]
    Inbox {
        member: String,
        #[source]
        source: MailboxError,
    },
    #[error("Cannot deliver to {to:?}: {source}")]
    Deliver {
        to: String,
        #[source]
        source: MailboxError,
    },
}

/// A tool call that needed the team: leading a second team is the model's to correct (the
/// `team_name` it asked for); the rest are failures of the team's files.
impl From<RosterError> for ToolError {
    fn from(err: RosterError) -> Self {
        match err {
            RosterError::AlreadyLeads { .. } => ToolError::bad_value("team_name", err.to_string()),
            other => ToolError::Internal {
                message: other.to_string(),
                source: Some(Box::new(other)),
            },
        }
    }
}

/// For the callers that still carry their reason as text (the socket's line protocol, a
/// pane teammate's start-up).
impl From<RosterError> for String {
    fn from(err: RosterError) -> Self {
        err.to_string()
    }
}
