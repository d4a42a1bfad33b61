//! Messages waiting for an agent: task notifications now, teammate messages later.
//!
//! Whoever delivers pushes; the agent drains the queue before each model request, so what
//! arrived while it was busy reaches the model at the next turn, in arrival order. A waiter
//! (the session, between runs) can sleep until something arrives.

use fleet_protocol::Message;
use std::collections::VecDeque;
use std::sync::Mutex;
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct Inbox {
    queue: Mutex<VecDeque<Message>>,
    arrived: Notify,
}

impl Inbox {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, message: Message) {
        self.lock().push_back(message);
        // `notify_one` keeps a permit when nobody waits yet, so a push between a waiter's check
        // and its sleep is not missed.
        self.arrived.notify_one();
    }

    /// Everything waiting, oldest first.
    pub fn drain(&self) -> Vec<Message> {
        self.lock().drain(..).collect()
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

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Message>> {
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
