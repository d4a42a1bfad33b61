//! Turning Grep's hits into the text the model reads and the structured copy for printers.
//! Two limits apply to every mode: the model's `head_limit` (entries: lines or files) and a
//! fixed character budget, each announced in a closing note so the model knows to narrow.

use super::search::FileHit;
use super::OutputMode;
use serde_json::{json, Value};
use std::time::Duration;

/// The most characters of results the model is sent in one answer.
pub const MAX_OUTPUT_CHARS: usize = 30_000;

/// The hits of one search and how to show them.
pub(super) struct Report {
    pub hits: Vec<FileHit>,
    pub mode: OutputMode,
    pub head_limit: Option<usize>,
    /// Context lines were asked for, so files are separated by `--` as `rg` does.
    pub context: bool,
    pub elapsed: Duration,
}

/// Output lines gathered under both limits.
struct Capped {
    text: String,
    shown: usize,
    limit: Option<usize>,
    /// Why entries were left out, once one was.
    cut: Option<Cut>,
}

#[derive(Clone, Copy)]
enum Cut {
    HeadLimit,
    Chars,
}

impl Capped {
    fn new(limit: Option<usize>) -> Self {
        Self {
            text: String::new(),
            shown: 0,
            limit,
            cut: None,
        }
    }

    /// Adds one entry unless a limit is reached; false once nothing more fits.
    fn push(&mut self, entry: &str) -> bool {
        if self.cut.is_some() {
            return false;
        }
        if self.limit.is_some_and(|limit| self.shown >= limit) {
            self.cut = Some(Cut::HeadLimit);
            return false;
        }
        if self.text.len() + entry.len() + 1 > MAX_OUTPUT_CHARS {
            self.cut = Some(Cut::Chars);
            return false;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(entry);
        self.shown += 1;
        true
    }

    /// The closing note for a cut list of `total` `unit`s, if one was cut.
    fn note(&self, total: usize, unit: &str) -> Option<String> {
        let shown = self.shown;
        match self.cut? {
            Cut::HeadLimit => Some(format!(
                "(Showing the first {shown} of {total} {unit} because of head_limit. Raise \
                 head_limit or narrow the pattern, path or glob to see the rest.)"
            )),
            Cut::Chars => Some(format!(
                "(Output truncated at {MAX_OUTPUT_CHARS} characters: showing {shown} of {total} \
                 {unit}. Narrow the pattern, path, glob or type, or set head_limit.)"
            )),
        }
    }

    fn applied_limit(&self) -> Option<usize> {
        matches!(self.cut, Some(Cut::HeadLimit))
            .then_some(self.limit)
            .flatten()
    }
}

impl Report {
    pub(super) fn render(mut self) -> (String, Value) {
        match self.mode {
            OutputMode::FilesWithMatches => {
                self.hits.sort_unstable_by(|a, b| {
                    b.modified
                        .cmp(&a.modified)
                        .then_with(|| a.path.cmp(&b.path))
                });
            }
            OutputMode::Content | OutputMode::Count => {
                self.hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
            }
        }
        match self.mode {
            OutputMode::FilesWithMatches => self.files(),
            OutputMode::Content => self.content(),
            OutputMode::Count => self.count(),
        }
    }

    fn files(&self) -> (String, Value) {
        let total = self.hits.len();
        let mut list = Capped::new(self.head_limit);
        let shown: Vec<&str> = self
            .hits
            .iter()
            .map(|hit| hit.path.as_str())
            .take_while(|path| list.push(path))
            .collect();
        let text = if total == 0 {
            "No files found".to_string()
        } else {
            let plural = if total == 1 { "file" } else { "files" };
            with_note(
                format!("Found {total} {plural}\n{}", list.text),
                list.note(total, "files"),
            )
        };
        let value = self.structured(&list, &shown, None, None);
        (text, value)
    }

    fn content(&self) -> (String, Value) {
        let separators = if self.context {
            self.hits.len().saturating_sub(1)
        } else {
            0
        };
        let total_lines = self.hits.iter().map(|hit| hit.lines).sum::<usize>() + separators;
        let mut list = Capped::new(self.head_limit);
        let mut shown = Vec::new();
        'files: for (index, hit) in self.hits.iter().enumerate() {
            if self.context && index > 0 && !list.push("--") {
                break;
            }
            for line in hit.text.lines() {
                if !list.push(line) {
                    break 'files;
                }
            }
            shown.push(hit.path.as_str());
        }
        let text = if self.hits.is_empty() {
            "No matches found".to_string()
        } else {
            with_note(list.text.clone(), list.note(total_lines, "lines"))
        };
        let matches = self.hits.iter().map(|hit| hit.matches).sum::<u64>();
        let value = self.structured(&list, &shown, Some(&list.text), Some(matches));
        (text, value)
    }

    fn count(&self) -> (String, Value) {
        let total = self.hits.len();
        let matches = self.hits.iter().map(|hit| hit.matches).sum::<u64>();
        let mut list = Capped::new(self.head_limit);
        let shown: Vec<&str> = self
            .hits
            .iter()
            .take_while(|hit| list.push(&format!("{}:{}", hit.path, hit.matches)))
            .map(|hit| hit.path.as_str())
            .collect();
        let text = if total == 0 {
            "No matches found".to_string()
        } else {
            let lines = if matches == 1 { "line" } else { "lines" };
            let files = if total == 1 { "file" } else { "files" };
            with_note(
                format!(
                    "{}\n\nFound {matches} matching {lines} across {total} {files}.",
                    list.text
                ),
                list.note(total, "files"),
            )
        };
        let value = self.structured(&list, &shown, Some(&list.text), Some(matches));
        (text, value)
    }

    fn structured(
        &self,
        list: &Capped,
        shown: &[&str],
        content: Option<&str>,
        matches: Option<u64>,
    ) -> Value {
        let mut value = json!({
            "mode": self.mode.as_str(),
            "numFiles": self.hits.len(),
            "filenames": shown,
            "truncated": list.cut.is_some(),
            "durationMs": u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
        });
        if let Some(object) = value.as_object_mut() {
            if let Some(content) = content {
                object.insert("content".into(), content.into());
                object.insert("numLines".into(), list.shown.into());
            }
            if let Some(matches) = matches {
                object.insert("numMatches".into(), matches.into());
            }
            if let Some(limit) = list.applied_limit() {
                object.insert("appliedLimit".into(), limit.into());
            }
        }
        value
    }
}

fn with_note(mut text: String, note: Option<String>) -> String {
    if let Some(note) = note {
        text.push_str("\n\n");
        text.push_str(&note);
    }
    text
}
