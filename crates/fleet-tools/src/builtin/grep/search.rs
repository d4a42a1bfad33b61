//! Running one Grep: each walker thread owns a `Searcher`, a clone of the matcher and a text
//! buffer, formats its files' lines itself (so formatting is parallel too) and hands over one
//! [`FileHit`] per matching file; sorting happens once, afterwards.

use super::super::regular_file::{open_regular, open_walked};
use super::walk::{self, Collector, StopFlag};
use super::OutputMode;
use crate::permissions::ReadGuard;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::Override;
use ignore::types::Types;
use ignore::WalkState;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Matched lines longer than this (in characters) are cut: minified files would otherwise
/// fill the model's context with one line.
pub const MAX_LINE_CHARS: usize = 500;

/// Everything a search needs, validated.
#[derive(Debug)]
pub(super) struct Search {
    pub root: PathBuf,
    /// `root` is a file: search it alone, whatever `glob` and `type` say.
    pub single_file: bool,
    pub matcher: RegexMatcher,
    pub mode: OutputMode,
    pub line_numbers: bool,
    pub before: usize,
    pub after: usize,
    pub multiline: bool,
    pub overrides: Option<Override>,
    pub types: Option<Types>,
}

/// One file with at least one match.
#[derive(Debug)]
pub(super) struct FileHit {
    pub path: String,
    /// Only read in files_with_matches mode, where results are newest first.
    pub modified: SystemTime,
    /// Content mode: the formatted output lines, each ending in `\n`.
    pub text: String,
    /// How many lines `text` holds.
    pub lines: usize,
    /// Matching lines (a multi-line match counts once).
    pub matches: u64,
}

impl Search {
    fn searcher(&self) -> Searcher {
        let content = self.mode == OutputMode::Content;
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(content && self.line_numbers)
            .multi_line(self.multiline)
            .before_context(if content { self.before } else { 0 })
            .after_context(if content { self.after } else { 0 })
            .build()
    }

    /// Every matching file, in no particular order.
    pub(super) fn run(&self, cwd: &Path, guard: &Arc<ReadGuard>, stop: &StopFlag) -> Vec<FileHit> {
        if self.single_file {
            let mut buf = String::new();
            return self
                .search_file(&mut self.searcher(), &self.matcher, &self.root, &mut buf)
                .into_iter()
                .collect();
        }
        let mut builder = walk::walker(&self.root, cwd, guard);
        if let Some(overrides) = &self.overrides {
            builder.overrides(overrides.clone());
        }
        if let Some(types) = &self.types {
            builder.types(types.clone());
        }
        let shared = Mutex::new(Vec::new());
        builder.build_parallel().run(|| {
            let mut hits = Collector::new(&shared);
            let mut searcher = self.searcher();
            let matcher = self.matcher.clone();
            let mut buf = String::new();
            Box::new(move |entry| {
                if stop.is_set() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let found = self.search_file(&mut searcher, &matcher, entry.path(), &mut buf);
                    hits.local.extend(found);
                }
                WalkState::Continue
            })
        });
        walk::into_results(shared)
    }

    /// Searches one file; `buf` is the thread's scratch space, left empty afterwards.
    /// Unreadable, binary and non-regular files, and files whose reads would block, yield
    /// nothing.
    fn search_file(
        &self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        path: &Path,
        buf: &mut String,
    ) -> Option<FileHit> {
        buf.clear();
        let display = path.to_string_lossy();
        let mut sink = HitSink {
            mode: self.mode,
            line_numbers: self.line_numbers,
            prefix: &display,
            text: buf,
            lines: 0,
            matches: 0,
            binary: false,
        };
        // Opened without blocking, and only if regular: a FIFO or a `/proc` file that waits
        // for data is skipped (its read fails with WouldBlock) instead of hanging the search.
        // The file given as `path` may be a symlink; what a walk found is not one.
        let opened = if self.single_file {
            open_regular(path).and_then(|file| {
                let meta = file.metadata()?;
                Ok((file, meta))
            })
        } else {
            open_walked(path)
        };
        let (searched, meta) = match opened {
            Ok((file, meta)) => (
                searcher
                    .search_file(matcher, &file, &mut sink)
                    .map_err(|_| ()),
                Some(meta),
            ),
            Err(_) => (Err(()), None),
        };
        let (lines, matches, binary) = (sink.lines, sink.matches, sink.binary);
        if searched.is_err() || binary || matches == 0 {
            buf.clear();
            return None;
        }
        let modified = match meta {
            Some(meta) if self.mode == OutputMode::FilesWithMatches => {
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)
            }
            _ => SystemTime::UNIX_EPOCH,
        };
        Some(FileHit {
            path: display.into_owned(),
            modified,
            text: std::mem::take(buf),
            lines,
            matches,
        })
    }
}

/// Collects one file's results in the shape of the output mode.
struct HitSink<'a> {
    mode: OutputMode,
    line_numbers: bool,
    prefix: &'a str,
    text: &'a mut String,
    lines: usize,
    matches: u64,
    binary: bool,
}

impl HitSink<'_> {
    /// Appends `path:12:text` (a match) or `path-12-text` (context), like `rg -n`.
    fn push_line(&mut self, separator: char, number: Option<u64>, line: &[u8]) {
        let line = strip_terminator(line);
        self.text.push_str(self.prefix);
        self.text.push(separator);
        if let Some(number) = number {
            // Writing to a String cannot fail.
            let _ = write!(self.text, "{number}{separator}");
        }
        push_capped(self.text, &String::from_utf8_lossy(line));
        self.text.push('\n');
        self.lines += 1;
    }
}

impl Sink for HitSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matches += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let mut number = mat.line_number().filter(|_| self.line_numbers);
                for line in mat.lines() {
                    self.push_line(':', number, line);
                    number = number.map(|n| n + 1);
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if matches!(ctx.kind(), SinkContextKind::Before | SinkContextKind::After) {
            let number = ctx.line_number().filter(|_| self.line_numbers);
            self.push_line('-', number, ctx.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.text.push_str("--\n");
        self.lines += 1;
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn strip_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Appends `line`, cut after [`MAX_LINE_CHARS`] characters with a note of how much was left.
fn push_capped(out: &mut String, line: &str) {
    if line.len() <= MAX_LINE_CHARS {
        out.push_str(line);
        return;
    }
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            out.push_str(&line[..cut]);
            let _ = write!(out, " [… {rest} more characters]");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let line = "é".repeat(MAX_LINE_CHARS + 7);
        let mut out = String::new();
        push_capped(&mut out, &line);
        assert!(out.starts_with(&"é".repeat(MAX_LINE_CHARS)));
        assert!(out.ends_with(" [… 7 more characters]"));
    }

    #[test]
    fn line_terminators_are_dropped() {
        assert_eq!(strip_terminator(b"abc\r\n"), b"abc");
        assert_eq!(strip_terminator(b"abc"), b"abc");
    }
}
