//! What one agent has read, so that Write and Edit refuse to overwrite a file the agent has
//! not seen or that changed on disk since it was read.
//!
//! A file counts as unchanged when its length and a hash of its bytes match what the agent last
//! saw. Modification times alone are not trusted: a formatter that rewrites a file within one
//! timestamp tick, or a `touch` that changes nothing, would fool them either way. The hash is
//! computed while the bytes stream past anyway (Read scans the whole file to count its lines),
//! so it costs no extra pass and no memory proportional to the file.

use std::collections::HashMap;
use std::fs::Metadata;
use std::hash::{DefaultHasher, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// One remembered version of a file: as it was after the agent last read or wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Modification time then; kept for display and for consumers that want a cheap hint.
    pub modified: Option<SystemTime>,
    pub len: u64,
    /// [`ContentHasher`] digest of every byte of the file.
    pub hash: u64,
}

impl Seen {
    /// The version whose bytes are `bytes` and whose metadata is `meta` (taken around the same
    /// time; only the modification time is used from it).
    pub fn of_bytes(meta: Option<&Metadata>, bytes: &[u8]) -> Self {
        let mut hasher = ContentHasher::default();
        hasher.update(bytes);
        Self {
            modified: meta.and_then(|m| m.modified().ok()),
            len: bytes.len() as u64,
            hash: hasher.finish(),
        }
    }

    /// The version now on disk at `path`, hashed as a stream so a large file costs no memory.
    pub fn of_file(path: &Path) -> std::io::Result<Self> {
        let mut file = crate::builtin::regular_file::open_regular_io(path)?;
        let modified = file.metadata()?.modified().ok();
        let mut hasher = ContentHasher::default();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            hasher.update(&buf[..n]);
            len += n as u64;
        }
        Ok(Self {
            modified,
            len,
            hash: hasher.finish(),
        })
    }
}

/// A streaming digest of file bytes: feeding the bytes in any chunking gives the same result.
/// Not cryptographic; it only has to notice accidental changes within one process.
#[derive(Debug, Default, Clone)]
pub struct ContentHasher(DefaultHasher);

impl ContentHasher {
    pub fn update(&mut self, bytes: &[u8]) {
        // `Hasher::write` is a byte stream (unlike `Hash::hash` on a slice, which also mixes in
        // the length), so chunk boundaries do not matter.
        self.0.write(bytes);
    }

    pub fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// Whether a file may be overwritten, judged against what the agent has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The agent never read this file.
    Unread,
    /// The agent read it, but it differs on disk now.
    Changed,
    /// On disk exactly as the agent last saw it.
    Fresh,
}

#[derive(Debug, Default)]
pub struct FileState {
    seen: Mutex<HashMap<PathBuf, Seen>>,
}

impl FileState {
    /// Records that the agent has seen `path` (resolved) as `seen`.
    pub fn record(&self, path: &Path, seen: Seen) {
        self.lock().insert(path.to_path_buf(), seen);
    }

    pub fn get(&self, path: &Path) -> Option<Seen> {
        self.lock().get(path).copied()
    }

    /// Forgets `path`, so that the next Write or Edit needs a fresh Read.
    pub fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// Compares what is on disk now (`current`) with what the agent last saw of `path`.
    pub fn freshness(&self, path: &Path, current: &Seen) -> Freshness {
        match self.get(path) {
            None => Freshness::Unread,
            Some(seen) if seen.len == current.len && seen.hash == current.hash => Freshness::Fresh,
            Some(_) => Freshness::Changed,
        }
    }

    /// The map stays consistent even if a holder panicked (every update is one insert or
    /// remove), so a poisoned lock is simply taken over.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Seen>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunking_does_not_change_the_hash() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut whole = ContentHasher::default();
        whole.update(&data);
        let mut pieces = ContentHasher::default();
        for chunk in data.chunks(777) {
            pieces.update(chunk);
        }
        assert_eq!(whole.finish(), pieces.finish());
        let mut other = ContentHasher::default();
        other.update(&data[1..]);
        assert_ne!(whole.finish(), other.finish());
    }

    #[test]
    fn freshness_follows_content_not_time() {
        let state = FileState::default();
        let path = Path::new("/x/y");
        let a = Seen::of_bytes(None, b"hello");
        assert_eq!(state.freshness(path, &a), Freshness::Unread);
        state.record(path, a);
        let touched = Seen {
            modified: Some(SystemTime::now()),
            ..a
        };
        assert_eq!(state.freshness(path, &touched), Freshness::Fresh);
        let same_len = Seen::of_bytes(None, b"jello");
        assert_eq!(state.freshness(path, &same_len), Freshness::Changed);
        state.forget(path);
        assert_eq!(state.freshness(path, &a), Freshness::Unread);
    }
}
