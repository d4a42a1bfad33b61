//! A session task that ends without returning its agent: a panic no guard caught, or an abort.
//!
//! Every front end reads a session through its event stream and decides its exit code from the
//! main agent's last `Finished`. A crash sends no `Finished`, so without this the run would end
//! with no result line and exit 0. The handle appends one error result instead, naming the
//! panic, so `-p`, the SDK and the terminal UI all report the failure the same way.

use fleet_protocol::{AgentEvent, AgentRef, EventKind, ResultSubtype, RunResult};
use tokio::task::JoinError;

/// Why the session task ended without its agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SessionCrash(String);

impl SessionCrash {
    /// Reads the panic's message (a `&str` or `String` payload) or says the task was aborted.
    pub fn from_join(err: JoinError) -> Self {
        if !err.is_panic() {
            return Self("the session task was cancelled before it finished".into());
        }
        Self::from_panic(err.into_panic())
    }

    /// Reads a caught panic's message (a `&str` or `String` payload).
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Self(format!("internal error: {message}"))
    }

    /// What happened and how to go on, for a person or a script.
    pub fn explain(&self, session_id: &str) -> String {
        format!(
            "fleet stopped unexpectedly ({}). The conversation up to the last complete step is \
             saved; resume it with --resume {session_id}.",
            self.0
        )
    }

    /// The error result the main agent would have reported had it been able to.
    pub fn result_event(&self, session_id: &str) -> AgentEvent {
        AgentEvent {
            agent: AgentRef::main(),
            kind: EventKind::Finished(error_result(session_id, self.explain(session_id))),
        }
    }
}

/// A run's error result carrying only its text: what a run that could not report is given.
pub(crate) fn error_result(session_id: &str, text: String) -> RunResult {
    RunResult {
        subtype: ResultSubtype::ErrorDuringExecution,
        result: text,
        num_turns: 0,
        duration_ms: 0,
        duration_api_ms: 0,
        total_cost_usd: 0.0,
        usage: Default::default(),
        model_usage: Default::default(),
        permission_denials: Vec::new(),
        stop_reason: None,
        api_error_status: None,
        session_id: session_id.to_string(),
        origin: None,
        tree: None,
        terminal_reason: Some(fleet_protocol::TerminalReason::Crashed),
        structured_output: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_result_naming_it() {
        let err = tokio::spawn(async { panic!("slice index 9 out of range") })
            .await
            .expect_err("the task panicked");
        let crash = SessionCrash::from_join(err);
        assert!(crash.to_string().contains("slice index 9 out of range"));
        let event = crash.result_event("s-1");
        let EventKind::Finished(result) = event.kind else {
            panic!("not a result: {:?}", event.kind);
        };
        assert!(result.is_error());
        assert!(result.result.contains("--resume s-1"), "{}", result.result);
        assert!(event.agent.is_main());
    }

    #[tokio::test]
    async fn an_aborted_task_is_not_a_success_either() {
        let task = tokio::spawn(std::future::pending::<()>());
        task.abort();
        let err = task.await.expect_err("aborted");
        assert!(SessionCrash::from_join(err)
            .to_string()
            .contains("cancelled"));
    }
}
