//! The stream-json lines the Agent SDKs read to follow a session: `permission_denied`,
//! `session_state_changed` (only when the SDK asks for it) and the `stream_event` lines of
//! `--include-partial-messages`, in Claude Code's shapes.

use super::line::{new_uuid, Line};
use fleet_protocol::{AgentRef, DeniedCall, SessionState, StreamEvent};
use serde_json::{json, Value};

/// `system/permission_denied`: a call was refused; `agent_id` names a subagent that made it.
pub(super) fn permission_denied(agent: &AgentRef, denied: &DeniedCall, session_id: &str) -> Value {
    let mut line = Line::new(json!({
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": denied.tool_name,
        "tool_use_id": denied.tool_use_id,
    }));
    if !agent.is_main() {
        line = line.then(json!({ "agent_id": agent.agent_id }));
    }
    line.then(json!({
        "decision_reason_type": denied.reason_type,
        "message": denied.message,
        "uuid": new_uuid(),
        "session_id": session_id,
    }))
    .into_value()
}

/// One `stream_event` line around an API stream event.
pub(super) fn stream_event(agent: &AgentRef, event: &StreamEvent, session_id: &str) -> Value {
    Line::new(json!({
        "type": "stream_event",
        "event": event,
        "parent_tool_use_id": agent.parent_tool_use_id,
    }))
    .agent_id(agent)
    .then(json!({ "session_id": session_id, "uuid": new_uuid() }))
    .into_value()
}

/// Tells a reader of partial messages to drop what it was shown of a reply (`message_id`
/// when its `message_start` carried one): the whole turn is asked for again, and the next
/// `message_start` begins the reply that counts. Shaped as a `stream_event` so that it
/// arrives in order with the events it cancels.
pub(super) fn reply_discarded(
    agent: &AgentRef,
    message_id: Option<&str>,
    reason: &str,
    session_id: &str,
) -> Value {
    Line::new(json!({
        "type": "stream_event",
        "event": {
            "type": "message_discarded",
            "message_id": message_id,
            "reason": reason,
        },
        "parent_tool_use_id": agent.parent_tool_use_id,
    }))
    .agent_id(agent)
    .then(json!({ "session_id": session_id, "uuid": new_uuid() }))
    .into_value()
}

/// Follows the session's state as the SDKs see it: `running` while a prompt is worked on,
/// `requires_action` while any tool call waits for an approver, `idle` once nothing is left.
/// Only changes are reported.
#[derive(Debug, Default)]
pub(super) struct StateLines {
    on: bool,
    shown: Option<&'static str>,
    /// Calls waiting for an answer right now (parallel calls and subagents can wait together).
    waiting: usize,
}

impl StateLines {
    pub(super) fn new(on: bool) -> Self {
        Self {
            on,
            ..Self::default()
        }
    }

    /// The session changed state.
    pub(super) fn session(&mut self, state: SessionState, session_id: &str) -> Option<Value> {
        let name = match state {
            SessionState::Running => "running",
            SessionState::Idle => {
                self.waiting = 0;
                "idle"
            }
        };
        self.show(name, session_id)
    }

    /// A call started (`waiting`) or stopped waiting for an approver.
    pub(super) fn approval(&mut self, waiting: bool, session_id: &str) -> Option<Value> {
        if waiting {
            self.waiting += 1;
            self.show("requires_action", session_id)
        } else {
            self.waiting = self.waiting.saturating_sub(1);
            match self.waiting {
                0 => self.show("running", session_id),
                _ => None,
            }
        }
    }

    fn show(&mut self, state: &'static str, session_id: &str) -> Option<Value> {
        if !self.on || self.shown == Some(state) {
            return None;
        }
        self.shown = Some(state);
        Some(json!({
            "type": "system",
            "subtype": "session_state_changed",
            "state": state,
            "sdk_host_only": true,
            "uuid": new_uuid(),
            "session_id": session_id,
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn states_are_reported_on_change_only_and_only_when_asked() {
        let mut off = StateLines::new(false);
        assert!(off.session(SessionState::Running, "s").is_none());
        let mut on = StateLines::new(true);
        let mut seen = Vec::new();
        let mut note = |line: Option<Value>| {
            if let Some(line) = line {
                assert_eq!(line["sdk_host_only"], true);
                assert_eq!(line["session_id"], "s");
                seen.push(line["state"].as_str().unwrap().to_string());
            }
        };
        note(on.session(SessionState::Running, "s"));
        note(on.approval(true, "s"));
        note(on.approval(true, "s"));
        note(on.approval(false, "s"));
        note(on.approval(false, "s"));
        note(on.session(SessionState::Running, "s"));
        note(on.session(SessionState::Idle, "s"));
        note(on.session(SessionState::Idle, "s"));
        assert_eq!(seen, ["running", "requires_action", "running", "idle"]);
    }
}
