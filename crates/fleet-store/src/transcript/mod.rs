//! Session transcripts: one JSONL file per session, one entry per line.
//!
//! The format follows Claude Code's transcript lines (`type`, `uuid`, `parentUuid`,
//! `sessionId`, `timestamp`, `cwd`, `message`, …) so that the files read the same to people and
//! scripts used to those. A line is only ever appended, whole, under a file lock; reading
//! tolerates the one way such a file can be damaged in practice, a last line cut short by a
//! crash, and also skips (and reports) corrupt lines elsewhere instead of refusing the session.

mod entry;
mod launches;
mod lines;
mod progress;
mod repair;
mod sidechain;
mod writer;

use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use fleet_protocol::Message;

pub use entry::{EntryKind, SharedField, SharedFields, TranscriptEntry, COMPACT_BOUNDARY};
pub use launches::{LaunchKind, LaunchedTask};
pub(crate) use lines::Lines;
pub use progress::TranscriptProgress;
pub use repair::INTERRUPTED_TOOL_RESULT;
pub use sidechain::SidechainWriter;
pub use writer::TranscriptWriter;

use crate::error::{Result, StoreError};

/// The transcript file format; [`Transcript::load`] reads one.
#[derive(Debug)]
pub enum Transcript {}

impl Transcript {
    /// Reads a transcript line by line.
    ///
    /// Lines that do not parse are skipped and listed in [`LoadedTranscript::skipped`] with
    /// their line numbers: losing one entry is better than losing the session. Blank lines are
    /// ignored. Only failing to open or read the file is an error.
    pub fn load(path: impl AsRef<Path>) -> Result<LoadedTranscript> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
        let mut reader = BufReader::new(file);
        let mut loaded = LoadedTranscript {
            path: path.to_path_buf(),
            entries: Vec::new(),
            skipped: Vec::new(),
        };
        let mut lines = Lines::new(&mut reader, path);
        while let Some((line_no, line)) = lines.next_line()? {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<TranscriptEntry>(line) {
                Ok(entry) => loaded.entries.push(entry),
                Err(e) => loaded.skipped.push(SkippedLine {
                    line: line_no,
                    // Only the last line can lack its newline; a line cut there is the trace of
                    // a crash mid-write, not of damage.
                    truncated: line.last() != Some(&b'\n'),
                    error: e.to_string(),
                }),
            }
        }
        Ok(loaded)
    }
}

/// A transcript read from disk.
#[derive(Debug, Clone)]
pub struct LoadedTranscript {
    pub path: PathBuf,
    /// Every entry that parsed, in file order.
    pub entries: Vec<TranscriptEntry>,
    /// Lines that did not parse, in file order.
    pub skipped: Vec<SkippedLine>,
}

/// A line [`Transcript::load`] could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based, as editors count.
    pub line: usize,
    /// The line had no newline: the file ended mid-line, most likely because a writer stopped
    /// in the middle of it.
    pub truncated: bool,
    pub error: String,
}

impl SkippedLine {
    /// What happened, without the line number.
    fn what(&self) -> String {
        if self.truncated {
            format!(
                "skipped an incomplete last line (a write was cut short): {}",
                self.error
            )
        } else {
            format!("skipped a corrupt line: {}", self.error)
        }
    }
}

impl fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what())
    }
}

impl LoadedTranscript {
    /// The conversation to continue: the message of every `user` and `assistant` entry, in
    /// order, repaired so the Messages API accepts it (see [`INTERRUPTED_TOOL_RESULT`]).
    ///
    /// Entries marked `isMeta` are included: they were sent to the model (a task notification,
    /// an instruction file), and a resumed session must show the model what it saw before.
    /// `system`, `summary` and other kinds are records about the session and are left out.
    ///
    /// A compacted session continues from its last `compact_boundary` record: the summary and
    /// kept turns written after it are the whole conversation the model has, and what came
    /// before is history for people, never sent again.
    pub fn messages(&self) -> Vec<Message> {
        let start = self
            .entries
            .iter()
            .rposition(TranscriptEntry::is_compact_boundary)
            .map_or(0, |at| at + 1);
        let conversation = self.entries[start..]
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::User | EntryKind::Assistant))
            .filter_map(|e| e.message.clone())
            .collect();
        repair::repair(conversation)
    }

    /// The uuid new entries should chain to: the last entry that has one.
    pub fn last_uuid(&self) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .map(|e| e.uuid.as_str())
            .find(|u| !u.is_empty())
    }

    /// One readable warning per skipped line, naming the file and line
    /// (`/…/x.jsonl:7: skipped a corrupt line: …`).
    pub fn warnings(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|s| format!("{}:{}: {}", self.path.display(), s.line, s.what()))
            .collect()
    }
}
