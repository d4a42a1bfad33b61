//! Who is running: the task-local identity of the agent whose code is executing.
//!
//! Many agents run concurrently in one process, so "the current agent" cannot be a global.
//! Each subagent's run is wrapped in [`AgentContext::scope`]; code anywhere below it (the
//! agent loop building a request, a tool, a log line) asks [`AgentContext::current`]. Outside
//! any scope, the main agent is running.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

tokio::task_local! {
    static CURRENT: Arc<AgentContext>;
}

/// The identity of a running agent: a subagent (a child that reports to its parent) or a
/// teammate (a long-lived member of a flat team that talks through mailboxes).
#[derive(Debug)]
pub enum AgentContext {
    Subagent(SubagentContext),
    Teammate(TeammateContext),
}

#[derive(Debug)]
pub struct TeammateContext {
    /// `name@team`, the address other members use.
    pub agent_id: String,
    pub agent_name: String,
    pub team_name: String,
    pub color: String,
    /// It works read-only until the lead approves its plan.
    pub plan_mode_required: bool,
    /// The session the team belongs to.
    pub parent_session_id: String,
    pub is_team_lead: bool,
    /// The definition it runs.
    pub agent_type: String,
}

#[derive(Debug)]
pub struct SubagentContext {
    pub agent_id: String,
    /// The definition it runs (`Explore`, `general-purpose`, a user's agent…).
    pub agent_type: String,
    pub is_built_in: bool,
    /// 1 for a child of the main agent.
    pub depth: u32,
    /// The API request id of the parent reply that asked for this agent. It goes out with
    /// the child's first model request only: enough to join the two in request logs without
    /// tagging every request after it.
    invoking_request_id: Option<String>,
    invoking_request_id_sent: AtomicBool,
}

impl SubagentContext {
    pub fn new(
        agent_id: impl Into<String>,
        agent_type: impl Into<String>,
        is_built_in: bool,
        depth: u32,
        invoking_request_id: Option<String>,
    ) -> Self {
        Self {
            agent_id: agent_id.into(),
            agent_type: agent_type.into(),
            is_built_in,
            depth,
            invoking_request_id,
            invoking_request_id_sent: AtomicBool::new(false),
        }
    }
}

impl AgentContext {
    /// Runs `fut` as this agent. Not an `async fn`: one would hold `fut` twice (as its
    /// argument and inside the task-local future it awaits), and a subagent's whole run is
    /// such a `fut` — 5 KB more for each of a fan-out's waiting agents.
    pub fn scope<F: Future>(self: Arc<Self>, fut: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, fut)
    }

    /// The agent running the calling code; `None` for the main agent.
    pub fn current() -> Option<Arc<AgentContext>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    pub fn agent_id(&self) -> &str {
        match self {
            Self::Subagent(s) => &s.agent_id,
            Self::Teammate(t) => &t.agent_id,
        }
    }

    /// The agent type it runs as (`fork` for a fork).
    pub fn agent_type(&self) -> &str {
        match self {
            Self::Subagent(s) => &s.agent_type,
            Self::Teammate(t) => &t.agent_type,
        }
    }

    /// How far below the main agent it runs; a teammate is a direct member, at 1.
    pub fn depth(&self) -> u32 {
        match self {
            Self::Subagent(s) => s.depth,
            Self::Teammate(_) => 1,
        }
    }

    /// The teammate running the calling code, if a teammate is.
    pub fn teammate(&self) -> Option<&TeammateContext> {
        match self {
            Self::Teammate(t) => Some(t),
            Self::Subagent(_) => None,
        }
    }

    /// The invoking request id the first time it is asked for, `None` after that.
    pub fn take_invoking_request_id(&self) -> Option<String> {
        match self {
            Self::Subagent(s) => {
                let id = s.invoking_request_id.as_ref()?;
                let already = s.invoking_request_id_sent.swap(true, Ordering::AcqRel);
                (!already).then(|| id.clone())
            }
            Self::Teammate(_) => None,
        }
    }
}

/// The header carrying the invoking request id on a subagent's first request.
pub const INVOKING_REQUEST_HEADER: &str = "x-fleet-invoking-request-id";

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_scope_sees_its_own_agent_and_the_id_goes_out_once() {
        assert!(AgentContext::current().is_none());
        let ctx = Arc::new(AgentContext::Subagent(SubagentContext::new(
            "a1",
            "Explore",
            true,
            1,
            Some("req_1".into()),
        )));
        let other = Arc::new(AgentContext::Subagent(SubagentContext::new(
            "a2", "Plan", true, 2, None,
        )));
        let (first, second) = tokio::join!(
            ctx.clone().scope(async {
                tokio::task::yield_now().await;
                let current = AgentContext::current().expect("inside a scope");
                (
                    current.agent_id().to_string(),
                    current.take_invoking_request_id(),
                    current.take_invoking_request_id(),
                )
            }),
            other.scope(async {
                tokio::task::yield_now().await;
                AgentContext::current().map(|c| (c.agent_id().to_string(), c.depth()))
            }),
        );
        assert_eq!(first, ("a1".to_string(), Some("req_1".to_string()), None));
        assert_eq!(second, Some(("a2".to_string(), 2)));
    }
}
