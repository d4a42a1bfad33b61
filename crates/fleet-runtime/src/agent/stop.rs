//! What ends a run besides a reply that calls no tool: its limits (turns, budget), a tool
//! that asked to end it, structured output delivered or given up on, an API error or an
//! interruption — and how each is worded in the result.

use super::turn::RunState;
use super::Agent;
use fleet_model::ModelError;
use fleet_protocol::ResultSubtype;

/// Why a run stopped early, before it is turned into a result.
pub(super) struct Stop {
    pub(super) subtype: ResultSubtype,
    pub(super) message: String,
    /// The HTTP status of the API error that stopped it, if one did.
    pub(super) status: Option<u16>,
    /// The API refused the request as longer than the model's window.
    pub(super) too_long: Option<crate::compact::TooLong>,
}

impl Stop {
    /// A run that failed while it ran, with no API error behind it.
    pub(super) fn error(message: String) -> Self {
        Self::new(ResultSubtype::ErrorDuringExecution, message)
    }

    fn new(subtype: ResultSubtype, message: String) -> Self {
        Self {
            subtype,
            message,
            status: None,
            too_long: None,
        }
    }
}

impl Agent {
    /// The limit the run has reached after `turns` replies costing `spent`, checked once a
    /// turn's calls are answered so the conversation stays valid.
    pub(super) fn limit_reached(&self, turns: u32, spent: f64) -> Option<Stop> {
        if let Some(max) = self.config.stop.max_turns.filter(|max| turns >= *max) {
            return Some(Stop::new(
                ResultSubtype::ErrorMaxTurns,
                format!("Reached the maximum number of turns ({max})."),
            ));
        }
        let budget = self
            .config
            .stop
            .max_budget_usd
            .filter(|budget| spent >= *budget)?;
        Some(Stop::new(
            ResultSubtype::ErrorMaxBudgetUsd,
            format!("Reached the budget of ${budget:.4} (spent ${spent:.4})."),
        ))
    }

    /// Whether the run ends once a reply's calls are answered: `Some(Ok(()))` when it is
    /// done (a tool asked to end it, or the structured output is in), `Some(Err(_))` when it
    /// stopped, `None` to go on. The budget counts the whole tree when there is a ledger.
    pub(super) fn ends_after_calls(&self, run: &RunState) -> Option<Result<(), Stop>> {
        if self.config.stop.ended_by_tool() {
            return Some(Ok(()));
        }
        match crate::structured::next(self.config.stop.structured.as_deref(), true) {
            crate::structured::Next::Delivered => return Some(Ok(())),
            crate::structured::Next::GiveUp(message) => return Some(Err(structured_stop(message))),
            _ => {}
        }
        let spent = match self.config.ledger() {
            Some(ledger) => ledger.total_cost_usd(),
            None => run.totals.cost_usd,
        };
        self.limit_reached(run.turns, spent).map(Err)
    }
}

pub(super) fn interrupted() -> Stop {
    Stop::error("Interrupted before the run finished.".into())
}

/// The model gave no valid structured output within the retries (`--json-schema`).
pub(super) fn structured_stop(message: String) -> Stop {
    Stop::new(ResultSubtype::ErrorMaxStructuredOutputRetries, message)
}

pub(super) fn api_error(err: &ModelError) -> Stop {
    Stop {
        subtype: ResultSubtype::ErrorDuringExecution,
        message: format!("API error: {err}"),
        status: err.status(),
        too_long: crate::compact::TooLong::from_error(err),
    }
}
