//! One durable inbox per team member, safe across threads and processes.
//!
//! # On disk
//!
//! The caller passes a folder (a team's `inboxes/`); each owner has three kinds of files in it:
//!
//! ```text
//! inboxes/
//! ├── alpha.4.jsonl    the active segment: one MailEntry (JSON) per line, appended
//! ├── alpha.cursor     {"segment":4,"offset":1830,"lines":7}: what alpha has consumed
//! └── alpha.lock       empty; flock'ed for the few microseconds of each operation
//! ```
//!
//! The cursor names the active segment, so it is the single switch that compaction flips (see
//! `compact.rs` for why a crash at any step leaves a consistent inbox). It is only ever
//! replaced by rename, never written in place. No cursor file means nothing consumed, segment 0.
//!
//! # Guarantees
//!
//! - **An acknowledged append is never lost.** [`Mailbox::append`] writes whole lines under the
//!   lock and `fdatasync`s before returning `Ok`; a writer killed mid-write leaves a torn last
//!   line, which readers skip with a warning and the next append cuts away (that entry's writer
//!   never got `Ok`, so it retries it).
//! - **Consumption is tracked apart from the entries.** [`Mailbox::unread`] returns what follows
//!   the cursor and a [`Position`]; [`Mailbox::ack`] moves the cursor there durably. A reader
//!   that crashes between the two gets the same entries again.
//! - **Bounded.** When an ack leaves more than [`DEFAULT_COMPACT_AFTER`] bytes consumed and
//!   that is over half the segment, the unconsumed tail moves to a new segment.
//! - **Off the async threads.** Async code calls the `*_async` twins ([`Mailbox::append_async`],
//!   [`Mailbox::unread_async`], [`Mailbox::ack_async`], …), which run the locked, fsynced call
//!   on tokio's blocking pool; see `off_thread.rs`.
//! - **The user's only.** Files are made `0600` and never opened through a symbolic link
//!   (`O_NOFOLLOW`); a folder made here is `0700`, and an inbox whose folder belongs to another
//!   user or that others can write to is refused ([`MailboxError::Unsafe`]).
//! - **Waiting without a timer.** [`Mailbox::wait`] sleeps until an append here or in another
//!   process (inotify) may have brought mail; see `wake.rs`.
//!
//! # Delivery contract: at least once from the file, exactly once by the consumer
//!
//! Between handing entries to the conversation and acknowledging them a reader can crash; the
//! file then delivers them again. So the consumer records the `msg_id`s it committed (in its
//! transcript, say) *before* calling `ack`, and on restart skips entries whose `msg_id` it has
//! already committed ([`Unread::retain_unseen`] does the skipping). Writers that retry after a
//! crash reuse the same `msg_id`, so the same rule removes their duplicates too.
//! Always acknowledge [`Unread::upto`], even when `entries` is empty: it also moves past corrupt
//! lines, which would otherwise be reported again and wake [`Mailbox::wait`] forever.
//!
//! # Example
//!
//! ```
//! use fleet_protocol::MailEntry;
//! use fleet_store::Mailbox;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let inbox = Mailbox::open(dir.path(), "alpha")?;
//! inbox.append(&MailEntry::new("team-lead", "start on the parser", "2026-12-01T17:00:00.000Z", "m1"))?;
//!
//! let unread = inbox.unread()?;
//! assert_eq!(unread.entries[0].text, "start on the parser");
//! inbox.ack(&unread.upto)?; // after the entries are committed
//! assert_eq!(inbox.pending()?, 0);
//! # Ok(())
//! # }
//! ```

mod compact;
mod error;
mod files;
mod off_thread;
mod wake;

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use fleet_protocol::MailEntry;
use tokio::sync::Notify;

pub use error::{MailboxError, Result};
use files::{Cursor, Paths};

/// Consumed bytes past which an ack compacts the segment (when they are also over half of it).
pub const DEFAULT_COMPACT_AFTER: u64 = 256 * 1024;

/// A member's inbox. Cheap to clone; clones (and other `open`s of the same inbox in this
/// process) share the lock handle's turn-taking and the wake-ups.
#[derive(Clone)]
pub struct Mailbox {
    inner: Arc<Inner>,
    compact_after: u64,
}

struct Inner {
    paths: Paths,
    /// The lock file, opened once. The mutex orders this process's threads (an `flock` is held
    /// per open file, so two threads on one handle would both "have" it); the `flock` orders
    /// processes.
    lock: Mutex<File>,
    notify: Arc<Notify>,
}

/// Where a read ended: hand it back to [`Mailbox::ack`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    cursor: Cursor,
}

/// What [`Mailbox::unread`] found after the cursor.
#[derive(Debug, Clone)]
pub struct Unread {
    /// The entries, oldest first.
    pub entries: Vec<MailEntry>,
    /// Lines skipped: a corrupt line (by line number) or a torn last line.
    pub warnings: Vec<String>,
    /// The end of what was read; acknowledging it consumes every entry and corrupt line above.
    pub upto: Position,
}

impl Unread {
    /// The `msg_id`s of the entries, in order.
    pub fn msg_ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.msg_id.as_str())
    }

    /// Drops entries the consumer has already committed (by `msg_id`), and duplicates within
    /// this batch, keeping the first of each. `upto` is unchanged: acknowledging it still
    /// consumes the dropped ones.
    pub fn retain_unseen(&mut self, seen: impl Fn(&str) -> bool) {
        let mut batch = HashSet::new();
        self.entries
            .retain(|entry| !seen(&entry.msg_id) && batch.insert(entry.msg_id.clone()));
    }
}

impl std::fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox")
            .field("dir", &self.inner.paths.dir)
            .field("owner", &self.inner.paths.owner)
            .finish()
    }
}

/// The inbox lock, held for one operation.
struct Held<'a> {
    file: MutexGuard<'a, File>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Closing is not needed to release: unlocking is. Failure leaves the kernel to release
        // it when the handle closes with the Mailbox.
        let _ = self.file.unlock();
    }
}

impl Mailbox {
    /// Opens (creating the folder if needed) the inbox of `owner` in `dir`. `owner` must be a
    /// plain name: letters, digits, `-`, `_`.
    pub fn open(dir: &Path, owner: &str) -> Result<Self> {
        if !files::valid_owner(owner) {
            return Err(MailboxError::InvalidOwner {
                owner: owner.to_owned(),
            });
        }
        // A folder made here is the user's only.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(dir)
            .map_err(|e| MailboxError::io("create folder", dir, e))?;
        // Canonical, so every open of this inbox in the process finds the same wake-up entry
        // and the watcher's file names map back to it.
        let dir = dir
            .canonicalize()
            .map_err(|e| MailboxError::io("resolve", dir, e))?;
        files::check_dir(&dir)?;
        let paths = Paths::new(&dir, owner);
        let lock = files::private(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
        )
        .open(&paths.lock)
        .map_err(|e| MailboxError::io("open", &paths.lock, e))?;
        let notify = wake::notifier(&dir, owner);
        Ok(Self {
            inner: Arc::new(Inner {
                paths,
                lock: Mutex::new(lock),
                notify,
            }),
            compact_after: DEFAULT_COMPACT_AFTER,
        })
    }

    /// Compacts once this many bytes are consumed (and over half the segment) instead of
    /// [`DEFAULT_COMPACT_AFTER`]. Small values are for tests and the torture run.
    pub fn with_compaction_threshold(mut self, bytes: u64) -> Self {
        self.compact_after = bytes;
        self
    }

    /// The owner's name.
    pub fn owner(&self) -> &str {
        &self.inner.paths.owner
    }

    /// The (canonical) folder holding the inbox.
    pub fn dir(&self) -> &Path {
        &self.inner.paths.dir
    }

    /// The active segment file now (it changes at compaction); for messages and tools.
    pub fn segment_path(&self) -> Result<PathBuf> {
        let _held = self.hold()?;
        Ok(self
            .inner
            .paths
            .segment(files::read_cursor(&self.inner.paths)?.segment))
    }

    /// Appends one entry; when this returns `Ok` the entry is on disk (fsynced) and will be
    /// delivered even if this process or the reader is killed right after.
    pub fn append(&self, entry: &MailEntry) -> Result<()> {
        self.append_all(std::slice::from_ref(entry))
    }

    /// Appends several entries under one lock and one fsync, in order.
    pub fn append_all(&self, entries: &[MailEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let paths = &self.inner.paths;
        let mut text = Vec::with_capacity(256 * entries.len());
        for entry in entries {
            serde_json::to_writer(&mut text, entry).map_err(|source| MailboxError::Encode {
                path: paths.dir.join(&paths.owner),
                source,
            })?;
            text.push(b'\n');
        }
        {
            let _held = self.hold()?;
            let cursor = files::read_cursor(paths)?;
            let path = paths.segment(cursor.segment);
            let mut file = files::open_segment_rw(&path)?;
            let len = file
                .metadata()
                .map_err(|e| MailboxError::io("inspect", &path, e))?
                .len();
            let len = files::cut_torn_tail(&mut file, &path, len)?;
            let io = |e| MailboxError::io("append to", &path, e);
            file.seek(SeekFrom::Start(len)).map_err(io)?;
            let written = file.write_all(&text).and_then(|()| file.sync_data());
            if let Err(e) = written {
                // Not acknowledged, so taken back whole (a full disk stops a write mid-line):
                // readers then see no torn line, and the caller's retry starts clean. If this
                // fails too, the next append cuts the torn tail anyway.
                let _ = file.set_len(len);
                return Err(io(e));
            }
            if len == 0 {
                // A new (or emptied) file: make its name durable too.
                files::sync_dir(&paths.dir)?;
            }
        }
        self.inner.notify.notify_waiters();
        Ok(())
    }

    /// Every entry after the cursor, with warnings for skipped lines.
    pub fn unread(&self) -> Result<Unread> {
        self.unread_at_most(usize::MAX)
    }

    /// Like [`unread`](Self::unread) but stops after `max` entries, so a reader that fell far
    /// behind takes its mail in bounded batches (and bounded memory: the file is streamed);
    /// `upto` then ends at the last entry returned.
    pub fn unread_at_most(&self, max: usize) -> Result<Unread> {
        let _held = self.hold()?;
        let paths = &self.inner.paths;
        let cursor = files::read_cursor(paths)?;
        let path = paths.segment(cursor.segment);
        let mut unread = Unread {
            entries: Vec::new(),
            warnings: Vec::new(),
            upto: Position { cursor },
        };
        let Some(mut reader) = files::open_at(&path, cursor.offset)? else {
            return Ok(unread);
        };
        let mut line = Vec::new();
        while unread.entries.len() < max {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| MailboxError::io("read", &path, e))?;
            if read == 0 {
                break;
            }
            let number = unread.upto.cursor.lines + 1;
            if line.last() != Some(&b'\n') {
                unread.warnings.push(format!(
                    "{}: line {number} is cut short ({read} bytes, a writer was stopped \
                     mid-write); skipped",
                    path.display()
                ));
                break;
            }
            let text = &line[..read - 1];
            if !text.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<MailEntry>(text) {
                    Ok(entry) => unread.entries.push(entry),
                    Err(e) => unread.warnings.push(format!(
                        "{}: line {number} is not a mail entry ({e}); skipped",
                        path.display()
                    )),
                }
            }
            unread.upto.cursor.offset += read as u64;
            unread.upto.cursor.lines = number;
        }
        Ok(unread)
    }

    /// Marks everything up to `upto` consumed, durably, and compacts when due. Acknowledging
    /// less than is already consumed does nothing; so does a position from before a compaction
    /// (possible only with two readers of one inbox): its entries then come again, which the
    /// consumer's `msg_id` check absorbs.
    pub fn ack(&self, upto: &Position) -> Result<()> {
        let _held = self.hold()?;
        let paths = &self.inner.paths;
        let cursor = files::read_cursor(paths)?;
        let target = upto.cursor;
        if target.segment != cursor.segment || target.offset <= cursor.offset {
            return Ok(());
        }
        let path = paths.segment(cursor.segment);
        let len = files::segment_len(&path)?;
        if target.offset > len {
            return Err(MailboxError::AckBeyondEnd {
                path,
                offset: target.offset,
                len,
            });
        }
        files::write_cursor(paths, &target, files::Durability::ConsumedOnly)?;
        if compact::due(target.offset, len, self.compact_after) {
            compact::compact(paths, &target)?;
        }
        Ok(())
    }

    /// How many whole lines wait after the cursor (a corrupt line counts until acknowledged).
    /// Streams the unconsumed part, without parsing or keeping it.
    pub fn pending(&self) -> Result<usize> {
        let _held = self.hold()?;
        let paths = &self.inner.paths;
        let cursor = files::read_cursor(paths)?;
        files::count_lines(&paths.segment(cursor.segment), cursor.offset, usize::MAX)
    }

    /// Every entry still on disk, oldest first: the consumed ones not yet compacted away come
    /// with `read: true`, the unconsumed ones with `read: false`. Corrupt and torn lines are
    /// left out. This is the view for `fleet team inbox`, not for delivery.
    pub fn all(&self) -> Result<Vec<MailEntry>> {
        let _held = self.hold()?;
        let paths = &self.inner.paths;
        let cursor = files::read_cursor(paths)?;
        let bytes = files::read_from(&paths.segment(cursor.segment), 0)?;
        let (lines, _torn) = files::lines(&bytes);
        Ok(lines
            .iter()
            .filter_map(|line| {
                let mut entry = serde_json::from_slice::<MailEntry>(line.bytes).ok()?;
                entry.read = (line.end as u64) <= cursor.offset;
                Some(entry)
            })
            .collect())
    }

    /// Returns when mail may have arrived: at once if whole lines wait after the cursor, else
    /// when an append in this process or a write by another process touches this inbox. It
    /// can return with nothing new (another reader took it, a spurious wake-up), so call
    /// [`unread`](Self::unread) after it in a loop. If the kernel refuses an inotify watch,
    /// writes by other processes are noticed within a second instead (logged once per folder).
    pub async fn wait(&self) {
        self.sleep_until(|| self.has_unread()).await;
    }

    /// Like [`wait`](Self::wait), but for mail past `seen` (the end of a read whose entries
    /// the caller holds without having acknowledged them yet): returns when a whole line
    /// lies beyond it, or when the inbox was compacted or acknowledged past it.
    pub async fn wait_past(&self, seen: &Position) {
        self.sleep_until(|| self.has_past(seen)).await;
    }

    /// Sleeps until `ready()` holds, checking it after each wake-up. It registers for the
    /// wake-up before checking, so an append between the check and the sleep still wakes it.
    async fn sleep_until(&self, ready: impl Fn() -> bool) {
        let watching = match wake::watch(&self.inner.paths.dir) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(folder = %self.inner.paths.dir.display(), error = %e, "cannot watch the inbox folder; other processes' mail is noticed by re-checking every second");
                false
            }
        };
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if ready() {
                return;
            }
            if watching {
                notified.await;
            } else {
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                }
            }
        }
    }

    fn has_past(&self, seen: &Position) -> bool {
        let paths = &self.inner.paths;
        let Ok(cursor) = files::read_cursor(paths) else {
            return true;
        };
        if cursor.segment != seen.cursor.segment || cursor.offset > seen.cursor.offset {
            return true;
        }
        let path = paths.segment(cursor.segment);
        match files::segment_len(&path) {
            Ok(len) if len <= seen.cursor.offset => false,
            Ok(_) => match files::read_from(&path, seen.cursor.offset) {
                Ok(bytes) => bytes.contains(&b'\n'),
                Err(_) => true,
            },
            Err(_) => true,
        }
    }

    /// Whether a whole line waits after the cursor. Lock-free (the cursor is replaced by rename,
    /// a segment only grows until compaction); an error counts as "yes" so the caller's next
    /// `unread` reports it instead of sleeping on it.
    fn has_unread(&self) -> bool {
        let paths = &self.inner.paths;
        let Ok(cursor) = files::read_cursor(paths) else {
            return true;
        };
        let path = paths.segment(cursor.segment);
        match files::segment_len(&path) {
            Ok(len) if len <= cursor.offset => false,
            Ok(_) => files::count_lines(&path, cursor.offset, 1).map_or(true, |n| n > 0),
            Err(_) => true,
        }
    }

    fn hold(&self) -> Result<Held<'_>> {
        let file = self
            .inner
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.lock()
            .map_err(|e| MailboxError::io("lock", &self.inner.paths.lock, e))?;
        Ok(Held { file })
    }
}
