//! What the page may ask of a session: stop a task, send a team member a message, answer a
//! permission question. The server only checks who asks (the token, the origin); whoever runs
//! the server implements [`Actions`] with the same rights the command line has — `fleet
//! dashboard` signs mail as `fleet team send` does, a session started with `--dashboard` stops
//! tasks and answers questions through its own op queue.
//!
//! The trait is object-safe (the server holds an `Arc<dyn Actions>`): its async methods return
//! boxed futures.

use crate::api::{self, ActionResult, PermissionAnswer, SendMessage};
use std::future::Future;
use std::pin::Pin;

/// The answer of an action, once it is done.
pub type ActionFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ActionResult, ActionError>> + Send + 'a>>;

/// Why an action was not done. The text is shown to the person on the page as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// The action cannot be done for this session at all (HTTP 409): e.g. stopping a task of a
    /// session this process does not run.
    #[error("{0}")]
    Unavailable(String),
    /// What it names does not exist (HTTP 404): no such task, team, member or question.
    #[error("{0}")]
    NotFound(String),
    /// The request itself is wrong (HTTP 400): an empty message, a protocol frame as text.
    #[error("{0}")]
    Invalid(String),
    /// It was tried and failed (HTTP 500): the mailbox could not be written, the session ended.
    #[error("{0}")]
    Failed(String),
}

/// The actions of the sessions a server shows.
pub trait Actions: Send + Sync {
    /// Which actions the page may offer for `session_id` (sent in its `Snapshot`).
    fn available(&self, session_id: &str) -> api::Actions;

    /// Stops background task or teammate `task_id` of `session_id`, as TaskStop does.
    fn stop_task(&self, session_id: String, task_id: String) -> ActionFuture<'_>;

    /// Sends `message` to `member` of `team`, signed as the user (as `fleet team send`).
    fn message_member(
        &self,
        team: String,
        member: String,
        message: SendMessage,
    ) -> ActionFuture<'_>;

    /// Answers permission question `request_id` of `session_id`.
    fn answer_permission(
        &self,
        session_id: String,
        request_id: String,
        answer: PermissionAnswer,
    ) -> ActionFuture<'_>;
}

/// No actions at all: a read-only dashboard.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOnly;

const READ_ONLY: &str = "this dashboard is read-only: it was started without actions";

impl Actions for ReadOnly {
    fn available(&self, _session_id: &str) -> api::Actions {
        api::Actions::default()
    }

    fn stop_task(&self, _session_id: String, _task_id: String) -> ActionFuture<'_> {
        Box::pin(async { Err(ActionError::Unavailable(READ_ONLY.into())) })
    }

    fn message_member(
        &self,
        _team: String,
        _member: String,
        _message: SendMessage,
    ) -> ActionFuture<'_> {
        Box::pin(async { Err(ActionError::Unavailable(READ_ONLY.into())) })
    }

    fn answer_permission(
        &self,
        _session_id: String,
        _request_id: String,
        _answer: PermissionAnswer,
    ) -> ActionFuture<'_> {
        Box::pin(async { Err(ActionError::Unavailable(READ_ONLY.into())) })
    }
}
