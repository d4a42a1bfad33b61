//! Waking a waiting reader when mail arrives, without a timer.
//!
//! - **In this process:** every open [`Mailbox`](super::Mailbox) of one inbox shares one
//!   `tokio::sync::Notify`, found in a process-wide registry keyed by the inbox (canonical
//!   folder + owner). `append` pokes it after releasing the lock.
//! - **From other processes:** one inotify watch per inbox folder per process, read by one
//!   thread. A write to `<owner>.<gen>.jsonl` by anyone (another `fleet`, `fleet team send`)
//!   produces an `IN_MODIFY` event, and the thread pokes that owner's `Notify`.
//!
//! Why a thread and not a tokio task on `AsyncFd`: the watcher is shared by every waiter of the
//! process, and a task would die with whichever runtime happened to start it (each test has its
//! own runtime; a CLI subcommand may build a short one), silently leaving later waiters deaf. A
//! thread blocked in `read(2)` costs nothing while idle and outlives any runtime. It ends when
//! the folder goes away (the kernel drops the watch and sends `IN_IGNORED`), waking every
//! waiter of that folder on its way out so none sleeps on a dead watch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tokio::sync::Notify;

use super::files::parse_segment_name;

/// Inbox (folder joined with owner) → the `Notify` its open mailboxes share.
static INBOXES: LazyLock<Mutex<HashMap<PathBuf, Weak<Notify>>>> = LazyLock::new(Default::default);

/// Folder → the id of the watcher thread serving it. Ids let a thread that is ending remove its
/// own entry and not a newer watcher's for a re-created folder of the same name.
static WATCHED: LazyLock<Mutex<HashMap<PathBuf, u64>>> = LazyLock::new(Default::default);

static NEXT_WATCHER: AtomicU64 = AtomicU64::new(0);

/// A poisoned registry only means another thread panicked while holding it; the map itself is
/// always left whole, so go on with it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The shared `Notify` of the inbox `dir/owner` (`dir` canonical).
pub(super) fn notifier(dir: &Path, owner: &str) -> Arc<Notify> {
    let key = dir.join(owner);
    let mut inboxes = lock(&INBOXES);
    if let Some(notify) = inboxes.get(&key).and_then(Weak::upgrade) {
        return notify;
    }
    // Drop entries of inboxes nobody has open any more, so the map stays as small as the set
    // of open inboxes.
    inboxes.retain(|_, weak| weak.strong_count() > 0);
    let notify = Arc::new(Notify::new());
    inboxes.insert(key, Arc::downgrade(&notify));
    notify
}

/// Wakes every waiter of the inbox `dir/owner` in this process.
fn wake(dir: &Path, owner: &str) {
    let notify = lock(&INBOXES).get(&dir.join(owner)).and_then(Weak::upgrade);
    if let Some(notify) = notify {
        notify.notify_waiters();
    }
}

/// Wakes every waiter of every inbox under `dir` in this process.
fn wake_all(dir: &Path) {
    let notifies: Vec<_> = lock(&INBOXES)
        .iter()
        .filter(|(key, _)| key.parent() == Some(dir))
        .filter_map(|(_, weak)| weak.upgrade())
        .collect();
    for notify in notifies {
        notify.notify_waiters();
    }
}

/// Makes sure writes to `dir` by other processes wake this process's waiters. The watch is in
/// place when this returns, so a write after it is never missed. Fails when the kernel refuses
/// inotify (instance or watch limits); the caller then cannot hear other processes.
pub(super) fn watch(dir: &Path) -> Result<(), Errno> {
    let mut watched = lock(&WATCHED);
    if watched.contains_key(dir) {
        return Ok(());
    }
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC)?;
    inotify.add_watch(dir, AddWatchFlags::IN_MODIFY | AddWatchFlags::IN_ONLYDIR)?;
    let id = NEXT_WATCHER.fetch_add(1, Ordering::Relaxed);
    let folder = dir.to_path_buf();
    std::thread::Builder::new()
        .name("fleet-inbox-watch".into())
        .spawn(move || serve(inotify, folder, id))
        .map_err(|e| e.raw_os_error().map_or(Errno::EAGAIN, Errno::from_raw))?;
    watched.insert(dir.to_path_buf(), id);
    Ok(())
}

/// The watcher thread: turns events into wake-ups until the watch is gone.
fn serve(inotify: Inotify, dir: PathBuf, id: u64) {
    loop {
        let events = match inotify.read_events() {
            Ok(events) => events,
            Err(Errno::EINTR) => continue,
            Err(e) => {
                tracing::warn!(folder = %dir.display(), error = %e, "inbox watch failed; waiters of this folder will only hear this process");
                break;
            }
        };
        let mut gone = false;
        for event in events {
            if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                gone = true;
            }
            if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                // Events were dropped: any inbox may have mail.
                wake_all(&dir);
            }
            let owner = event
                .name
                .as_deref()
                .and_then(|name| name.to_str())
                .and_then(parse_segment_name)
                .map(|(owner, _)| owner);
            if let Some(owner) = owner {
                wake(&dir, owner);
            }
        }
        if gone {
            break;
        }
    }
    {
        let mut watched = lock(&WATCHED);
        if watched.get(&dir) == Some(&id) {
            watched.remove(&dir);
        }
    }
    // Waiters re-check and, if the folder is back, set up a fresh watch.
    wake_all(&dir);
}
