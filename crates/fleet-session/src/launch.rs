//! Starting a built main agent: its history, its team taken up again, the socket other
//! sessions reach it on, the session task itself.

use crate::error::{Result, SessionError};
use crate::ops::{pump, Answers, OpSender, Steering};
use crate::transcript::SessionFile;
use fleet_protocol::{AgentEvent, Message};
use fleet_runtime::controls::SessionControls;
use fleet_runtime::{Agent, EventSink, Session, SessionHandle, Spawner};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A built main agent and the parts of the tree it reports into, ready to start.
pub struct Ready {
    pub agent: Agent,
    pub spawner: Arc<Spawner>,
    pub sink: EventSink,
    pub events: mpsc::Receiver<AgentEvent>,
    /// A person is at the terminal: the next prompt need not wait for background tasks
    /// (see `Session::spawn_attended`).
    pub attended: bool,
}

/// A started session.
pub struct Started {
    pub handle: SessionHandle,
    /// The socket other sessions send to; removed when the session ends.
    pub socket: Option<PathBuf>,
}

/// Starts `ready` on the history `session` carries on from, taking up the session's team
/// again, listening for other sessions when teams ask for it, fed by `prompts`.
pub async fn start(
    ready: Ready,
    session: &mut SessionFile,
    prompts: mpsc::Receiver<Message>,
) -> Result<Started> {
    let Ready {
        agent,
        spawner,
        sink,
        events,
        attended,
    } = ready;
    let agent = agent.with_history(session.history());
    // A resumed session takes up its team again: members, their conversations, unread mail.
    if let Some(team) = fleet_runtime::teams::restore_team(&spawner, session.mail_read())
        .await
        .map_err(|e| SessionError::step("bringing the session's team back", e))?
    {
        tracing::info!("resumed team {team}");
    }
    let mut socket = None;
    if fleet_runtime::teams::Teams::of(&spawner).is_some_and(|t| t.settings.listen) {
        match fleet_runtime::teams::listen_uds(&spawner) {
            Ok(path) => socket = Some(path),
            Err(err) => tracing::warn!("not listening for other sessions' messages: {err}"),
        }
    }
    let handle = if attended {
        Session::spawn_attended(agent, prompts, sink, events, spawner)
    } else {
        Session::spawn_with(agent, prompts, sink, events, Some(spawner))
    };
    Ok(Started { handle, socket })
}

/// A running session: the queue pair — [`OpSender`] in, the event stream (the handle) out.
pub struct Running {
    /// The way in: prompts, interrupts, model and mode changes, task control.
    pub ops: OpSender,
    /// The way out: the session's events, its cancel token, and its end.
    pub handle: SessionHandle,
    /// The socket other sessions send to; removed when the session ends.
    pub socket: Option<PathBuf>,
}

/// What steers a session besides its prompts.
#[derive(Default, Clone)]
pub struct Steer {
    /// The handle interrupts, model and mode changes and task stops go through; the same
    /// that was given to the build ([`crate::Host::controls`]). Without it those ops are
    /// refused.
    pub controls: Option<SessionControls>,
    /// The front end's approver, when it answers permission questions by id.
    pub answers: Option<Arc<dyn Answers>>,
}

/// Starts `ready` as [`start`] does, fed by an [`OpSender`] instead of a prompt channel:
/// `Session::start` of the session library. The session ends once every `OpSender` is gone
/// and its last turn (and, unattended, its background tasks) is over.
pub async fn run(ready: Ready, session: &mut SessionFile, steer: Steer) -> Result<Running> {
    let spawner = Arc::downgrade(&ready.spawner);
    let (prompts, prompt_rx) = mpsc::channel::<Message>(PROMPT_BUFFER);
    let Started { handle, socket } = start(ready, session, prompt_rx).await?;
    let ops = pump(
        prompts,
        Steering {
            controls: steer.controls,
            spawner,
            answers: steer.answers,
        },
    );
    Ok(Running {
        ops,
        handle,
        socket,
    })
}

/// Prompts waiting for the session before the pump holds them.
const PROMPT_BUFFER: usize = 16;
