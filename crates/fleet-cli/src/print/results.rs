//! The `result` objects, held until the session is over.
//!
//! In `-p` mode a session can end several runs of the main agent: the prompt's, then one for
//! each batch of task notifications that wakes it. Each run's result is printed, but only at
//! the end, in order and numbered (`result_index`), because only then are the agent tree's
//! totals final: every result reports the same tree figures (cost, `modelUsage`,
//! `subagent_stats`, `usage_by_agent`), taken from the last result that carried them, while
//! `usage` stays that run's own.

use super::line::{new_uuid, Line};
use fleet_protocol::{ResultSubtype, RunResult, TreeReport};
use serde_json::{json, Value};

#[derive(Debug, Default)]
pub(super) struct HeldResults {
    /// Each result without its tree, with the session id it belongs to.
    held: Vec<(RunResult, String)>,
    /// The latest tree seen: the only one any output uses, so the others are not kept.
    tree: Option<TreeReport>,
    /// How many results were already taken, so indexes go on counting across takes.
    taken: usize,
    /// The session's team at its end: its members and what each cost.
    team: Option<Value>,
}

impl HeldResults {
    pub(super) fn hold(&mut self, result: &RunResult, session_id: &str) {
        let mut result = result.clone();
        if let Some(tree) = result.tree.take() {
            self.tree = Some(tree);
        }
        self.held.push((result, session_id.to_string()));
    }

    /// The tree's final figures, for every result printed from now on.
    pub(super) fn set_tree(&mut self, tree: &TreeReport) {
        self.tree = Some(tree.clone());
    }

    /// The team's end-of-session summary, for every result printed from now on.
    pub(super) fn set_team(&mut self, team: Value) {
        self.team = Some(team);
    }

    /// Every held result as its output object, oldest first; they are forgotten, so a second
    /// call returns nothing.
    pub(super) fn take(&mut self) -> Vec<Value> {
        let first = self.taken;
        let held = std::mem::take(&mut self.held);
        self.taken += held.len();
        held.iter()
            .enumerate()
            .map(|(index, (result, session_id))| {
                let mut value = result_value(result, session_id, first + index, self.tree.as_ref());
                if let (Some(team), Some(map)) = (&self.team, value.as_object_mut()) {
                    map.insert("team".into(), team.clone());
                }
                value
            })
            .collect()
    }
}

/// One `result` object. Without a tree (a session in which nothing reported one) the cost and
/// `modelUsage` are the run's own and the tree keys are left out.
///
/// Usage a server never reported is `null`, never zero: the run's `usage` when none of its
/// replies reported any, `total_cost_usd` when no reply it covers did. When only some did,
/// the figures are theirs and `usage_unreported_replies` counts the run's others.
fn result_value(r: &RunResult, session_id: &str, index: usize, tree: Option<&TreeReport>) -> Value {
    let (cost, model_usage) = match tree {
        Some(tree) => (tree.reported_cost_usd(), json!(tree.model_usage)),
        None => (r.reported_cost_usd(), json!(r.model_usage)),
    };
    // All four counts always, zero when unknown: readers sum them without checks.
    let usage = r.usage.is_reported().then(|| {
        json!({
            "input_tokens": r.usage.input_tokens,
            "cache_creation_input_tokens": r.usage.cache_creation(),
            "cache_read_input_tokens": r.usage.cache_read(),
            "output_tokens": r.usage.output_tokens,
        })
    });
    let mut line = Line::new(json!({
        "type": "result",
        "subtype": r.subtype.as_str(),
        "is_error": r.is_error(),
        "duration_ms": r.duration_ms,
        "duration_api_ms": r.duration_api_ms,
        "num_turns": r.num_turns,
        "result": r.result,
        "stop_reason": r.stop_reason,
        "session_id": session_id,
        "total_cost_usd": cost,
        "usage": usage,
        "modelUsage": model_usage,
        "permission_denials": r.permission_denials,
        "api_error_status": r.api_error_status,
        "terminal_reason": r.terminal_reason.as_deref().unwrap_or_else(|| terminal_reason(r)),
    }));
    if let Some(value) = &r.structured_output {
        line = line.then(json!({ "structured_output": value }));
    }
    if let Some(origin) = &r.origin {
        line = line.then(json!({ "origin": origin }));
    }
    if let Some(tree) = tree {
        line = line.then(json!({
            "subagent_stats": tree.subagent_stats,
            "usage_by_agent": tree.agents,
        }));
    }
    if r.is_error() {
        line = line.then(json!({ "errors": [r.result] }));
    }
    let unreported = r.unreported_replies();
    if unreported > 0 {
        line = line.then(json!({ "usage_unreported_replies": unreported }));
    }
    line.then(json!({ "result_index": index, "uuid": new_uuid() }))
        .into_value()
}

/// Why the loop stopped, in one word a script can switch on.
fn terminal_reason(r: &RunResult) -> &'static str {
    match r.subtype {
        ResultSubtype::Success => "completed",
        ResultSubtype::ErrorMaxTurns => "max_turns",
        ResultSubtype::ErrorMaxBudgetUsd => "max_budget_usd",
        ResultSubtype::ErrorMaxStructuredOutputRetries => "structured_output_retry_exhausted",
        ResultSubtype::ErrorDuringExecution if r.api_error_status.is_some() => "model_error",
        ResultSubtype::ErrorDuringExecution => "error",
    }
}
