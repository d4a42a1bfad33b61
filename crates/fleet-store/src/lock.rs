//! One process per session: a lock file beside the transcript, held with `flock` for as long as
//! a run uses the session.
//!
//! Two processes resuming the same session would each send the model their own copy of the
//! conversation and append their turns to one transcript, interleaved. So whoever runs a
//! session holds an exclusive `flock` on `<id>.lock`, which holds its pid for the error the next
//! one gets ("session … is in use by pid N"). The kernel drops a `flock` when its holder dies,
//! so a lock left by a crashed or killed process is simply taken over; no pid is ever trusted
//! to decide that. The file is removed on release, while still locked, and a new holder checks
//! that the file it locked is still the one at the path, so a release racing an acquire cannot
//! give two processes the lock.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Result, StoreError};

/// How often to retry when the lock file is swapped under us; more means something else is
/// deleting it in a loop.
const MAX_ATTEMPTS: u32 = 8;

/// The held lock of one session; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct SessionLock {
    path: PathBuf,
    file: File,
}

impl SessionLock {
    /// Locks session `id`, whose transcript is (or will be) `transcript`. Fails with
    /// [`StoreError::SessionInUse`] when another process holds it.
    pub fn acquire(transcript: &Path, id: &str) -> Result<Self> {
        let path = transcript.with_extension("lock");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::io("create folder", dir, e))?;
        }
        for _ in 0..MAX_ATTEMPTS {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| StoreError::io("open", &path, e))?;
            match try_lock_settling(&mut file) {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::SessionInUse {
                        id: id.to_owned(),
                        pid: holder(&mut file),
                        lock: path,
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(StoreError::io("lock", &path, e))
                }
            }
            if !still_at(&file, &path) {
                // The previous holder removed it between our open and our lock: try again on
                // the file that is there now.
                continue;
            }
            // The pid only names the holder in "in use" messages; the lock is the `flock`. On a
            // full disk the lock still holds without it, so the run goes on to a result that
            // names the disk (at its first transcript line) instead of failing here unreported.
            if let Err(e) = write_pid(&mut file) {
                tracing::debug!(lock = %path.display(), error = %e, "session lock held without its pid");
            }
            return Ok(Self { path, file });
        }
        Err(StoreError::io(
            "lock",
            &path,
            std::io::Error::other("the lock file kept being replaced"),
        ))
    }

    /// Where the lock file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        // Removed while still held, so the next process creates a fresh file; closing the file
        // releases the lock.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// How long a lock whose recorded holder has died may take to be let go.
const DEAD_HOLDER_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// `try_lock`, except that a lock whose recorded holder is dead is waited for a moment: a
/// process killed with SIGKILL can leave a child of its half way between `fork` and `exec`,
/// still holding a copy of the lock until its `exec` closes it. A live holder is refused at
/// once.
fn try_lock_settling(file: &mut File) -> std::result::Result<(), std::fs::TryLockError> {
    let deadline = std::time::Instant::now() + DEAD_HOLDER_GRACE;
    loop {
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock)
                if std::time::Instant::now() < deadline
                    && holder(file).is_some_and(|pid| !process_alive(pid)) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            other => return other,
        }
    }
}

/// Whether process `pid` runs: it exists and is not a zombie (killed, not yet reaped).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `Z` is a zombie, `X` dead.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| !matches!(state, 'Z' | 'X')),
        Err(_) => false,
    }
}

impl SessionLock {
    /// The pid a session's lock file names, read without taking the lock (taking it to test
    /// it could make the session's own process fail to get it). `Ok(None)` when the file is
    /// there without a pid yet; a `NotFound` error when there is no lock file.
    pub fn holder_pid(lock_file: &Path) -> std::io::Result<Option<u32>> {
        let text = std::fs::read_to_string(lock_file)?;
        Ok(text.trim().parse().ok().filter(|pid| *pid > 0))
    }
}

/// Whether `file` is still the file at `path`.
fn still_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(held), Ok(there)) => held.dev() == there.dev() && held.ino() == there.ino(),
        _ => false,
    }
}

fn write_pid(file: &mut File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    writeln!(file, "{}", std::process::id())?;
    file.flush()
}

/// The pid the holder wrote, if it has written one yet.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_whose_recorded_holder_is_dead_is_waited_for_briefly() {
        let dir = tempfile::tempdir().expect("temp dir");
        let transcript = dir.path().join("abc.jsonl");
        let path = transcript.with_extension("lock");
        // Held by a copy whose writer is gone: a dead pid in the file, the lock still taken
        // (as by a child between fork and exec), let go a moment later.
        let mut stray = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .expect("open");
        stray.try_lock().expect("lock");
        writeln!(stray, "{}", i32::MAX).expect("write");
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(stray);
        });
        let lock = SessionLock::acquire(&transcript, "abc");
        release.join().expect("join");
        assert!(lock.is_ok(), "taken once the stray copy let go: {lock:?}");
    }

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("temp dir");
        let transcript = dir.path().join("p/abc.jsonl");
        let first = SessionLock::acquire(&transcript, "abc").expect("first");
        assert!(first.path().exists());
        match SessionLock::acquire(&transcript, "abc") {
            Err(StoreError::SessionInUse { id, pid, .. }) => {
                assert_eq!(id, "abc");
                assert_eq!(pid, Some(std::process::id()));
            }
            other => panic!("expected SessionInUse, got {other:?}"),
        }
        drop(first);
        assert!(
            !dir.path().join("p/abc.lock").exists(),
            "removed on release"
        );
        let again = SessionLock::acquire(&transcript, "abc").expect("free again");
        drop(again);
    }

    #[test]
    fn a_lock_file_left_behind_without_a_holder_is_taken_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        let transcript = dir.path().join("abc.jsonl");
        std::fs::write(dir.path().join("abc.lock"), "999999999\n").expect("stale file");
        let lock = SessionLock::acquire(&transcript, "abc").expect("taken over");
        let pid = std::fs::read_to_string(lock.path()).expect("read");
        assert_eq!(pid.trim(), std::process::id().to_string());
    }
}
