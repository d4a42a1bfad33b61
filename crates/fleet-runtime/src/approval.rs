//! Asking a person. When the permission check says "ask", the loop turns to an [`Approver`]
//! if the session has one (a terminal is attached); without one, "ask" is a refusal the caller
//! sees in `permission_denials`.

use fleet_protocol::ProposedChange;
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
    /// The tool_use block's id, so an answer given elsewhere (an SDK host) can name the call.
    pub tool_use_id: &'a str,
    /// The check's verdict, with the call described and an allow rule that would cover it.
    pub decision: &'a Decision,
    /// What the call would change in a file (Write, Edit), worked out by the tool before
    /// asking, for the question to show as a diff. `None` for calls that change no file, and
    /// for questions handed on from elsewhere (a pane teammate's, asked through its lead).
    pub change: Option<&'a ProposedChange>,
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// Run the call; with `updated_input`, run it with that input instead of the model's
    /// (an SDK host may correct a path or a command before saying yes).
    Allow { updated_input: Option<Value> },
    /// Do not run it. The message, when given, is what the model reads instead of the
    /// standard refusal, so the answerer can say why or what to do instead.
    Deny { message: Option<String> },
}

impl Approval {
    pub fn allow() -> Self {
        Self::Allow {
            updated_input: None,
        }
    }

    pub fn deny() -> Self {
        Self::Deny { message: None }
    }

    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }
}

impl From<bool> for Approval {
    fn from(yes: bool) -> Self {
        if yes {
            Self::allow()
        } else {
            Self::deny()
        }
    }
}

pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;

pub trait Approver: Send + Sync {
    /// The answer for one call. May take as long as the person does; the loop stops
    /// waiting when the agent is cancelled.
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a>;
}
