//! The per-line stamps every JSON line carries (`uuid`, `timestamp`) and the subagent keys.
//!
//! Key order matters to people diffing our output against Claude Code's, not to parsers; the
//! wire types in `fleet_protocol::wire` declare their fields in Claude Code's order.

use fleet_protocol::wire::SubagentKeys;
use fleet_protocol::AgentRef;
use std::time::SystemTime;

pub(super) fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// RFC 3339 in UTC with milliseconds, as in `2026-11-30T13:28:18.909Z`.
pub(super) fn timestamp() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// `parent_tool_use_id` and `agent_id` for a subagent's line; neither for the main agent's.
pub(super) fn subagent_keys(agent: &AgentRef) -> SubagentKeys {
    match &agent.parent_tool_use_id {
        Some(parent) => SubagentKeys {
            parent_tool_use_id: Some(parent.clone()),
            agent_id: Some(agent.agent_id.clone()),
        },
        None => SubagentKeys::default(),
    }
}

/// `agent_id` for a message line, which always has `parent_tool_use_id` of its own.
pub(super) fn message_agent_id(agent: &AgentRef) -> Option<String> {
    agent
        .parent_tool_use_id
        .as_ref()
        .map(|_| agent.agent_id.clone())
}

/// `subagent_type` and `task_description` for a subagent's message line.
pub(super) fn label(agent: &AgentRef) -> (Option<String>, Option<String>) {
    match &agent.subagent {
        Some(label) => (
            Some(label.subagent_type.clone()),
            Some(label.description.clone()),
        ),
        None => (None, None),
    }
}
