//! The files of one inbox and the low-level moves on them: naming, the cursor (written by
//! rename, never in place), cutting a torn last line, and splitting a segment into lines.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{MailboxError, Result};

/// How far the owner has consumed, as stored in `<owner>.cursor`. It also names the active
/// segment, which is why writers read it too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Cursor {
    /// The generation of the active segment, `<owner>.<segment>.jsonl`.
    pub segment: u64,
    /// Bytes of that segment already consumed; always the end of a whole line.
    pub offset: u64,
    /// Lines of that segment already consumed, so warnings can give absolute line numbers
    /// without re-reading the consumed part.
    #[serde(default)]
    pub lines: u64,
}

/// The paths of one owner's inbox inside its folder.
#[derive(Debug, Clone)]
pub(super) struct Paths {
    pub dir: PathBuf,
    pub owner: String,
    pub cursor: PathBuf,
    pub cursor_tmp: PathBuf,
    pub lock: PathBuf,
}

impl Paths {
    pub fn new(dir: &Path, owner: &str) -> Self {
        Self {
            dir: dir.to_path_buf(),
            owner: owner.to_owned(),
            cursor: dir.join(format!("{owner}.cursor")),
            cursor_tmp: dir.join(format!("{owner}.cursor.tmp")),
            lock: dir.join(format!("{owner}.lock")),
        }
    }

    pub fn segment(&self, generation: u64) -> PathBuf {
        self.dir.join(format!("{}.{generation}.jsonl", self.owner))
    }

    /// The generations of every segment of this owner in the folder (the active one, and at
    /// most one left behind by a crash during compaction).
    pub fn segments(&self) -> Result<Vec<u64>> {
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| MailboxError::io("list", &self.dir, e))?;
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| MailboxError::io("list", &self.dir, e))?;
            let name = entry.file_name();
            if let Some((owner, generation)) = name.to_str().and_then(parse_segment_name) {
                if owner == self.owner {
                    found.push(generation);
                }
            }
        }
        Ok(found)
    }
}

/// `alpha.3.jsonl` → `("alpha", 3)`; anything else → `None`. Owners hold no dots, so the split
/// is unambiguous.
pub(super) fn parse_segment_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_suffix(".jsonl")?;
    let (owner, generation) = stem.rsplit_once('.')?;
    if owner.is_empty() || owner.contains('.') || generation.is_empty() {
        return None;
    }
    if !generation.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((owner, generation.parse().ok()?))
}

/// Whether `owner` is safe as the first part of a file name and keeps segment names parseable.
pub(super) fn valid_owner(owner: &str) -> bool {
    let mut bytes = owner.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    owner.len() <= 128
        && first.is_ascii_alphanumeric()
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Reads the cursor; a missing file means nothing consumed yet in segment 0.
pub(super) fn read_cursor(paths: &Paths) -> Result<Cursor> {
    let text = match std::fs::read(&paths.cursor) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Cursor::default()),
        Err(e) => return Err(MailboxError::io("read", &paths.cursor, e)),
    };
    serde_json::from_slice(&text).map_err(|e| MailboxError::BadCursor {
        path: paths.cursor.clone(),
        reason: e.to_string(),
    })
}

/// How sure a cursor write must be of surviving a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Durability {
    /// The new cursor may be lost to a power cut (never to a crash of fleet): the old one comes
    /// back and re-delivers entries, which consumers deduplicate by `msg_id`. Enough for acks.
    ConsumedOnly,
    /// The rename itself is fsynced: compaction deletes the old segment right after switching
    /// to the new one, so the switch must not be undone.
    Switch,
}

/// Replaces the cursor: a temporary file, fsynced (so a power cut never leaves an empty
/// cursor), renamed over the old one; with [`Durability::Switch`] the folder is fsynced too.
/// A reader sees the old cursor or the new one, never a mix.
pub(super) fn write_cursor(paths: &Paths, cursor: &Cursor, durability: Durability) -> Result<()> {
    let text = serde_json::to_vec(cursor).map_err(|source| MailboxError::Encode {
        path: paths.cursor.clone(),
        source,
    })?;
    let mut file = private(OpenOptions::new().write(true).create(true).truncate(true))
        .open(&paths.cursor_tmp)
        .map_err(|e| MailboxError::io("create", &paths.cursor_tmp, e))?;
    if let Err(e) = file.write_all(&text).and_then(|()| file.sync_all()) {
        // The old cursor stands; the half-written copy only takes room on a disk that is full.
        drop(file);
        let _ = std::fs::remove_file(&paths.cursor_tmp);
        return Err(MailboxError::io("write", &paths.cursor_tmp, e));
    }
    std::fs::rename(&paths.cursor_tmp, &paths.cursor)
        .map_err(|e| MailboxError::io("replace", &paths.cursor, e))?;
    if durability == Durability::Switch {
        sync_dir(&paths.dir)?;
    }
    Ok(())
}

/// Makes the folder's entries (a created or renamed file) durable.
pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| MailboxError::io("sync folder", dir, e))
}

/// `options` for an inbox file: made owner-only (`0600`: team mail is nobody else's to read),
/// never through a symbolic link (`O_NOFOLLOW`: a link planted at an inbox file's name fails
/// to open instead of sending the write elsewhere).
pub(super) fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    options
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
}

/// Opens `path` for reading, never through a symbolic link.
fn open_read(path: &Path) -> std::io::Result<File> {
    private(OpenOptions::new().read(true)).open(path)
}

/// The inbox folder must be the user's own and writable by nobody else (whoever can write to
/// it can replace the files in it).
pub(super) fn check_dir(dir: &Path) -> Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| MailboxError::io("inspect", dir, e))?;
    crate::private_dir::check_owner_and_mode(&meta).map_err(|problem| MailboxError::Unsafe {
        path: dir.to_path_buf(),
        problem: problem.to_string(),
    })
}

/// Opens a segment for appending (creating it if needed).
pub(super) fn open_segment_rw(path: &Path) -> Result<File> {
    private(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(path)
    .map_err(|e| MailboxError::io("open", path, e))
}

/// Cuts a torn last line (bytes after the last `\n`), left by a writer killed in the middle of
/// its write. That entry was never acknowledged, so dropping it loses nothing; keeping it would
/// glue the next entry onto it. Returns the length of the file afterwards.
pub(super) fn cut_torn_tail(file: &mut File, path: &Path, len: u64) -> Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    let io = |e| MailboxError::io("repair", path, e);
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
    file.read_exact(&mut last).map_err(io)?;
    if last[0] == b'\n' {
        return Ok(len);
    }
    // Walk back in chunks to the last newline (or the start of the file).
    const CHUNK: u64 = 64 * 1024;
    let mut end = len;
    let mut keep = 0;
    let mut buf = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        buf.resize((end - start) as usize, 0);
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(&mut buf).map_err(io)?;
        if let Some(at) = buf.iter().rposition(|&b| b == b'\n') {
            keep = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    file.set_len(keep).map_err(io)?;
    Ok(keep)
}

/// Reads a segment from `offset` to its end. A missing segment reads as empty (no mail yet).
pub(super) fn read_from(path: &Path, offset: u64) -> Result<Vec<u8>> {
    let mut file = match open_read(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(MailboxError::io("open", path, e)),
    };
    let io = |e| MailboxError::io("read", path, e);
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Opens a segment for reading at `offset`; `None` when it does not exist yet (no mail).
pub(super) fn open_at(path: &Path, offset: u64) -> Result<Option<BufReader<File>>> {
    let mut file = match open_read(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(MailboxError::io("open", path, e)),
    };
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| MailboxError::io("read", path, e))?;
    Ok(Some(BufReader::with_capacity(64 * 1024, file)))
}

/// Counts the `\n`s after `offset`, stopping once `limit` are found, reading in fixed-size
/// chunks so a long backlog costs no memory.
pub(super) fn count_lines(path: &Path, offset: u64, limit: usize) -> Result<usize> {
    let Some(mut reader) = open_at(path, offset)? else {
        return Ok(0);
    };
    let mut count = 0;
    loop {
        let chunk = reader
            .fill_buf()
            .map_err(|e| MailboxError::io("read", path, e))?;
        if chunk.is_empty() || count >= limit {
            return Ok(count.min(limit));
        }
        count += chunk.iter().filter(|&&b| b == b'\n').count();
        let used = chunk.len();
        reader.consume(used);
    }
}

/// The length of a segment; 0 when it does not exist yet.
pub(super) fn segment_len(path: &Path) -> Result<u64> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(meta.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(MailboxError::io("inspect", path, e)),
    }
}

/// One whole line of a segment: its bytes without the `\n`, and where the next line starts
/// (relative to the buffer).
pub(super) struct Line<'a> {
    pub bytes: &'a [u8],
    pub end: usize,
}

/// Splits `bytes` into whole lines; the bytes after the last `\n` (a torn line) are returned
/// apart.
pub(super) fn lines(bytes: &[u8]) -> (Vec<Line<'_>>, &[u8]) {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(at) = bytes[start..].iter().position(|&b| b == b'\n') {
        let end = start + at + 1;
        out.push(Line {
            bytes: &bytes[start..start + at],
            end,
        });
        start = end;
    }
    (out, &bytes[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names_parse_only_for_plain_owners_and_numbers() {
        assert_eq!(parse_segment_name("alpha.3.jsonl"), Some(("alpha", 3)));
        assert_eq!(
            parse_segment_name("team-lead.0.jsonl"),
            Some(("team-lead", 0))
        );
        assert_eq!(parse_segment_name("alpha.jsonl"), None);
        assert_eq!(parse_segment_name("alpha.x.jsonl"), None);
        assert_eq!(parse_segment_name("a.b.3.jsonl"), None);
        assert_eq!(parse_segment_name("alpha.cursor"), None);
        assert_eq!(parse_segment_name(".3.jsonl"), None);
    }

    #[test]
    fn owners_must_be_plain_file_name_parts() {
        for good in ["alpha", "team-lead", "a_1", "Z"] {
            assert!(valid_owner(good), "{good}");
        }
        for bad in ["", "..", "a/b", "a.b", "-a", "_a", "a b", &"x".repeat(129)] {
            assert!(!valid_owner(bad), "{bad}");
        }
    }

    #[test]
    fn a_torn_tail_is_cut_back_to_the_last_whole_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.0.jsonl");
        std::fs::write(&path, b"{\"x\":1}\n{\"x\":").expect("write");
        let mut file = open_segment_rw(&path).expect("open");
        let len = cut_torn_tail(&mut file, &path, 13).expect("cut");
        assert_eq!(len, 8);
        assert_eq!(std::fs::read(&path).expect("read"), b"{\"x\":1}\n");

        std::fs::write(&path, b"no newline at all").expect("write");
        let mut file = open_segment_rw(&path).expect("open");
        assert_eq!(cut_torn_tail(&mut file, &path, 17).expect("cut"), 0);
    }
}
