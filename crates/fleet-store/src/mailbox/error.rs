//! What can go wrong with an inbox. Every variant names the file involved, so the message says
//! where to look.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum MailboxError {
    /// A filesystem call failed. `action` is a verb phrase ("append to", "lock") so the message
    /// reads as a sentence: `cannot append to /…/alpha.0.jsonl: No space left on device (ENOSPC)`.
    #[error("cannot {action} {}: {}", path.display(), crate::io_reason::IoReason(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The owner would not make a plain file name inside the inbox folder (a `/`, a `..`, a dot
    /// that would blur the `<owner>.<gen>.jsonl` names, or nothing at all).
    #[error(
        "invalid inbox owner {owner:?}: use 1 to 128 letters, digits, '-' or '_', starting with a \
         letter or digit"
    )]
    InvalidOwner { owner: String },

    /// The inbox folder is not the user's own, or others can write to it: whoever can write
    /// there can swap the files, so the inbox is not used.
    #[error("the inbox folder {} is not safe to use: it {problem}", path.display())]
    Unsafe { path: PathBuf, problem: String },

    /// An entry could not be turned into JSON.
    #[error("cannot encode a mail entry for {}: {source}", path.display())]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// The cursor file is not what this module writes. It is only ever replaced by rename, so
    /// this means something else wrote it; fix or delete it (deleting re-delivers what is on
    /// disk, which readers deduplicate by `msg_id`).
    #[error("the inbox cursor {} is damaged ({reason}): delete it to re-read the inbox from its start", path.display())]
    BadCursor { path: PathBuf, reason: String },

    /// An acknowledgement points past the end of the segment it names: it did not come from
    /// this inbox's [`unread`](super::Mailbox::unread).
    #[error("cannot acknowledge up to byte {offset} of {}: the file holds only {len} bytes", path.display())]
    AckBeyondEnd {
        path: PathBuf,
        offset: u64,
        len: u64,
    },
}

impl MailboxError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = MailboxError> = std::result::Result<T, E>;
