//! Where an agent's events go. A sink stamps every event with the emitting agent, so that a
//! subagent's events forwarded through its parent's sink still say who they came from.

use fleet_protocol::{AgentEvent, AgentRef, EventKind};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Sees every event of one agent before it is sent on: how a subagent's progress and
/// transcript are kept without a task and a channel of its own per agent.
pub trait EventTap: Send + Sync {
    fn observe(&self, event: &AgentEvent);
}

#[derive(Clone)]
pub struct EventSink {
    agent: AgentRef,
    tx: mpsc::Sender<AgentEvent>,
    tap: Option<Arc<dyn EventTap>>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("agent", &self.agent)
            .field("tap", &self.tap.is_some())
            .finish_non_exhaustive()
    }
}

impl EventSink {
    pub fn new(agent: AgentRef, tx: mpsc::Sender<AgentEvent>) -> Self {
        Self {
            agent,
            tx,
            tap: None,
        }
    }

    /// The same sink, showing each event to `tap` first.
    pub fn with_tap(mut self, tap: Arc<dyn EventTap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// A bounded channel and a sink for the main agent. The bound is what keeps memory flat
    /// when a consumer is slow: the agent waits instead of queueing without limit.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<AgentEvent>) {
        let (tx, rx) = mpsc::channel(capacity);
        (Self::new(AgentRef::main(), tx), rx)
    }

    /// The channel itself, for sinks of other agents on the same stream.
    pub fn sender(&self) -> mpsc::Sender<AgentEvent> {
        self.tx.clone()
    }

    pub fn agent(&self) -> &AgentRef {
        &self.agent
    }

    /// The same channel, stamping events as coming from `agent` (a subagent). The tap is
    /// not inherited: it belongs to the agent it was set for.
    pub fn for_agent(&self, agent: AgentRef) -> Self {
        Self::new(agent, self.tx.clone())
    }

    /// Sends one event. When nobody listens any more the event is dropped: the agent still
    /// finishes its turn so that the conversation (and transcript) stays consistent.
    pub async fn emit(&self, kind: EventKind) {
        let event = AgentEvent {
            agent: self.agent.clone(),
            kind,
        };
        if let Some(tap) = &self.tap {
            tap.observe(&event);
        }
        let _ = self.tx.send(event).await;
    }
}
