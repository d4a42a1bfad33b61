//! Asking a person. When the permission check says "ask", the loop turns to an [`Approver`]
//! if the session has one (a terminal is attached); without one, "ask" is a refusal the caller
//! sees in `permission_denials`.

use fleet_tools::permissions::Decision;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// One call waiting for a yes or no.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The agent making the call (`main` for the session's own agent).
    pub agent_id: &'a str,
    pub tool: &'a str,
    pub input: &'a Value,
    /// The check's verdict, with the call described and an allow rule that would cover it.
    pub decision: &'a Decision,
}

pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

pub trait Approver: Send + Sync {
    /// True to run the call. May take as long as the person does; the loop stops waiting
    /// when the agent is cancelled.
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a>;
}
