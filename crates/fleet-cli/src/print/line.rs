//! Building one output object with its keys in a chosen order, and the per-line stamps
//! (`uuid`, `timestamp`) every JSON line carries.
//!
//! Key order matters to people diffing our output against Claude Code's, not to parsers;
//! `serde_json` is built with `preserve_order`, so keys come out in insertion order.

use fleet_protocol::AgentRef;
use serde_json::{json, Map, Value};
use std::time::SystemTime;

/// An output object assembled from ordered parts, so the subagent keys can sit where Claude
/// Code puts them.
pub(super) struct Line(Map<String, Value>);

impl Line {
    pub(super) fn new(head: Value) -> Self {
        Self(Map::new()).then(head)
    }

    /// Appends the keys of `more`, an object.
    pub(super) fn then(mut self, more: Value) -> Self {
        if let Value::Object(map) = more {
            self.0.extend(map);
        }
        self
    }

    /// `agent_id` for a subagent's line that already has `parent_tool_use_id`.
    pub(super) fn agent_id(self, agent: &AgentRef) -> Self {
        match agent.parent_tool_use_id {
            Some(_) => self.then(json!({ "agent_id": agent.agent_id })),
            None => self,
        }
    }

    /// `subagent_type` and `task_description` for a subagent's message line, so a reader can
    /// say which helper wrote it without having seen its `task_started`.
    pub(super) fn label(self, agent: &AgentRef) -> Self {
        match &agent.subagent {
            Some(label) => self.then(json!({
                "subagent_type": label.subagent_type,
                "task_description": label.description,
            })),
            None => self,
        }
    }

    /// Both subagent keys, for shapes that have neither.
    pub(super) fn subagent(self, agent: &AgentRef) -> Self {
        match &agent.parent_tool_use_id {
            Some(parent) => self.then(json!({
                "parent_tool_use_id": parent,
                "agent_id": agent.agent_id,
            })),
            None => self,
        }
    }

    /// The closing `uuid` and `session_id` of a `system` line about tasks, in the order
    /// Claude Code writes them there (the reverse of its message lines).
    pub(super) fn stamped(self, session_id: &str) -> Self {
        self.then(json!({ "uuid": new_uuid(), "session_id": session_id }))
    }

    pub(super) fn into_value(self) -> Value {
        Value::Object(self.0)
    }
}

pub(super) fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// RFC 3339 in UTC with milliseconds, as in `2026-11-30T13:28:18.909Z`.
pub(super) fn timestamp() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}
