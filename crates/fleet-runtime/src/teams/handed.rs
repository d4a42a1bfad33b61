//! Mail handed to a conversation but not yet taken in. A mailbox entry stays unread until the
//! turn that reads it is committed (so a crash delivers it again); meanwhile its reader must
//! not hand it over twice. Both the lead's poller and a pane teammate's read their inbox this
//! way.

use crate::inbox::Inbox;
use fleet_protocol::Message;
use fleet_store::{Mailbox, Position};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

/// The ids of entries handed over and not yet committed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handed(Arc<Mutex<HashSet<String>>>);

impl Handed {
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.lock().contains(id)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Marks `id` handed; `false` when it already was.
    pub(crate) fn insert(&self, id: &str) -> bool {
        self.lock().insert(id.to_string())
    }

    /// Gives `message` (made of the entries `ids`) to `inbox`. Once the turn that reads it is
    /// committed, `mailbox` is acknowledged up to `upto`, the ids are released, and `then`
    /// runs.
    pub(crate) fn hand_over(
        &self,
        inbox: &Inbox,
        mailbox: &Mailbox,
        upto: Position,
        message: Message,
        ids: Vec<String>,
        then: impl FnOnce() + Send + 'static,
    ) {
        self.lock().extend(ids.iter().cloned());
        let mailbox = mailbox.clone();
        let handed = self.clone();
        inbox.push_mail(
            message,
            ids.clone(),
            Box::new(move || {
                if let Err(err) = super::roster::off_worker(|| mailbox.ack(&upto)) {
                    tracing::warn!(owner = mailbox.owner(), "cannot mark mail read: {err}");
                }
                let mut handed = handed.lock();
                for id in ids {
                    handed.remove(&id);
                }
                drop(handed);
                then();
            }),
        );
    }

    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
