//! A session: one agent in its own task, fed prompts, handing back its event stream.
//!
//! With subagents (a [`Spawner`]), a run that leaves background tasks behind is not the end:
//! the session waits for them, and each time notifications arrive it runs the agent again
//! with them, so the agent can react before the session ends (`-p` prints the result only
//! after that).

use crate::agent::Agent;
use crate::crash::SessionCrash;
use crate::settle::Settle;
use crate::sink::EventSink;
use crate::subagent::Spawner;
use fleet_protocol::{AgentEvent, EventKind, KilledBy, Message, SessionState};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Events are buffered this deep before the agent waits for its consumer.
///
/// Deep enough to ride out a reader that falls behind for a moment in a wide fan-out: an
/// agent that waits to send holds all it has (its conversation, its request, its task), many
/// times the event it waits with. A 10,000-agent fan-out whose reader also wrote a line per
/// event to a file peaked at 163–282 MB in 4.3–4.5 s with 256, and at 152–177 MB in 3.3–3.6 s
/// with 4096 (docs/memory-profile.md).
pub const EVENT_BUFFER: usize = 4096;

#[derive(Debug)]
pub struct Session;

/// The running session: its events, a way to interrupt it, and the agent back at the end.
#[derive(Debug)]
pub struct SessionHandle {
    pub events: mpsc::Receiver<AgentEvent>,
    pub cancel: CancellationToken,
    pub task: JoinHandle<Agent>,
    /// The task's outcome once [`Self::recv`] has seen it end.
    pub(crate) ended: Option<Result<Agent, SessionCrash>>,
    /// For the error result of a crashed session, which names how to resume it.
    pub(crate) session_id: String,
    /// The crash's error result has been handed out (it is sent once, last).
    pub(crate) crash_reported: bool,
}

impl SessionHandle {
    pub(crate) fn new(
        events: mpsc::Receiver<AgentEvent>,
        cancel: CancellationToken,
        task: JoinHandle<Agent>,
        session_id: String,
    ) -> Self {
        Self {
            events,
            cancel,
            task,
            ended: None,
            session_id,
            crash_reported: false,
        }
    }

    /// The next event, or `None` once the session has ended and everything it sent has been
    /// read. A spawner keeps a sender of the channel, so the channel alone never closes: the
    /// session task ending is what ends the stream. A session task that crashed (a panic no
    /// guard caught) ends the stream with one error result of the main agent, so that every
    /// front end reports a failure rather than a silent, successful end.
    pub async fn recv(&mut self) -> Option<AgentEvent> {
        if self.ended.is_none() {
            tokio::select! {
                event = self.events.recv() => {
                    if event.is_some() {
                        return event;
                    }
                    // Every sender is gone, the task's own among them: it is ending.
                    let ended = (&mut self.task).await;
                    self.ended = Some(ended.map_err(SessionCrash::from_join));
                }
                ended = &mut self.task => {
                    self.ended = Some(ended.map_err(SessionCrash::from_join));
                    self.events.close();
                }
            }
        }
        if let Some(event) = self.events.recv().await {
            return Some(event);
        }
        match &self.ended {
            Some(Err(crash)) if !self.crash_reported => {
                self.crash_reported = true;
                tracing::error!("the session crashed: {crash}");
                Some(crash.result_event(&self.session_id))
            }
            _ => None,
        }
    }

    /// Why the session task ended without its agent, once [`Self::recv`] has seen it end so.
    pub fn crash(&self) -> Option<&SessionCrash> {
        self.ended.as_ref().and_then(|ended| ended.as_ref().err())
    }

    /// The session's id (what `--resume` takes).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Waits for the session task and returns the agent, or why it ended without one.
    pub async fn finish(self) -> Result<Agent, SessionCrash> {
        match self.ended {
            Some(ended) => ended,
            None => self.task.await.map_err(SessionCrash::from_join),
        }
    }
}

impl Session {
    /// Starts `agent` on every prompt `prompts` yields, one run after another, and stops when
    /// the prompts end or the session is cancelled. The first event is `Started`; each run
    /// ends with its own `Finished`.
    pub fn spawn(agent: Agent, prompts: mpsc::Receiver<Message>) -> SessionHandle {
        let (sink, events) = EventSink::channel(EVENT_BUFFER);
        Self::spawn_with(agent, prompts, sink, events, None)
    }

    /// Like [`Self::spawn`], on a channel made beforehand (the spawner reports into it too),
    /// settling the main agent's background tasks after each run.
    pub fn spawn_with(
        mut agent: Agent,
        mut prompts: mpsc::Receiver<Message>,
        sink: EventSink,
        events: mpsc::Receiver<AgentEvent>,
        spawner: Option<Arc<Spawner>>,
    ) -> SessionHandle {
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let session_id = agent.session_id().to_string();
        let task = tokio::spawn(async move {
            let _watchdog = watch(&sink);
            let turns = crate::controls::Turns::new(&agent, spawner.as_ref());
            sink.emit(EventKind::Started(info(&agent, spawner.as_deref())))
                .await;
            let mut start_context = crate::hooks::turn::session_start(&agent, &sink, &token).await;
            loop {
                let prompt = tokio::select! {
                    biased;
                    _ = token.cancelled() => break,
                    prompt = prompts.recv() => prompt,
                };
                let Some(prompt) = prompt else { break };
                let prompt = crate::hooks::turn::with_context(prompt, start_context.take());
                sink.emit(EventKind::SessionState(SessionState::Running))
                    .await;
                // An interrupt cancels this turn only; the session waits for the next prompt.
                let turn = turns.begin(&token);
                agent.run(prompt, &sink, &turn).await;
                if let Some(spawner) = &spawner {
                    settle(&mut agent, spawner, &sink, &turn, true).await;
                }
                turns.end();
                // Idle only now: until the background tasks have reported, another run is owed.
                sink.emit(EventKind::SessionState(SessionState::Idle)).await;
                if token.is_cancelled() {
                    break;
                }
            }
            wind_down(&agent, spawner.as_deref(), &sink).await;
            agent
        });
        SessionHandle::new(events, cancel, task, session_id)
    }

    /// Starts `agent` on a single prompt.
    pub fn spawn_one(agent: Agent, prompt: Message) -> SessionHandle {
        let (tx, rx) = mpsc::channel(1);
        // The receiver is alive and the buffer empty, so this cannot fail.
        let _ = tx.try_send(prompt);
        Self::spawn(agent, rx)
    }
}

/// Starts the session's watchdog reporter; it stops when the guard drops, however the session
/// task ends.
pub(crate) fn watch(sink: &EventSink) -> tokio_util::sync::DropGuard {
    let stop = CancellationToken::new();
    sink.watchdog().spawn_reporter(sink.sender(), stop.clone());
    stop.drop_guard()
}

/// The end of a session: whoever is still a member of its team is stopped now, like any
/// background task still running; the tree's totals are reported, and SessionEnd hooks run.
pub(crate) async fn wind_down(agent: &Agent, spawner: Option<&Spawner>, sink: &EventSink) {
    if let Some(spawner) = spawner {
        spawner.stop_team().await;
        spawner.tasks().stop_all(KilledBy::User).await;
        sink.emit(EventKind::TreeTotals(spawner.ledger().report()))
            .await;
    }
    crate::hooks::turn::session_end(agent, "other", sink).await;
}

/// Runs the main agent again on its background tasks' notifications and its mail: until
/// none is left or the session is cancelled (`wait_for_tasks`), or only on what is already
/// waiting (an attended session, where the person may type meanwhile).
pub(crate) async fn settle(
    agent: &mut Agent,
    spawner: &Spawner,
    sink: &EventSink,
    cancel: &CancellationToken,
    wait_for_tasks: bool,
) {
    let announce = |agent: &Agent| info(agent, Some(spawner));
    Settle {
        owner: "main",
        tasks: spawner.tasks(),
        inbox: spawner.main_inbox(),
        sink,
        cancel,
        announce: Some(&announce),
        team: Some(spawner),
        wait_for_tasks,
    }
    .run(agent, |_| {})
    .await;
}

/// What `Started` reports: the agent's setup, and the agent types it can start — none when
/// the Agent tool is not among its tools (`--tools ""`, `--disallowedTools Agent`), since
/// it then cannot start any.
pub(crate) fn info(agent: &Agent, spawner: Option<&Spawner>) -> fleet_protocol::SessionInfo {
    let mut info = agent.session_info();
    if let Some(spawner) = spawner {
        if info.tools.iter().any(|tool| tool == "Agent") {
            info.agents = spawner
                .agents()
                .names()
                .into_iter()
                .map(str::to_string)
                .collect();
        }
        info.skills = spawner.settings().skill_names();
    }
    info
}
