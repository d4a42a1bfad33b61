//! The `result` line: how one run of the main agent ended. `--output-format json` prints the
//! same object on its own.

use crate::{
    AgentUsage, ModelUsage, PermissionDenial, ResultSubtype, StopReason, SubagentStats,
    TerminalReason,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// `type: "result"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    pub subtype: ResultSubtype,
    /// Whether the run failed. Not the same as a non-`success` subtype: a run an API error
    /// ended is a `success` with `is_error: true` (and `terminal_reason: api_error`), as in
    /// Claude Code.
    pub is_error: bool,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub duration_api_ms: u64,
    #[serde(default)]
    pub num_turns: u32,
    /// The final answer on success, else what went wrong.
    #[serde(default)]
    pub result: String,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub session_id: String,
    /// `null` when the run had replies and none of them reported usage.
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    /// This run's own tokens; `null` when no reply reported usage.
    #[serde(default)]
    pub usage: Option<ResultUsage>,
    /// Per model, over the agent tree when the session reported one.
    #[serde(rename = "modelUsage", default)]
    pub model_usage: BTreeMap<String, ModelUsage>,
    #[serde(default)]
    pub permission_denials: Vec<PermissionDenial>,
    /// The HTTP status of the API error that ended the run.
    #[serde(default)]
    pub api_error_status: Option<u16>,
    pub terminal_reason: TerminalReason,
    /// `--json-schema`: the validated value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    /// What started a run no prompt started (task notifications).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ResultOrigin>,
    /// The agent tree's figures (fleet's, with Claude Code's `subagent_stats` shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_stats: Option<SubagentStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_by_agent: Option<Vec<AgentUsage>>,
    /// An error run's message, as a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    /// How many of the run's replies reported no usage, when some did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_unreported_replies: Option<u64>,
    /// The result's place among the session's results (a background task's notification
    /// wakes the main agent for another run).
    #[serde(default)]
    pub result_index: usize,
    #[serde(default)]
    pub uuid: String,
    /// The session's team at its end: its members and what each cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<ResultTeam>,
}

/// What started a run that no prompt started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultOrigin {
    /// `task-notification`.
    pub kind: String,
    /// What produced it: `session-task` for a task of this session.
    #[serde(default)]
    pub producer: String,
    /// The run of the (first) task whose notification started it, as its task lines name it.
    #[serde(rename = "runId", default)]
    pub run_id: String,
    /// fleet's: every task whose notification the run answers.
    #[serde(default)]
    pub task_ids: Vec<String>,
}

/// The `team` of a result: the session's team as it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultTeam {
    pub name: String,
    pub members: Vec<crate::team::MemberSummary>,
}

/// A run's token counts: all four always (zero when unknown, so readers sum them without
/// checks), and the API's usage details in Claude Code's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultUsage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub output_tokens: u64,
    /// fleet offers no server-side tools, so these count nothing.
    #[serde(default)]
    pub server_tool_use: ServerToolUse,
    /// fleet asks for no priority tier: `standard`.
    #[serde(default = "standard_tier")]
    pub service_tier: String,
    /// Cache writes by lifetime; fleet only writes five-minute entries.
    #[serde(default)]
    pub cache_creation: CacheCreation,
}

fn standard_tier() -> String {
    "standard".into()
}

impl ResultUsage {
    /// The four counts, with the details as fleet has them.
    pub fn new(input: u64, cache_creation: u64, cache_read: u64, output: u64) -> Self {
        Self {
            input_tokens: input,
            cache_creation_input_tokens: cache_creation,
            cache_read_input_tokens: cache_read,
            output_tokens: output,
            server_tool_use: ServerToolUse::default(),
            service_tier: standard_tier(),
            cache_creation: CacheCreation {
                ephemeral_1h_input_tokens: 0,
                ephemeral_5m_input_tokens: cache_creation,
            },
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerToolUse {
    #[serde(default)]
    pub web_search_requests: u64,
    #[serde(default)]
    pub web_fetch_requests: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCreation {
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u64,
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u64,
}
