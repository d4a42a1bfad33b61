//! The `result` lines, held until the session is over.
//!
//! In `-p` mode a session can end several runs of the main agent: the prompt's, then one for
//! each batch of task notifications that wakes it. Each run's result is printed, but only at
//! the end, in order and numbered (`result_index`), because only then are the agent tree's
//! totals final: every result reports the same tree figures (cost, `modelUsage`,
//! `subagent_stats`, `usage_by_agent`), taken from the last result that carried them, while
//! `usage` stays that run's own.

use super::line::new_uuid;
use fleet_protocol::wire::{ApiErrorCategory, ResultLine, ResultOrigin, ResultTeam, ResultUsage};
use fleet_protocol::{ResultSubtype, RunResult, StopReason, TerminalReason, TreeReport};

#[derive(Debug, Default)]
pub(super) struct HeldResults {
    /// Each result without its tree, with the session id it belongs to and the run id of
    /// the task that started it (if one did).
    held: Vec<(RunResult, String, Option<String>)>,
    /// The latest tree seen: the only one any output uses, so the others are not kept.
    tree: Option<TreeReport>,
    /// How many results were already taken, so indexes go on counting across takes.
    taken: usize,
    /// The session's team at its end: its members and what each cost.
    team: Option<ResultTeam>,
}

impl HeldResults {
    pub(super) fn hold(&mut self, result: &RunResult, session_id: &str, run_id: Option<String>) {
        let mut result = result.clone();
        if let Some(tree) = result.tree.take() {
            self.tree = Some(tree);
        }
        self.held.push((result, session_id.to_string(), run_id));
    }

    /// The tree's final figures, for every result printed from now on.
    pub(super) fn set_tree(&mut self, tree: &TreeReport) {
        self.tree = Some(tree.clone());
    }

    /// The team's end-of-session summary, for every result printed from now on.
    pub(super) fn set_team(&mut self, team: ResultTeam) {
        self.team = Some(team);
    }

    /// Every held result as its line, oldest first; they are forgotten, so a second call
    /// returns nothing.
    pub(super) fn take(&mut self) -> Vec<ResultLine> {
        let first = self.taken;
        let held = std::mem::take(&mut self.held);
        self.taken += held.len();
        held.iter()
            .enumerate()
            .map(|(index, (result, session_id, run_id))| {
                let mut line = result_line(result, session_id, first + index, self.tree.as_ref());
                line.origin = result.origin.as_ref().map(|origin| ResultOrigin {
                    kind: origin.kind.clone(),
                    producer: "session-task".into(),
                    run_id: run_id.clone().unwrap_or_default(),
                    task_ids: origin.task_ids.clone(),
                });
                line.team = self.team.clone();
                line
            })
            .collect()
    }
}

/// Whether an API error ended the run: Claude Code reports such a run as a `success` whose
/// `is_error` is true, with `terminal_reason: api_error`, after a synthetic assistant message
/// that carries the error (see `api_error_message` in `encode.rs`).
pub(super) fn ended_by_api_error(r: &RunResult) -> Option<u16> {
    match r.subtype {
        ResultSubtype::ErrorDuringExecution if r.terminal_reason.is_none() => r.api_error_status,
        _ => None,
    }
}

/// The category of the API error that ended a run, for the synthetic message.
pub(super) fn api_error_category(status: u16) -> ApiErrorCategory {
    ApiErrorCategory::from_status(Some(status))
}

/// One `result` line. Without a tree (a session in which nothing reported one) the cost and
/// `modelUsage` are the run's own and the tree keys are left out.
///
/// Usage a server never reported is `null`, never zero: the run's `usage` when none of its
/// replies reported any, `total_cost_usd` when no reply it covers did. When only some did,
/// the figures are theirs and `usage_unreported_replies` counts the run's others.
fn result_line(
    r: &RunResult,
    session_id: &str,
    index: usize,
    tree: Option<&TreeReport>,
) -> ResultLine {
    let (cost, model_usage) = match tree {
        Some(tree) => (tree.reported_cost_usd(), tree.model_usage.clone()),
        None => (r.reported_cost_usd(), r.model_usage.clone()),
    };
    let usage = r.usage.is_reported().then(|| {
        ResultUsage::new(
            r.usage.input_tokens,
            r.usage.cache_creation(),
            r.usage.cache_read(),
            r.usage.output_tokens,
        )
    });
    let api_error = ended_by_api_error(r);
    let (subtype, terminal_reason) = match api_error {
        Some(_) => (ResultSubtype::Success, TerminalReason::ApiError),
        None => (r.subtype, terminal_reason(r)),
    };
    let stop_reason = match (&r.stop_reason, api_error) {
        (Some(reason), _) => Some(reason.clone()),
        // The synthetic message that reports the error stopped at a (empty) stop sequence.
        (None, Some(_)) => Some(StopReason::StopSequence),
        (None, None) => None,
    };
    let unreported = r.unreported_replies();
    ResultLine {
        subtype,
        is_error: r.is_error(),
        duration_ms: r.duration_ms,
        duration_api_ms: r.duration_api_ms,
        num_turns: r.num_turns,
        result: r.result.clone(),
        stop_reason,
        session_id: session_id.to_string(),
        total_cost_usd: cost,
        usage,
        model_usage,
        permission_denials: r.permission_denials.clone(),
        api_error_status: r.api_error_status,
        terminal_reason,
        structured_output: r.structured_output.clone(),
        origin: None,
        subagent_stats: tree.map(|t| t.subagent_stats.clone()),
        usage_by_agent: tree.map(|t| t.agents.clone()),
        errors: r.is_error().then(|| vec![r.result.clone()]),
        usage_unreported_replies: (unreported > 0).then_some(unreported),
        result_index: index,
        uuid: new_uuid(),
        team: None,
    }
}

/// Why the loop stopped, in one word a script can switch on.
fn terminal_reason(r: &RunResult) -> TerminalReason {
    if let Some(reason) = &r.terminal_reason {
        return reason.clone();
    }
    match r.subtype {
        ResultSubtype::Success => TerminalReason::Completed,
        ResultSubtype::ErrorMaxTurns => TerminalReason::MaxTurns,
        ResultSubtype::ErrorMaxBudgetUsd => TerminalReason::MaxBudgetUsd,
        ResultSubtype::ErrorMaxStructuredOutputRetries => {
            TerminalReason::StructuredOutputRetryExhausted
        }
        ResultSubtype::ErrorDuringExecution if r.api_error_status.is_some() => {
            TerminalReason::ModelError
        }
        ResultSubtype::ErrorDuringExecution => TerminalReason::Error,
    }
}
