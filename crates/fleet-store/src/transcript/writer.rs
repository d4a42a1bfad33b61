//! Appending to a transcript so that concurrent writers never interleave and a crash loses at
//! most the line being written.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::entry::{now_timestamp, TranscriptEntry};
use crate::error::{Result, StoreError};
use crate::home::FleetHome;
use crate::session::transcript_path;

/// Appends entries to one session's JSONL file.
///
/// Each [`append`](Self::append) writes one whole line while holding an exclusive lock on the
/// file, so a parent and a background agent (or two processes) appending to the same file never
/// mix their bytes. There is no user-space buffer: when `append` returns, the line is in the
/// operating system, where a crash of fleet cannot lose it. Surviving a power cut needs
/// [`sync`](Self::sync), or [`set_sync_every_entry`](Self::set_sync_every_entry), which is off by
/// default because an fsync per line is costly on some disks.
#[derive(Debug)]
pub struct TranscriptWriter {
    path: PathBuf,
    file: File,
    /// Pipes and devices (a transcript sent to `/dev/stdout`) cannot seek or be truncated; the
    /// checks that need that are skipped for them.
    regular: bool,
    session_id: String,
    cwd: String,
    last_uuid: Option<String>,
    sync_every_entry: bool,
}

impl TranscriptWriter {
    /// Starts the transcript of a new session at `projects/<slug of cwd>/<session_id>.jsonl`,
    /// creating folders as needed. Fails if that file already exists, rather than mixing two
    /// conversations in one file.
    pub fn create(home: &FleetHome, cwd: &Path, session_id: &str) -> Result<Self> {
        let path = transcript_path(home, cwd, session_id)?;
        create_parent(&path)?;
        let file = match options().create_new(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(StoreError::SessionExists { path })
            }
            Err(e) => return Err(StoreError::io("create", path, e)),
        };
        Ok(Self {
            path,
            file,
            regular: true,
            session_id: session_id.to_owned(),
            cwd: std::path::absolute(cwd)
                .unwrap_or_else(|_| cwd.to_path_buf())
                .to_string_lossy()
                .into_owned(),
            last_uuid: None,
            sync_every_entry: false,
        })
    }

    /// Opens a transcript to add to it (resuming a session), creating it and its folders if
    /// missing. The existing lines are read once to continue the `parentUuid` chain and to learn
    /// the session id and working folder; the id falls back to the file name.
    pub fn open_append(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        create_parent(&path)?;
        let file = options()
            .create(true)
            .open(&path)
            .map_err(|e| StoreError::io("open", &path, e))?;
        let regular = file
            .metadata()
            .map_err(|e| StoreError::io("inspect", &path, e))?
            .is_file();
        let tail = if regular {
            Tail::scan(&file, &path)?
        } else {
            Tail::default()
        };
        let session_id = tail.session_id.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        Ok(Self {
            path,
            file,
            regular,
            session_id,
            cwd: tail.cwd.unwrap_or_default(),
            last_uuid: tail.last_uuid,
            sync_every_entry: false,
        })
    }

    /// Opens `path` to add one more entry after `last_uuid`, without reading the file: the
    /// caller (a sidechain writer) already knows where the chain stands.
    ///
    /// The folder is made only when the open finds it missing: thousands of subagents append
    /// at once, and a `mkdir` that finds the folder there still takes the parent folder's lock
    /// in the kernel, so asking first for every entry serialised them all on it.
    pub(super) fn reopen(
        path: &Path,
        session_id: &str,
        cwd: &str,
        last_uuid: Option<String>,
    ) -> Result<Self> {
        let file = match options().create(true).open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create_parent(path)?;
                options().create(true).open(path)
            }
            opened => opened,
        }
        .map_err(|e| StoreError::io("open", path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            regular: true,
            session_id: session_id.to_owned(),
            cwd: cwd.to_owned(),
            last_uuid,
            sync_every_entry: false,
        })
    }

    /// Writes `entry` as one line and returns it as written.
    ///
    /// Empty `uuid`, `session_id`, `cwd` and `timestamp` are filled in, and a missing
    /// `parent_uuid` is set to the previous entry this writer wrote (or found when opening).
    /// Set `parent_uuid` yourself to branch from an earlier entry.
    ///
    /// On error nothing is retried or hidden: the error names the file, and the writer stays
    /// usable (the chain does not advance past the failed entry).
    pub fn append(&mut self, mut entry: TranscriptEntry) -> Result<TranscriptEntry> {
        if entry.uuid.is_empty() {
            entry.uuid = uuid::Uuid::new_v4().to_string();
        }
        if entry.session_id.is_empty() {
            entry.session_id.clone_from(&self.session_id);
        }
        if entry.cwd.is_empty() {
            entry.cwd.clone_from(&self.cwd);
        }
        if entry.timestamp.is_empty() {
            entry.timestamp = now_timestamp();
        }
        if entry.parent_uuid.is_none() {
            entry.parent_uuid.clone_from(&self.last_uuid);
        }
        let mut line = serde_json::to_vec(&entry).map_err(|source| StoreError::Encode {
            path: self.path.clone(),
            source,
        })?;
        line.push(b'\n');

        self.file
            .lock()
            .map_err(|e| StoreError::io("lock", &self.path, e))?;
        let written = self.write_locked(&line);
        // Closing the file would release the lock too, but the writer lives on: release now and
        // report the write's error first, as it is the one that matters.
        let unlocked = self.file.unlock();
        written.map_err(|e| StoreError::io("append to", &self.path, e))?;
        unlocked.map_err(|e| StoreError::io("unlock", &self.path, e))?;

        if self.sync_every_entry {
            self.sync()?;
        }
        self.last_uuid = Some(entry.uuid.clone());
        Ok(entry)
    }

    /// Writes one line; the caller holds the lock.
    fn write_locked(&mut self, line: &[u8]) -> std::io::Result<()> {
        if !self.regular {
            return self.file.write_all(line);
        }
        let start = self.file.seek(SeekFrom::End(0))?;
        // A writer that crashed mid-line left a fragment without its newline; starting on a
        // fresh line keeps our entry whole (the fragment is then skipped when loading).
        if start > 0 {
            self.file.seek(SeekFrom::End(-1))?;
            let mut last = [0u8; 1];
            self.file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                self.file.write_all(b"\n")?;
            }
        }
        let result = self.file.write_all(line);
        if result.is_err() {
            // Take back a partial line (disk full mid-write) so the next append starts clean.
            // If this fails too, the newline check above still protects the next line.
            let _ = self.file.set_len(start);
        }
        result
    }

    /// Forces every appended line to disk (`fdatasync`), so it survives a power cut.
    pub fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| StoreError::io("sync", &self.path, e))
    }

    /// Syncs after every append: safest, and slowest.
    pub fn set_sync_every_entry(&mut self, on: bool) {
        self.sync_every_entry = on;
    }

    /// Changes the working folder recorded on later entries (after a `cd`, or when resuming a
    /// file that recorded none).
    pub fn set_cwd(&mut self, cwd: &Path) {
        self.cwd = cwd.to_string_lossy().into_owned();
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The uuid the next entry will chain to.
    pub fn last_uuid(&self) -> Option<&str> {
        self.last_uuid.as_deref()
    }
}

/// Read and append, never truncate; private to the user on Unix, since transcripts hold
/// everything the agent read, secrets included.
fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

fn create_parent(path: &Path) -> Result<()> {
    let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(parent)
        .map_err(|e| StoreError::io("create folder", parent, e))
}

/// What an existing transcript says about how to continue it. Only these fields are decoded,
/// so resuming a long session does not hold all of it in memory.
#[derive(Debug, Default)]
struct Tail {
    last_uuid: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stamp {
    #[serde(default)]
    uuid: String,
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: String,
}

impl Tail {
    fn scan(file: &File, path: &Path) -> Result<Self> {
        let mut tail = Self::default();
        let mut lines = super::Lines::new(BufReader::new(file), path);
        while let Some((_, line)) = lines.next_line()? {
            // Corrupt lines are skipped here as when loading; `Transcript::load` reports them.
            let Ok(stamp) = serde_json::from_slice::<Stamp>(line) else {
                continue;
            };
            if !stamp.uuid.is_empty() {
                tail.last_uuid = Some(stamp.uuid);
            }
            if !stamp.session_id.is_empty() {
                tail.session_id = Some(stamp.session_id);
            }
            if !stamp.cwd.is_empty() {
                tail.cwd = Some(stamp.cwd);
            }
        }
        Ok(tail)
    }
}
