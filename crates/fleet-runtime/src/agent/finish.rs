//! The end of a run: undoing what its skills changed, turning its outcome into the result,
//! closing the main agent's entry in the tree's ledger, and sending the result.

use super::turn::{Outcome, RunState};
use super::{millis, Agent};
use crate::sink::EventSink;
use fleet_protocol::{EventKind, ResultSubtype, RunResult, TaskStatus};

impl Agent {
    /// Ends the run with `outcome`: the result, also sent as the last event.
    pub(super) async fn finish(
        &mut self,
        run: RunState,
        outcome: Outcome,
        sink: &EventSink,
    ) -> RunResult {
        self.skills.revert(&mut self.config);
        let (subtype, result, api_error_status) = match outcome {
            Ok(text) => (ResultSubtype::Success, text, None),
            Err(stop) => {
                // A run cut short while it waited past the watchdog's bound says on what.
                let waited = sink.watchdog().overdue_for(&sink.agent().agent_id);
                let message = match waited {
                    Some(waited) => format!("{} ({waited})", stop.message),
                    None => stop.message,
                };
                (stop.subtype, message, stop.status)
            }
        };
        let mut result = RunResult {
            subtype,
            result,
            num_turns: run.turns,
            duration_ms: millis(run.started.elapsed()),
            duration_api_ms: millis(run.totals.api_time),
            total_cost_usd: run.totals.cost_usd,
            usage: run.totals.usage,
            model_usage: run.totals.per_model,
            permission_denials: run.denials,
            stop_reason: run.last_stop_reason,
            api_error_status,
            session_id: self.session_id.clone(),
            origin: run.origin,
            tree: None,
            terminal_reason: run.terminal_reason,
            structured_output: self.config.stop.structured.as_ref().and_then(|s| s.take()),
        };
        self.close_tree(&mut result, sink);
        sink.emit(EventKind::Finished(result.clone())).await;
        result
    }

    /// The main agent's result reports the whole tree; its own entry says how it ended.
    fn close_tree(&self, result: &mut RunResult, sink: &EventSink) {
        let (Some(ledger), true) = (self.config.ledger(), sink.agent().is_main()) else {
            return;
        };
        let status = if result.is_error() {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        ledger.finish(&sink.agent().agent_id, status, None);
        result.tree = Some(ledger.report());
    }
}
