//! The agent tree as the final result reports it: cost and usage summed over every agent,
//! how many subagents were spawned and how they ended, and one line per agent.

use crate::model_usage::ModelUsage;
use crate::usage::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the Agent tool calls asked to run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedModes {
    pub background: u64,
    pub foreground: u64,
    /// `run_in_background` left out (the definition decides).
    pub unset: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KilledCounts {
    pub parent: u64,
    pub user: u64,
    pub system: u64,
}

/// Spawns refused, by the limit that refused them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedCounts {
    pub depth_limit: u64,
    pub concurrency_limit: u64,
    pub budget: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentStats {
    pub spawned: u64,
    pub requested: RequestedModes,
    pub started_in_background: u64,
    /// The deepest nesting reached (1 = a child of the main agent).
    pub max_depth: u32,
    /// Spawns made by subagents rather than the main agent.
    pub spawned_by_subagents: u64,
    pub completed: u64,
    pub failed: u64,
    pub killed: KilledCounts,
    pub refused: RefusedCounts,
    pub by_type: BTreeMap<String, u64>,
}

/// One agent's share of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentUsage {
    pub agent_id: String,
    /// `main` for the session's own agent, else the subagent type.
    pub agent_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
    pub depth: u32,
    pub model: String,
    /// `running`, `completed`, `failed` or `killed` (`completed` for the main agent).
    pub status: String,
    pub num_turns: u32,
    pub tool_uses: u64,
    /// `null` when none of the agent's replies reported usage.
    pub usage: Usage,
    /// `None` (`null`) when the agent had replies and none of them reported usage.
    pub cost_usd: Option<f64>,
    /// The name the server answered with, when it is not `model` (the one asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_model: Option<String>,
    /// Replies that reported no usage; they are in neither `usage` nor `cost_usd`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub usage_unreported_replies: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Totals over the whole tree at the time the result is printed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TreeReport {
    pub total_cost_usd: f64,
    pub model_usage: BTreeMap<String, ModelUsage>,
    pub subagent_stats: SubagentStats,
    pub agents: Vec<AgentUsage>,
}

impl TreeReport {
    /// The tree's cost, or `None` when its agents had replies and none of them reported
    /// usage.
    pub fn reported_cost_usd(&self) -> Option<f64> {
        let nothing_reported = !self.model_usage.is_empty()
            && self.model_usage.values().all(ModelUsage::is_unreported);
        (!nothing_reported).then_some(self.total_cost_usd)
    }

    /// How many replies of the whole tree reported no usage.
    pub fn unreported_replies(&self) -> u64 {
        self.model_usage
            .values()
            .map(|m| m.unreported_replies)
            .sum()
    }
}
