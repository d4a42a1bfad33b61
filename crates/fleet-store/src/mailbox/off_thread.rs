//! The inbox's calls for async code. Each [`Mailbox`] call takes the inbox's lock (an
//! `flock`, which waits while another process holds it) and most end in an `fsync`; run on an
//! async worker thread, they stall every task sharing that thread for as long as the disk or
//! the other process takes. These wrappers run the same calls on tokio's blocking pool and
//! await them, so a team's agents, its socket and its pollers go on meanwhile.
//!
//! The guarantees are the sync calls': `Ok` from [`Mailbox::append_async`] means the entry is
//! on disk. A wrapper whose future is dropped before it finishes does not stop the call: an
//! append then still lands, unacknowledged to its caller, exactly as when a writer is killed
//! after its write; the reader's `msg_id` check absorbs a retried one.

use super::{Mailbox, MailboxError, Position, Result, Unread};
use fleet_protocol::MailEntry;

impl Mailbox {
    /// [`append`](Self::append) on the blocking pool.
    pub async fn append_async(&self, entry: MailEntry) -> Result<()> {
        self.off_thread("append to", move |inbox| inbox.append(&entry))
            .await
    }

    /// [`append_all`](Self::append_all) on the blocking pool.
    pub async fn append_all_async(&self, entries: Vec<MailEntry>) -> Result<()> {
        self.off_thread("append to", move |inbox| inbox.append_all(&entries))
            .await
    }

    /// [`unread`](Self::unread) on the blocking pool.
    pub async fn unread_async(&self) -> Result<Unread> {
        self.off_thread("read", Mailbox::unread).await
    }

    /// [`unread_at_most`](Self::unread_at_most) on the blocking pool.
    pub async fn unread_at_most_async(&self, max: usize) -> Result<Unread> {
        self.off_thread("read", move |inbox| inbox.unread_at_most(max))
            .await
    }

    /// [`ack`](Self::ack) on the blocking pool.
    pub async fn ack_async(&self, upto: Position) -> Result<()> {
        self.off_thread("acknowledge mail in", move |inbox| inbox.ack(&upto))
            .await
    }

    /// [`pending`](Self::pending) on the blocking pool.
    pub async fn pending_async(&self) -> Result<usize> {
        self.off_thread("count the mail in", Mailbox::pending).await
    }

    /// Runs `call` on a clone of this inbox on the blocking pool. A panic in it (a bug) is
    /// an error naming the inbox, not a panic in the caller.
    async fn off_thread<T: Send + 'static>(
        &self,
        action: &'static str,
        call: impl FnOnce(&Mailbox) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inbox = self.clone();
        match tokio::task::spawn_blocking(move || call(&inbox)).await {
            Ok(outcome) => outcome,
            Err(err) => {
                let reason = if err.is_panic() {
                    "the call panicked"
                } else {
                    "the runtime is shutting down"
                };
                Err(MailboxError::io(
                    action,
                    self.dir().join(self.owner()),
                    std::io::Error::other(reason),
                ))
            }
        }
    }
}
