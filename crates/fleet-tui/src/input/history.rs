//! What the person submitted before, newest last: browsed with Up/Down, searched with Ctrl+R,
//! and kept between sessions as JSON lines when a file is given. The file is a convenience:
//! a line that does not parse is skipped and a file that cannot be written is logged, never
//! put in the person's way.

use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Entries kept (in memory, and in the file when it is rewritten).
pub const MAX_ENTRIES: usize = 500;

/// One line of the history file.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    text: String,
}

/// Where browsing with Up/Down is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Newer<'a> {
    Entry(&'a str),
    /// Past the newest entry: the draft comes back.
    Draft,
    /// Not browsing.
    None,
}

#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
    /// Index of the entry shown while browsing.
    position: Option<usize>,
}

impl History {
    /// Loads `file` when given; a missing file is an empty history.
    pub fn load(file: Option<PathBuf>) -> Self {
        let mut history = Self {
            entries: Vec::new(),
            file,
            position: None,
        };
        if let Some(path) = history.file.clone() {
            history.read(&path);
        }
        history
    }

    fn read(&mut self, path: &Path) {
        let content = match std::fs::read_to_string(path) {
            Ok(content) => content,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "prompt history not read");
                return;
            }
        };
        let mut lines = 0;
        for raw in content.lines().filter(|l| !l.trim().is_empty()) {
            lines += 1;
            match serde_json::from_str::<Line>(raw) {
                Ok(line) => self.push(line.text),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "history line skipped");
                }
            }
        }
        if self.entries.len() > MAX_ENTRIES {
            self.entries.drain(..self.entries.len() - MAX_ENTRIES);
        }
        if lines > 2 * MAX_ENTRIES {
            self.rewrite(path);
        }
    }

    /// Keeps the file from growing without end: only the kept entries are written back.
    fn rewrite(&self, path: &Path) {
        let tmp = path.with_extension("jsonl.tmp");
        let result = private_file(&tmp, false).and_then(|mut f| {
            for text in &self.entries {
                writeln!(f, "{}", encode(text))?;
            }
            f.sync_all()
        });
        if let Err(e) = result.and_then(|()| std::fs::rename(&tmp, path)) {
            tracing::warn!(path = %path.display(), error = %e, "prompt history not compacted");
        }
    }

    fn push(&mut self, text: String) {
        if self.entries.last() != Some(&text) {
            self.entries.push(text);
        }
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Adds a submission (not twice in a row) and appends it to the file.
    pub fn record(&mut self, text: &str) {
        self.position = None;
        if text.trim().is_empty() || self.entries.last().is_some_and(|l| l == text) {
            return;
        }
        self.entries.push(text.to_string());
        if self.entries.len() > MAX_ENTRIES {
            self.entries.remove(0);
        }
        if let Some(path) = &self.file {
            if let Err(e) = append(path, text) {
                tracing::warn!(path = %path.display(), error = %e, "prompt history not saved");
            }
        }
    }

    pub fn is_browsing(&self) -> bool {
        self.position.is_some()
    }

    /// Stops browsing (the person edited what was shown).
    pub fn reset(&mut self) {
        self.position = None;
    }

    /// One entry older; `None` when there is none (the shown entry stays).
    pub fn older(&mut self) -> Option<&str> {
        let next = match self.position {
            None => self.entries.len().checked_sub(1)?,
            Some(0) => return None,
            Some(p) => p - 1,
        };
        self.position = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// One entry newer, or back to the draft after the newest.
    pub fn newer(&mut self) -> Newer<'_> {
        match self.position {
            None => Newer::None,
            Some(p) if p + 1 >= self.entries.len() => {
                self.position = None;
                Newer::Draft
            }
            Some(p) => {
                self.position = Some(p + 1);
                self.entries
                    .get(p + 1)
                    .map_or(Newer::Draft, |e| Newer::Entry(e))
            }
        }
    }
}

fn encode(text: &str) -> String {
    serde_json::to_string(&Line {
        text: text.to_string(),
    })
    .unwrap_or_default()
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = private_file(path, true)?;
    // One write per line, so two fleets appending at once do not interleave within a line.
    file.write_all(format!("{}\n", encode(text)).as_bytes())
}

/// Prompts can hold secrets a person pasted: the history is readable by its owner only.
fn private_file(path: &Path, append: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = OpenOptions::new();
    options.create(true).mode(0o600);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    options.open(path)
}
