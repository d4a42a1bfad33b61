//! One agent's runs, one after another: whether a run is going on, where its messages go,
//! and when a message must start a new run instead.
//!
//! Delivery and the end of a run meet under one lock, so a message is either in the inbox of a
//! run that will still read it, or it starts a new run: never dropped between a run's last look
//! at its inbox and its end.

use crate::inbox::Inbox;
use fleet_protocol::Message;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// A run that is going on: where its messages go and what stops it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub inbox: Arc<Inbox>,
    pub cancel: CancellationToken,
}

impl Run {
    pub fn new(cancel: CancellationToken) -> Self {
        Self {
            inbox: Arc::new(Inbox::new()),
            cancel,
        }
    }
}

#[derive(Debug)]
enum Life {
    Running(Run),
    /// The run has read its last message and is ending (its task finishing); a message now
    /// waits for it to stop, then starts a new run.
    Closing(Vec<Message>),
    /// Holds what a stopped run left unread, for the next run.
    Stopped(Vec<Message>),
}

/// What happened to a message.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// In the inbox of the running agent; it reads it at its next turn.
    Queued,
    /// The agent had stopped: it is now claimed for a new run, which the caller must start
    /// (or hand back with [`Lifecycle::release`]).
    Resume(Run),
    /// The agent was stopped and its run is still winding down; try again once it has.
    WindingDown,
}

#[derive(Debug)]
pub(crate) struct Lifecycle {
    life: Mutex<Life>,
    stopped: Notify,
}

impl Lifecycle {
    pub fn running(run: Run) -> Self {
        Self {
            life: Mutex::new(Life::Running(run)),
            stopped: Notify::new(),
        }
    }

    /// Queues `message` for the running agent, or claims the stopped agent for a new run.
    pub fn deliver(&self, message: Message) -> Delivery {
        let mut life = self.lock();
        match &*life {
            Life::Running(run) if run.cancel.is_cancelled() => Delivery::WindingDown,
            Life::Closing(_) => Delivery::WindingDown,
            Life::Running(run) => {
                run.inbox.push(message);
                Delivery::Queued
            }
            Life::Stopped(unread) => {
                let run = Run::new(CancellationToken::new());
                // Messages queued before the last run was stopped come after this one: they
                // were acknowledged, so the next run reads them.
                for earlier in unread.iter().cloned() {
                    run.inbox.push(earlier);
                }
                *life = Life::Running(run.clone());
                Delivery::Resume(run)
            }
        }
    }

    /// Hands back a claim that could not be started, with what its inbox holds.
    pub fn release(&self, run: &Run) {
        *self.lock() = Life::Stopped(run.inbox.drain());
        self.stopped.notify_waiters();
    }

    /// Closes the current run to messages unless some are waiting that it should still read
    /// (it was not stopped, and its inbox is not empty): then `false`, and the run must go
    /// on. A stopped run's unread messages are kept for the next run. After closing, the run
    /// ends with [`Self::set_stopped`].
    pub fn try_close(&self, run: &Run) -> bool {
        let mut life = self.lock();
        if !run.cancel.is_cancelled() && !run.inbox.is_empty() {
            return false;
        }
        *life = Life::Closing(run.inbox.drain());
        true
    }

    /// The run is over; a message now resumes the agent.
    pub fn set_stopped(&self) {
        let mut life = self.lock();
        let unread = match std::mem::replace(&mut *life, Life::Stopped(Vec::new())) {
            Life::Closing(unread) | Life::Stopped(unread) => unread,
            Life::Running(run) => run.inbox.drain(),
        };
        *life = Life::Stopped(unread);
        drop(life);
        self.stopped.notify_waiters();
    }

    /// Returns once the agent is not running.
    pub async fn wait_stopped(&self) {
        loop {
            let notified = self.stopped.notified();
            tokio::pin!(notified);
            // Registered before the check, so a close in between still wakes us.
            notified.as_mut().enable();
            if !self.is_running() {
                return;
            }
            notified.await;
        }
    }

    /// Running or still ending.
    pub fn is_running(&self) -> bool {
        !matches!(&*self.lock(), Life::Stopped(_))
    }

    fn lock(&self) -> MutexGuard<'_, Life> {
        self.life
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn fresh() -> (Lifecycle, Run) {
        let run = Run::new(CancellationToken::new());
        (Lifecycle::running(run.clone()), run)
    }

    #[test]
    fn a_running_agent_queues_and_cannot_close_with_mail_waiting() {
        let (life, run) = fresh();
        assert!(matches!(
            life.deliver(Message::user_text("a")),
            Delivery::Queued
        ));
        assert!(!life.try_close(&run), "the message must still be read");
        assert_eq!(run.inbox.drain().len(), 1);
        assert!(life.try_close(&run));
        assert!(life.is_running(), "closing is not stopped yet");
    }

    #[test]
    fn a_stopped_agent_is_claimed_once() {
        let (life, run) = fresh();
        assert!(life.try_close(&run));
        life.set_stopped();
        let Delivery::Resume(next) = life.deliver(Message::user_text("a")) else {
            panic!("a stopped agent is resumed");
        };
        // The claim is a running run: a second message queues for it.
        assert!(matches!(
            life.deliver(Message::user_text("b")),
            Delivery::Queued
        ));
        assert_eq!(next.inbox.drain().len(), 1);
        life.release(&next);
        assert!(!life.is_running());
    }

    #[test]
    fn messages_a_stopped_run_left_unread_go_to_the_next_run() {
        let (life, run) = fresh();
        assert!(matches!(
            life.deliver(Message::user_text("early")),
            Delivery::Queued
        ));
        run.cancel.cancel();
        assert!(life.try_close(&run));
        life.set_stopped();
        let Delivery::Resume(next) = life.deliver(Message::user_text("late")) else {
            panic!("a stopped agent is resumed");
        };
        let texts: Vec<String> = next.inbox.drain().iter().map(Message::text).collect();
        assert_eq!(
            texts,
            ["early"],
            "the queued message was kept; `late` is the prompt"
        );
    }

    #[tokio::test]
    async fn a_message_to_a_stopped_run_waits_until_it_has_wound_down() {
        let (life, run) = fresh();
        run.cancel.cancel();
        assert!(matches!(
            life.deliver(Message::user_text("a")),
            Delivery::WindingDown
        ));
        assert!(run.inbox.is_empty(), "a stopped run would never read it");
        let life = Arc::new(life);
        let waiter = {
            let life = life.clone();
            tokio::spawn(async move { life.wait_stopped().await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        assert!(life.try_close(&run), "a cancelled run closes at once");
        life.set_stopped();
        waiter.await.expect("the waiter wakes");
        assert!(matches!(
            life.deliver(Message::user_text("a")),
            Delivery::Resume(_)
        ));
    }
}
