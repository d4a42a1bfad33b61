//! The stream-json lines the Agent SDKs read to follow a session: `permission_denied`,
//! `session_state_changed` (only when the SDK asks for it) and the `stream_event` lines of
//! `--include-partial-messages`, in Claude Code's shapes.

use super::line::{message_agent_id, new_uuid};
use fleet_protocol::wire::{
    DiscardedReply, DiscardedTag, PermissionDeniedLine, SessionStateLine, SessionStateName,
    StreamEventBody, StreamEventLine,
};
use fleet_protocol::{AgentRef, DeniedCall, SessionState, StreamEvent};

/// `system/permission_denied`: a call was refused; `agent_id` names a subagent that made it.
pub(super) fn permission_denied(
    agent: &AgentRef,
    denied: &DeniedCall,
    session_id: &str,
) -> PermissionDeniedLine {
    PermissionDeniedLine {
        tool_name: denied.tool_name.clone(),
        tool_use_id: denied.tool_use_id.clone(),
        agent_id: (!agent.is_main()).then(|| agent.agent_id.clone()),
        decision_reason_type: denied.reason_type.clone(),
        message: denied.message.clone(),
        uuid: new_uuid(),
        session_id: session_id.to_string(),
    }
}

/// One `stream_event` line around an event of a reply.
pub(super) fn stream_event(
    agent: &AgentRef,
    event: StreamEventBody,
    session_id: &str,
) -> StreamEventLine {
    StreamEventLine {
        event,
        parent_tool_use_id: agent.parent_tool_use_id.clone(),
        agent_id: message_agent_id(agent),
        session_id: session_id.to_string(),
        uuid: new_uuid(),
    }
}

/// An API stream event as a `stream_event` line.
pub(super) fn api_event(
    agent: &AgentRef,
    event: &StreamEvent,
    session_id: &str,
) -> StreamEventLine {
    stream_event(agent, StreamEventBody::Api(event.clone()), session_id)
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
) -> StreamEventLine {
    let body = StreamEventBody::Discarded(DiscardedReply {
        kind: DiscardedTag::MessageDiscarded,
        message_id: message_id.map(str::to_string),
        reason: reason.to_string(),
    });
    stream_event(agent, body, session_id)
}

/// Follows the session's state as the SDKs see it: `running` while a prompt is worked on,
/// `requires_action` while any tool call waits for an approver, `idle` once nothing is left.
/// Only changes are reported.
#[derive(Debug, Default)]
pub(super) struct StateLines {
    on: bool,
    shown: Option<SessionStateName>,
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
    pub(super) fn session(
        &mut self,
        state: SessionState,
        session_id: &str,
    ) -> Option<SessionStateLine> {
        if state == SessionState::Idle {
            self.waiting = 0;
        }
        self.show(state.into(), session_id)
    }

    /// A call started (`waiting`) or stopped waiting for an approver.
    pub(super) fn approval(&mut self, waiting: bool, session_id: &str) -> Option<SessionStateLine> {
        if waiting {
            self.waiting += 1;
            self.show(SessionStateName::RequiresAction, session_id)
        } else {
            self.waiting = self.waiting.saturating_sub(1);
            match self.waiting {
                0 => self.show(SessionStateName::Running, session_id),
                _ => None,
            }
        }
    }

    fn show(&mut self, state: SessionStateName, session_id: &str) -> Option<SessionStateLine> {
        if !self.on || self.shown.as_ref() == Some(&state) {
            return None;
        }
        self.shown = Some(state.clone());
        Some(SessionStateLine {
            state,
            sdk_host_only: true,
            uuid: new_uuid(),
            session_id: session_id.to_string(),
        })
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
        let mut note = |line: Option<SessionStateLine>| {
            if let Some(line) = line {
                assert!(line.sdk_host_only);
                assert_eq!(line.session_id, "s");
                seen.push(serde_json::to_value(&line.state).unwrap());
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
