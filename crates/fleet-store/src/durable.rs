//! Two building blocks for files that several agents and processes share: a whole-file write
//! that a reader can never catch half done, and an exclusive lock held for a read-modify-write.
//!
//! - [`write_atomic`] writes a sibling temporary file, fsyncs it, renames it over the target and
//!   fsyncs the folder. A reader opening the path sees the old file or the new one, never a mix
//!   (Claude Code writes its team file in place, and readers there can catch a torn one), and
//!   after a crash the file is one or the other.
//! - [`ExclusiveLock`] is a `flock` on a separate, never-replaced lock file. The kernel drops it
//!   when the holder dies, so a killed process never leaves a stale lock behind, and each open
//!   of the lock file is its own lock, so threads of one process exclude each other too.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Result, StoreError};

/// Replaces `path` with `bytes` atomically and durably (see the module doc).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", uuid::Uuid::new_v4().simple()));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| StoreError::io("create", &tmp, e))?;
        file.write_all(bytes)
            .map_err(|e| StoreError::io("write", &tmp, e))?;
        file.sync_all()
            .map_err(|e| StoreError::io("flush to disk", &tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| StoreError::io("replace", path, e))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    sync_dir(dir)
}

/// Flushes a folder's entries (a rename or a new file in it) to disk.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io("flush to disk", dir, e))
}

/// An exclusive `flock` on a lock file, released when dropped or when the process dies.
#[derive(Debug)]
pub(crate) struct ExclusiveLock {
    file: File,
}

impl ExclusiveLock {
    /// Blocks until the lock on `path` (created if missing, never removed) is held.
    pub(crate) fn acquire(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| StoreError::io("open lock file", path, e))?;
        file.lock().map_err(|e| StoreError::io("lock", path, e))?;
        Ok(Self { file })
    }
}

impl Drop for ExclusiveLock {
    fn drop(&mut self) {
        // Closing the file releases the lock anyway; unlocking first just makes it prompt.
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_whole_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.json");
        write_atomic(&path, b"first, and longer").expect("first write");
        write_atomic(&path, b"second").expect("second write");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("config.json")]);
    }

    #[test]
    fn a_failed_write_names_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("missing/config.json");
        let err = write_atomic(&path, b"x").expect_err("no folder");
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
