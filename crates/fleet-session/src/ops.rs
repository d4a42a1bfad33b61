//! The session's input queue: every way a front end steers a running session is an [`Op`]
//! sent through an [`OpSender`]. The output is the session's `AgentEvent` stream (a
//! [`fleet_runtime::SessionHandle`]); together they are the queue pair every front end uses.
//!
//! A small task (the pump) owns the session's prompt channel and the handles that steer it:
//! prompts go to the main agent in the order sent, and the other ops act at once — an
//! interrupt is never stuck behind a prompt waiting for room. Ops that answer (a new model, a
//! stopped task) carry a reply channel; [`OpSender`]'s methods wrap them. When every
//! `OpSender` is gone the pump ends, the prompt channel closes, and the session ends after
//! its turn and its background tasks, as it did when the prompt channel closed. When the
//! session ends first, the pump ends with it and every later op is refused
//! ([`SessionEnded`]).
//!
//! Prompts are bounded: at most [`PROMPT_ROOM`] sent through [`OpSender::prompt`] wait in the
//! pump at once, and the next `prompt` waits for room, so a host flooding stdin is slowed to
//! the session's pace instead of growing its memory. The other ops are few and small, and
//! never wait behind prompts.

use fleet_protocol::Message;
use fleet_runtime::approval::Approval;
use fleet_runtime::controls::{ControlError, SessionControls, StoppedTask};
use fleet_runtime::subagent::LeadMessageError;
use fleet_runtime::Spawner;
use fleet_tools::permissions::PermissionMode;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

/// How many prompts may wait in the pump for the main agent before `prompt` waits for room.
pub const PROMPT_ROOM: usize = 16;

/// An op in the queue, with the room a prompt holds until the pump hands it on.
#[derive(Debug)]
struct Queued {
    op: Op,
    _room: Option<OwnedSemaphorePermit>,
}

/// One thing a front end asks of the running session.
#[derive(Debug)]
pub enum Op {
    /// A user message for the main agent, run after the ones before it.
    Prompt(Message),
    /// `/compact`: summarise the conversation so far, keeping `focus` in view.
    Compact { focus: Option<String> },
    /// Stop the turn now running (its background tasks run on).
    Interrupt,
    /// Move the main agent's foreground subagents and Bash commands to the background
    /// (Ctrl+B); the reply says how many moved.
    Background {
        reply: Option<oneshot::Sender<usize>>,
    },
    /// Use `model` from the next request on (`None` or `default`: the starting model); the
    /// reply is the model id that will be used.
    SetModel {
        model: Option<String>,
        reply: Option<oneshot::Sender<Result<String, ControlError>>>,
    },
    /// Change the main agent's permission mode.
    SetPermissionMode {
        mode: PermissionMode,
        reply: Option<oneshot::Sender<Result<PermissionMode, ControlError>>>,
    },
    /// Stop a background task or teammate, as TaskStop does.
    StopTask {
        task_id: String,
        reply: Option<oneshot::Sender<Result<StoppedTask, ControlError>>>,
    },
    /// A message from the lead (the person) to a background agent or teammate.
    MessageTask {
        task_id: String,
        text: String,
        reply: Option<oneshot::Sender<Result<String, LeadMessageError>>>,
    },
    /// The answer to permission question `id`, for the front end's [`Answers`].
    Answer { id: u64, approval: Approval },
}

/// Whoever asked a permission question by id (the UI's approver) and takes its answer.
pub trait Answers: Send + Sync {
    /// Hands `approval` to question `id`; false when no such question waits (withdrawn, or
    /// answered already).
    fn answer(&self, id: u64, approval: Approval) -> bool;
}

/// Why an op could not be delivered: the session has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionEnded;

/// Sends [`Op`]s to one running session; cheap to clone.
#[derive(Debug, Clone)]
pub struct OpSender {
    tx: mpsc::UnboundedSender<Queued>,
    room: Arc<Semaphore>,
}

impl OpSender {
    /// A sender whose session is already gone: every op is refused. Holding it in place of
    /// a live one lets that session end.
    pub fn closed() -> Self {
        let (tx, _) = mpsc::unbounded_channel();
        Self {
            tx,
            room: Arc::new(Semaphore::new(PROMPT_ROOM)),
        }
    }

    /// Resolves once the session takes no more ops (it ended, or its pump did).
    pub async fn session_ended(&self) {
        self.tx.closed().await;
    }

    /// Queues `op` at once. A prompt sent this way takes no room (a person typing is
    /// slower than any session); programs feeding prompts use [`prompt`](Self::prompt).
    pub fn send(&self, op: Op) -> Result<(), SessionEnded> {
        self.queue(op, None)
    }

    fn queue(&self, op: Op, room: Option<OwnedSemaphorePermit>) -> Result<(), SessionEnded> {
        self.tx
            .send(Queued { op, _room: room })
            .map_err(|_| SessionEnded)
    }

    /// Queues a prompt once there is room for it (see the module doc); refused when the
    /// session ends meanwhile.
    pub async fn prompt(&self, message: Message) -> Result<(), SessionEnded> {
        let room = tokio::select! {
            room = self.room.clone().acquire_owned() => room.map_err(|_| SessionEnded)?,
            () = self.tx.closed() => return Err(SessionEnded),
        };
        self.queue(Op::Prompt(message), Some(room))
    }

    /// Interrupts the turn now running.
    pub fn interrupt(&self) -> Result<(), SessionEnded> {
        self.send(Op::Interrupt)
    }

    /// Switches the model; the id that will be used.
    pub async fn set_model(
        &self,
        model: Option<String>,
    ) -> Result<Result<String, ControlError>, SessionEnded> {
        let (reply, answer) = oneshot::channel();
        self.send(Op::SetModel {
            model,
            reply: Some(reply),
        })?;
        answer.await.map_err(|_| SessionEnded)
    }

    /// Changes the permission mode.
    pub async fn set_permission_mode(
        &self,
        mode: PermissionMode,
    ) -> Result<Result<PermissionMode, ControlError>, SessionEnded> {
        let (reply, answer) = oneshot::channel();
        self.send(Op::SetPermissionMode {
            mode,
            reply: Some(reply),
        })?;
        answer.await.map_err(|_| SessionEnded)
    }

    /// Stops a background task or teammate.
    pub async fn stop_task(
        &self,
        task_id: String,
    ) -> Result<Result<StoppedTask, ControlError>, SessionEnded> {
        let (reply, answer) = oneshot::channel();
        self.send(Op::StopTask {
            task_id,
            reply: Some(reply),
        })?;
        answer.await.map_err(|_| SessionEnded)
    }

    /// Sends the lead's message to a background agent or teammate.
    pub async fn message_task(
        &self,
        task_id: String,
        text: String,
    ) -> Result<Result<String, LeadMessageError>, SessionEnded> {
        let (reply, answer) = oneshot::channel();
        self.send(Op::MessageTask {
            task_id,
            text,
            reply: Some(reply),
        })?;
        answer.await.map_err(|_| SessionEnded)
    }

    /// Moves the foreground work to the background; how many calls moved.
    pub async fn background(&self) -> Result<usize, SessionEnded> {
        let (reply, answer) = oneshot::channel();
        self.send(Op::Background { reply: Some(reply) })?;
        answer.await.map_err(|_| SessionEnded)
    }
}

/// What the pump steers the session with.
pub(crate) struct Steering {
    pub controls: Option<SessionControls>,
    pub spawner: Weak<Spawner>,
    pub answers: Option<Arc<dyn Answers>>,
}

/// Starts the pump feeding `prompts`; the returned sender is the session's way in.
pub(crate) fn pump(prompts: mpsc::Sender<Message>, steering: Steering) -> OpSender {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(run(rx, prompts, steering));
    OpSender {
        tx,
        room: Arc::new(Semaphore::new(PROMPT_ROOM)),
    }
}

async fn run(
    mut ops: mpsc::UnboundedReceiver<Queued>,
    prompts: mpsc::Sender<Message>,
    steering: Steering,
) {
    // Each prompt keeps its room until it is handed on.
    let mut waiting: VecDeque<(Message, Option<OwnedSemaphorePermit>)> = VecDeque::new();
    loop {
        tokio::select! {
            biased;
            queued = ops.recv() => match queued {
                Some(Queued { op: Op::Prompt(message), _room: room }) => {
                    waiting.push_back((message, room));
                }
                Some(Queued { op: Op::Compact { focus }, _room: room }) => {
                    waiting.push_back((compact_prompt(focus), room));
                }
                Some(Queued { op, .. }) => steer(op, &steering),
                None => break,
            },
            permit = prompts.reserve(), if !waiting.is_empty() => match permit {
                Ok(permit) => {
                    if let Some((message, _room)) = waiting.pop_front() {
                        permit.send(message);
                    }
                }
                // The session no longer takes prompts: it has ended.
                Err(_) => return,
            },
            // The session has ended: from now on every op is refused, so a front end feeding
            // it (the stream-json reader) learns at its next message.
            () = prompts.closed() => return,
        }
    }
    // Every sender is gone: what was sent still goes, then the prompt channel closes.
    for (message, _room) in waiting {
        if prompts.send(message).await.is_err() {
            break;
        }
    }
}

/// `/compact` as the agent takes it: a user message it recognises.
fn compact_prompt(focus: Option<String>) -> Message {
    let text = match focus.as_deref().map(str::trim) {
        Some(focus) if !focus.is_empty() => format!("/compact {focus}"),
        _ => "/compact".to_string(),
    };
    Message::user_text(text)
}

/// Does one op that is not a prompt. Ops that wait (moving calls, stopping a task, mail)
/// run beside the pump, so the next op is not held up.
fn steer(op: Op, steering: &Steering) {
    let controls = steering.controls.clone();
    match op {
        Op::Prompt(_) | Op::Compact { .. } => {}
        Op::Interrupt => {
            if let Some(controls) = &controls {
                controls.interrupt();
            }
        }
        Op::Background { reply } => {
            tokio::spawn(async move {
                let moved = match controls {
                    Some(controls) => controls.move_to_background().await,
                    None => 0,
                };
                if let Some(reply) = reply {
                    let _ = reply.send(moved);
                }
            });
        }
        Op::SetModel { model, reply } => {
            let result = match &controls {
                Some(controls) => controls.set_model(model.as_deref()),
                None => Err(ControlError::NotStarted),
            };
            if let Some(reply) = reply {
                let _ = reply.send(result);
            }
        }
        Op::SetPermissionMode { mode, reply } => {
            let result = match &controls {
                Some(controls) => controls.set_permission_mode(mode),
                None => Err(ControlError::NotStarted),
            };
            if let Some(reply) = reply {
                let _ = reply.send(result);
            }
        }
        Op::StopTask { task_id, reply } => {
            tokio::spawn(async move {
                let result = match controls {
                    Some(controls) => controls.stop_task(&task_id).await,
                    None => Err(ControlError::NotStarted),
                };
                if let Some(reply) = reply {
                    let _ = reply.send(result);
                }
            });
        }
        Op::MessageTask {
            task_id,
            text,
            reply,
        } => {
            let spawner = steering.spawner.upgrade();
            tokio::spawn(async move {
                let result = match spawner {
                    Some(spawner) => spawner.send_from_lead(&task_id, &text).await,
                    None => Err(LeadMessageError::SessionEnded),
                };
                if let Some(reply) = reply {
                    let _ = reply.send(result);
                }
            });
        }
        Op::Answer { id, approval } => {
            if let Some(answers) = &steering.answers {
                answers.answer(id, approval);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn alone() -> Steering {
        Steering {
            controls: None,
            spawner: Weak::new(),
            answers: None,
        }
    }

    fn text(message: &Message) -> String {
        serde_json::to_string(message).unwrap()
    }

    #[tokio::test]
    async fn prompts_arrive_in_order_and_the_channel_closes_with_the_last_sender() {
        let (tx, mut rx) = mpsc::channel(1);
        let ops = pump(tx, alone());
        let second = ops.clone();
        ops.prompt(Message::user_text("one")).await.unwrap();
        second
            .send(Op::Compact {
                focus: Some(" the parser ".into()),
            })
            .unwrap();
        ops.prompt(Message::user_text("three")).await.unwrap();
        drop(ops);
        drop(second);
        let mut seen = Vec::new();
        while let Some(message) = rx.recv().await {
            seen.push(text(&message));
        }
        let expected: Vec<String> = ["one", "/compact the parser", "three"]
            .into_iter()
            .map(|t| text(&Message::user_text(t)))
            .collect();
        assert_eq!(seen, expected);
    }

    #[tokio::test]
    async fn an_op_is_not_held_up_by_a_prompt_waiting_for_room() {
        let (tx, mut rx) = mpsc::channel(1);
        let ops = pump(tx, alone());
        for n in 0..3 {
            ops.prompt(Message::user_text(format!("prompt {n}")))
                .await
                .unwrap();
        }
        // Nobody reads the prompts yet, and still the model change is answered.
        let answer = ops.set_model(Some("opus".into())).await.unwrap();
        assert!(matches!(answer, Err(ControlError::NotStarted)));
        assert_eq!(ops.background().await.unwrap(), 0);
        let sent = ops.message_task("t1".into(), "hi".into()).await.unwrap();
        assert!(matches!(sent, Err(LeadMessageError::SessionEnded)));
        drop(ops);
        let mut count = 0;
        while rx.recv().await.is_some() {
            count += 1;
        }
        assert_eq!(count, 3);
    }

    #[tokio::test]
    async fn once_the_session_stops_taking_prompts_every_op_is_refused() {
        let (tx, rx) = mpsc::channel(1);
        let ops = pump(tx, alone());
        drop(rx);
        // The pump notices the session is gone, and the queue closes with it.
        tokio::time::timeout(std::time::Duration::from_secs(30), ops.session_ended())
            .await
            .unwrap();
        assert_eq!(
            ops.prompt(Message::user_text("late")).await,
            Err(SessionEnded)
        );
    }

    #[tokio::test]
    async fn a_closed_sender_refuses_every_op() {
        let ops = OpSender::closed();
        assert_eq!(ops.interrupt(), Err(SessionEnded));
        assert_eq!(ops.set_model(None).await.unwrap_err(), SessionEnded);
    }

    /// A feeder faster than the session waits once [`PROMPT_ROOM`] prompts are queued, and
    /// goes on as the session takes them: memory stays bounded however fast stdin is.
    #[tokio::test]
    async fn a_feeder_waits_for_room_once_the_queue_is_full() {
        let (tx, mut rx) = mpsc::channel(1);
        let ops = pump(tx, alone());
        // One sits in the session's channel, PROMPT_ROOM wait in the pump.
        for n in 0..=PROMPT_ROOM {
            ops.prompt(Message::user_text(format!("p{n}")))
                .await
                .unwrap();
        }
        let blocked = ops.prompt(Message::user_text("one too many"));
        tokio::pin!(blocked);
        // Ops other than prompts still go through while the feeder waits.
        assert_eq!(ops.background().await.unwrap(), 0);
        assert!(futures_poll_once(blocked.as_mut()).await.is_none());
        // The session takes one; the feeder's prompt now fits.
        rx.recv().await.unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(30), blocked)
            .await
            .unwrap()
            .unwrap();
    }

    /// Polls `future` once: `None` when it is still waiting.
    async fn futures_poll_once<F: std::future::Future + Unpin>(future: F) -> Option<F::Output> {
        let mut future = future;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
                std::task::Poll::Ready(out) => Some(out),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }

    struct Recorded(std::sync::Mutex<Vec<u64>>);

    impl Answers for Recorded {
        fn answer(&self, id: u64, _approval: Approval) -> bool {
            self.0.lock().unwrap().push(id);
            true
        }
    }

    #[tokio::test]
    async fn answers_go_to_whoever_asked() {
        let answers = Arc::new(Recorded(Default::default()));
        let (tx, _rx) = mpsc::channel(1);
        let ops = pump(
            tx,
            Steering {
                answers: Some(answers.clone()),
                ..alone()
            },
        );
        ops.send(Op::Answer {
            id: 7,
            approval: Approval::allow(),
        })
        .unwrap();
        // Ops are done in order: once the model change is answered, so is the question.
        let _ = ops.set_model(None).await.unwrap();
        assert_eq!(*answers.0.lock().unwrap(), vec![7]);
    }
}
