//! Where an agent's events go. A sink stamps every event with the emitting agent, so that a
//! subagent's events forwarded through its parent's sink still say who they came from.

use fleet_protocol::{AgentEvent, AgentRef, EventKind};
use tokio::sync::mpsc;

#[derive(Debug, Clone)]
pub struct EventSink {
    agent: AgentRef,
    tx: mpsc::Sender<AgentEvent>,
}

impl EventSink {
    pub fn new(agent: AgentRef, tx: mpsc::Sender<AgentEvent>) -> Self {
        Self { agent, tx }
    }

    /// A bounded channel and a sink for the main agent. The bound is what keeps memory flat
    /// when a consumer is slow: the agent waits instead of queueing without limit.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<AgentEvent>) {
        let (tx, rx) = mpsc::channel(capacity);
        (Self::new(AgentRef::main(), tx), rx)
    }

    pub fn agent(&self) -> &AgentRef {
        &self.agent
    }

    /// The same channel, stamping events as coming from `agent` (a subagent).
    pub fn for_agent(&self, agent: AgentRef) -> Self {
        Self {
            agent,
            tx: self.tx.clone(),
        }
    }

    /// Sends one event. When nobody listens any more the event is dropped: the agent still
    /// finishes its turn so that the conversation (and transcript) stays consistent.
    pub async fn emit(&self, kind: EventKind) {
        let event = AgentEvent {
            agent: self.agent.clone(),
            kind,
        };
        let _ = self.tx.send(event).await;
    }
}
