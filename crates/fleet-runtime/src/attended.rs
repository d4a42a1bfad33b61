//! A session with a person at it (the terminal UI). Unlike `-p`, which after each run waits
//! for every background task before it reads the next prompt, an attended session takes up
//! whichever comes first: the person's next prompt, or a background task's notification (or
//! a teammate's mail). So the person can go on typing while agents work, and a notification
//! that arrives after Esc stopped the turn still gets its own run.

use crate::agent::Agent;
use crate::session::{info, settle, wind_down, Session, SessionHandle};
use crate::sink::EventSink;
use crate::subagent::Spawner;
use fleet_protocol::{AgentEvent, EventKind, Message, SessionState};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the session does next.
enum Next {
    Prompt(Message),
    /// A notification or mail is waiting for the main agent.
    Mail,
    End,
}

impl Session {
    /// Like [`Session::spawn_with`], for a session a person attends: prompts and
    /// notifications are taken in the order they come, each in a turn of its own (so Esc
    /// stops that turn only).
    pub fn spawn_attended(
        mut agent: Agent,
        mut prompts: mpsc::Receiver<Message>,
        sink: EventSink,
        events: mpsc::Receiver<AgentEvent>,
        spawner: Arc<Spawner>,
    ) -> SessionHandle {
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let session_id = agent.session_id().to_string();
        let task = tokio::spawn(async move {
            let _watchdog = crate::session::watch(&sink);
            let turns = crate::controls::Turns::new(&agent, Some(&spawner));
            sink.emit(EventKind::Started(info(&agent, Some(&spawner))))
                .await;
            let mut start_context = crate::hooks::turn::session_start(&agent, &sink, &token).await;
            loop {
                let next = tokio::select! {
                    biased;
                    _ = token.cancelled() => Next::End,
                    prompt = prompts.recv() => prompt.map_or(Next::End, Next::Prompt),
                    _ = mail_waiting(&spawner) => Next::Mail,
                };
                let prompt = match next {
                    Next::End => break,
                    Next::Prompt(prompt) => Some(prompt),
                    Next::Mail => None,
                };
                sink.emit(EventKind::SessionState(SessionState::Running))
                    .await;
                let member = crate::teams::membership(&spawner);
                if let Some(member) = &member {
                    member.turn_started();
                }
                let turn = turns.begin(&token);
                if let Some(prompt) = prompt {
                    let prompt = crate::hooks::turn::with_context(prompt, start_context.take());
                    agent.run(prompt, &sink, &turn).await;
                }
                // What is already waiting is answered now; tasks still running report later.
                Box::pin(settle(&mut agent, &spawner, &sink, &turn, false)).await;
                turns.end();
                if let Some(member) = &member {
                    member.turn_ended(&last_text(&agent)).await;
                }
                sink.emit(EventKind::SessionState(SessionState::Idle)).await;
                if token.is_cancelled() || member.is_some_and(|m| m.exiting()) {
                    break;
                }
            }
            wind_down(&agent, Some(&spawner), &sink).await;
            agent
        });
        SessionHandle::new(events, cancel, task, session_id)
    }
}

/// Resolves once something waits for the main agent: a task's notification, a message, or
/// team mail.
async fn mail_waiting(spawner: &Spawner) {
    tokio::select! {
        _ = spawner.main_inbox().wait() => {}
        _ = spawner.team_inbox().wait() => {}
    }
}

/// The text of the conversation's last assistant message: what a pane teammate's idle
/// notification tells the lead.
fn last_text(agent: &Agent) -> String {
    agent
        .messages()
        .iter()
        .rev()
        .find(|m| m.role == fleet_protocol::Role::Assistant)
        .map(|m| m.text())
        .unwrap_or_default()
}
