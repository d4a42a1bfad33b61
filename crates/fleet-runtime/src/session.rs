//! A session: one agent in its own task, fed prompts, handing back its event stream.

use crate::agent::Agent;
use crate::sink::EventSink;
use fleet_protocol::{AgentEvent, EventKind, Message};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Events are buffered this deep before the agent waits for its consumer.
const EVENT_BUFFER: usize = 256;

#[derive(Debug)]
pub struct Session;

/// The running session: its events, a way to interrupt it, and the agent back at the end.
#[derive(Debug)]
pub struct SessionHandle {
    pub events: mpsc::Receiver<AgentEvent>,
    pub cancel: CancellationToken,
    pub task: JoinHandle<Agent>,
}

impl Session {
    /// Starts `agent` on every prompt `prompts` yields, one run after another, and stops when
    /// the prompts end or the session is cancelled. The first event is `Started`; each run
    /// ends with its own `Finished`.
    pub fn spawn(mut agent: Agent, mut prompts: mpsc::Receiver<Message>) -> SessionHandle {
        let (sink, events) = EventSink::channel(EVENT_BUFFER);
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            sink.emit(EventKind::Started(agent.session_info())).await;
            loop {
                let prompt = tokio::select! {
                    biased;
                    _ = token.cancelled() => break,
                    prompt = prompts.recv() => prompt,
                };
                let Some(prompt) = prompt else { break };
                agent.run(prompt, &sink, &token).await;
                if token.is_cancelled() {
                    break;
                }
            }
            agent
        });
        SessionHandle {
            events,
            cancel,
            task,
        }
    }

    /// Starts `agent` on a single prompt.
    pub fn spawn_one(agent: Agent, prompt: Message) -> SessionHandle {
        let (tx, rx) = mpsc::channel(1);
        // The receiver is alive and the buffer empty, so this cannot fail.
        let _ = tx.try_send(prompt);
        Self::spawn(agent, rx)
    }
}
