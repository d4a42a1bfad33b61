//! Keeping an inbox file bounded: once enough of the active segment has been consumed, its
//! unconsumed tail moves to a fresh segment and the old one is deleted.
//!
//! The steps are ordered so that a crash between any two leaves a usable inbox:
//!
//! 1. write the unconsumed whole lines into `<owner>.<gen+1>.jsonl`, fsync it and the folder —
//!    a crash here leaves an orphan that nobody reads (the cursor still names `gen`), and the
//!    next compaction truncates and rewrites it;
//! 2. replace the cursor with `{segment: gen+1, offset: 0}` by rename — the switch point: before
//!    it readers and writers use `gen`, after it `gen+1`, both complete;
//! 3. delete every other segment of this owner — a crash before this only leaves a stale file,
//!    which the next compaction deletes.
//!
//! All of it runs under the inbox lock, so no writer appends to `gen` while its tail is copied.

use std::io::Write;

use super::error::{MailboxError, Result};
use super::files::{read_from, sync_dir, write_cursor, Cursor, Durability, Paths};

/// Whether a segment `len` bytes long, consumed up to `consumed`, should be compacted: when the
/// consumed part passes `threshold` and is over half the file, so copying the rest costs less
/// than what it frees.
pub(super) fn due(consumed: u64, len: u64, threshold: u64) -> bool {
    consumed >= threshold && consumed.saturating_mul(2) > len
}

/// Moves the unconsumed whole lines after `cursor` into the next segment and returns the new
/// cursor. The caller holds the inbox lock.
pub(super) fn compact(paths: &Paths, cursor: &Cursor) -> Result<Cursor> {
    let old = paths.segment(cursor.segment);
    let mut tail = read_from(&old, cursor.offset)?;
    // A torn last line was never acknowledged to its writer: it does not move.
    let whole = tail
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    tail.truncate(whole);

    let next = Cursor {
        segment: cursor.segment + 1,
        offset: 0,
        lines: 0,
    };
    let new = paths.segment(next.segment);
    let mut file = super::files::private(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .open(&new)
    .map_err(|e| MailboxError::io("create", &new, e))?;
    if let Err(e) = file.write_all(&tail).and_then(|()| file.sync_all()) {
        // Nobody reads it yet (the cursor still names the old segment, which keeps every
        // line): removing the part written gives its space back to a disk that is full.
        drop(file);
        let _ = std::fs::remove_file(&new);
        return Err(MailboxError::io("write", &new, e));
    }
    sync_dir(&paths.dir)?;

    write_cursor(paths, &next, Durability::Switch)?;

    for generation in paths.segments()? {
        if generation != next.segment {
            let stale = paths.segment(generation);
            match std::fs::remove_file(&stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(MailboxError::io("delete", &stale, e)),
            }
        }
    }
    Ok(next)
}
