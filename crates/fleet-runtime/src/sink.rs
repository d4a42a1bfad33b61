//! Where an agent's events go. A sink stamps every event with the emitting agent, so that a
//! subagent's events forwarded through its parent's sink still say who they came from.

use crate::watchdog::{WaitingFor, Watchdog};
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
    /// The session's watchdog, shared by every agent on the stream.
    watchdog: Watchdog,
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
    /// A sink with a watchdog of its own (`FLEET_WATCHDOG_MS`); the sinks made from it with
    /// [`Self::for_agent`] share it.
    pub fn new(agent: AgentRef, tx: mpsc::Sender<AgentEvent>) -> Self {
        Self {
            agent,
            tx,
            tap: None,
            watchdog: Watchdog::from_env().unwrap_or_default(),
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
        Self {
            agent,
            tx: self.tx.clone(),
            tap: None,
            watchdog: self.watchdog.clone(),
        }
    }

    /// Where this stream's agents register what they wait for.
    pub fn watchdog(&self) -> &Watchdog {
        &self.watchdog
    }

    /// Registers that this sink's agent waits for `what` until the guard drops.
    pub fn waiting_for(&self, what: WaitingFor) -> crate::watchdog::WaitGuard {
        self.watchdog.watch(&self.agent, what)
    }

    /// Room for one event on the stream, waited for without giving anything up if the wait
    /// is abandoned (unlike [`Self::emit`], whose event is lost with its future). `None` when
    /// nobody listens any more.
    pub async fn reserve(&self) -> Option<Room<'_>> {
        let permit = match self.tx.try_reserve() {
            Ok(permit) => permit,
            Err(mpsc::error::TrySendError::Closed(())) => return None,
            Err(mpsc::error::TrySendError::Full(())) => {
                let _wait = self.waiting_for(WaitingFor::Output);
                self.tx.reserve().await.ok()?
            }
        };
        Some(Room { sink: self, permit })
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
        // The reader is usually ahead; when it is not, the wait is the watchdog's to see.
        // The budget is spent as a waiting send would: an agent whose reader keeps up must
        // still yield now and then, or thousands of them race ahead of their reader at once.
        tokio::task::consume_budget().await;
        let event = match self.tx.try_send(event) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => return,
            Err(mpsc::error::TrySendError::Full(event)) => event,
        };
        let _wait = self.waiting_for(WaitingFor::Output);
        let _ = self.tx.send(event).await;
    }
}

/// Room for one event on a sink's stream (see [`EventSink::reserve`]).
pub struct Room<'a> {
    sink: &'a EventSink,
    permit: mpsc::Permit<'a, AgentEvent>,
}

impl std::fmt::Debug for Room<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room")
            .field("agent", &self.sink.agent)
            .finish()
    }
}

impl Room<'_> {
    /// Sends the event into the room held; it cannot wait or fail.
    pub fn send(self, kind: EventKind) {
        let event = AgentEvent {
            agent: self.sink.agent.clone(),
            kind,
        };
        if let Some(tap) = &self.sink.tap {
            tap.observe(&event);
        }
        self.permit.send(event);
    }
}
