//! How far an agent got, read back from its transcript: what it last said and what it used.
//!
//! When an agent's process died mid-task, its transcript is the only record of its work.
//! Reading it line by line keeps memory to one line and the latest text, however long the
//! agent ran.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::{Duration, SystemTime};

use fleet_protocol::{Role, Usage};

use super::{EntryKind, Lines, TranscriptEntry};
use crate::error::{Result, StoreError};

/// What an agent's transcript shows of its work.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TranscriptProgress {
    /// The text of its latest reply that said anything.
    pub last_text: Option<String>,
    /// Its replies so far.
    pub replies: u64,
    /// Tool calls it made.
    pub tool_uses: u64,
    /// Tokens its replies reported (input, output and cache).
    pub total_tokens: u64,
    /// From its first line to its last.
    pub elapsed: Duration,
}

impl TranscriptProgress {
    /// Reads the transcript at `path`. Lines that do not parse are passed over, as when a
    /// session is loaded.
    pub fn read(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
        let mut reader = BufReader::new(file);
        let mut lines = Lines::new(&mut reader, path);
        let mut progress = Self::default();
        let (mut first, mut last): (Option<SystemTime>, Option<SystemTime>) = (None, None);
        while let Some((_, line)) = lines.next_line()? {
            let Ok(entry) = serde_json::from_slice::<TranscriptEntry>(line) else {
                continue;
            };
            if let Some(at) = entry.time() {
                first.get_or_insert(at);
                last = Some(at);
            }
            progress.add(&entry);
        }
        if let (Some(first), Some(last)) = (first, last) {
            progress.elapsed = last.duration_since(first).unwrap_or_default();
        }
        Ok(progress)
    }

    fn add(&mut self, entry: &TranscriptEntry) {
        let Some(message) = &entry.message else {
            return;
        };
        if entry.kind != EntryKind::Assistant || message.role != Role::Assistant {
            return;
        }
        self.replies += 1;
        self.tool_uses += message.tool_uses().count() as u64;
        let text = message.text();
        if !text.trim().is_empty() {
            self.last_text = Some(text);
        }
        if let Some(usage) = entry
            .extra
            .get("usage")
            .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok())
        {
            self.total_tokens += usage.total();
        }
    }
}
