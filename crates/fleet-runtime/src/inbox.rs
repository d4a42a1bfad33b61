//! Messages waiting for an agent: task notifications now, teammate messages later.
//!
//! Whoever delivers pushes; the agent drains the queue before each model request, so what
//! arrived while it was busy reaches the model at the next turn, in arrival order. A waiter
//! (the session, between runs) can sleep until something arrives.
//!
//! A message taken from a durable mailbox carries an acknowledgement and the mail's ids. Whoever
//! takes it in runs the acknowledgement once the message is safely recorded ([`Inbox::drain`]
//! runs it at once; the lead's settle loop, after the run that read it): until then the mailbox
//! still holds the mail, so a crash before that point delivers it again after a resume instead
//! of losing it.

use fleet_protocol::Message;
use std::collections::VecDeque;
use std::sync::Mutex;
use tokio::sync::Notify;

/// Run once the message it came with has been taken into a conversation.
pub type Ack = Box<dyn FnOnce() + Send>;

/// One waiting message, with what its source must hear when it is taken in.
struct Waiting {
    message: Message,
    /// The team-mail ids it delivers.
    mail_ids: Vec<String>,
    ack: Option<Ack>,
}

#[derive(Default)]
pub struct Inbox {
    queue: Mutex<VecDeque<Waiting>>,
    arrived: Notify,
}

/// What [`Inbox::take_mail`] returns: the messages, the mail ids they deliver, and the
/// acknowledgements to run once they are safely recorded.
#[derive(Default)]
pub struct Taken {
    pub messages: Vec<Message>,
    pub mail_ids: Vec<String>,
    pub acks: Vec<Ack>,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("waiting", &self.lock().len())
            .finish()
    }
}

impl Inbox {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, message: Message) {
        self.push_inner(Waiting {
            message,
            mail_ids: Vec::new(),
            ack: None,
        });
    }

    /// Pushes team mail (`mail_ids`) whose source must hear when it is taken in (see the
    /// module doc).
    pub fn push_mail(&self, message: Message, mail_ids: Vec<String>, ack: Ack) {
        self.push_inner(Waiting {
            message,
            mail_ids,
            ack: Some(ack),
        });
    }

    /// Everything waiting, with its mail ids and acknowledgements, which the caller runs once
    /// the messages are recorded.
    pub fn take_mail(&self) -> Taken {
        let mut taken = Taken::default();
        for waiting in self.lock().drain(..) {
            taken.messages.push(waiting.message);
            taken.mail_ids.extend(waiting.mail_ids);
            taken.acks.extend(waiting.ack);
        }
        taken
    }

    fn push_inner(&self, waiting: Waiting) {
        self.lock().push_back(waiting);
        // `notify_one` keeps a permit when nobody waits yet, so a push between a waiter's check
        // and its sleep is not missed.
        self.arrived.notify_one();
    }

    /// Everything waiting, oldest first; acknowledgements run as the messages are taken.
    pub fn drain(&self) -> Vec<Message> {
        let taken = self.take_mail();
        for ack in taken.acks {
            ack();
        }
        taken.messages
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Returns once a message has been pushed since the last wake-up (at once if one is
    /// already waiting).
    pub async fn wait(&self) {
        if !self.is_empty() {
            return;
        }
        self.arrived.notified().await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Waiting>> {
        // A panic while holding this lock cannot leave the queue half-changed.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_push_wakes_a_waiter_and_drains_in_order() {
        let inbox = Arc::new(Inbox::new());
        let waiter = {
            let inbox = inbox.clone();
            tokio::spawn(async move {
                inbox.wait().await;
                inbox.drain()
            })
        };
        tokio::task::yield_now().await;
        inbox.push(Message::user_text("one"));
        inbox.push(Message::user_text("two"));
        let mut got = waiter.await.expect("join");
        assert!(!got.is_empty(), "the waiter woke with something to read");
        got.extend(inbox.drain());
        let texts: Vec<String> = got.iter().map(Message::text).collect();
        assert_eq!(texts, ["one", "two"]);
    }

    #[tokio::test]
    async fn a_push_before_waiting_is_not_missed() {
        let inbox = Inbox::new();
        inbox.push(Message::user_text("early"));
        inbox.wait().await;
        assert_eq!(inbox.drain().len(), 1);
    }
}
