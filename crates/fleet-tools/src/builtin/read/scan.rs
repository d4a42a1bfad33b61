//! One streaming pass over a file: the lines of the requested window are kept, every other byte
//! is only counted and hashed. Memory stays bounded by the window (a few kilobytes per line at
//! most), whatever the size of the file or the length of its lines.

use super::format::{cut_line, MAX_LINE_CHARS};
use crate::file_state::ContentHasher;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use tokio_util::sync::CancellationToken;

/// Enough bytes to hold `MAX_LINE_CHARS` characters of any UTF-8 text (plus a partial one),
/// so a cut line always shows its full allowance.
const KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;
/// A NUL byte in this many leading bytes marks a binary file (the heuristic git and grep use).
const SNIFF_BYTES: u64 = 8 * 1024;
const CHUNK_BYTES: usize = 64 * 1024;

/// Which lines to keep.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    /// 1-based number of the first line to keep.
    pub first_line: u64,
    /// At most this many lines.
    pub limit: u64,
    /// At most this many bytes of kept text; at least one line is kept regardless.
    pub budget_bytes: usize,
}

/// Why the kept lines end where they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The file ended, or the line limit was reached.
    LimitOrEnd,
    /// The byte budget was spent before the line limit.
    Budget,
}

#[derive(Debug)]
pub(crate) struct Scan {
    /// The kept lines, without line terminators, cut to `MAX_LINE_CHARS`.
    pub lines: Vec<String>,
    pub total_lines: u64,
    pub stop: Stop,
    /// Bytes in the whole file, and their digest.
    pub len: u64,
    pub hash: u64,
}

#[derive(Debug)]
pub(crate) enum ScanError {
    Binary,
    Cancelled,
    Io(std::io::Error),
}

impl From<std::io::Error> for ScanError {
    fn from(err: std::io::Error) -> Self {
        Self::Io(err)
    }
}

/// Reads `reader` to its end once, keeping the lines of `window`.
pub(crate) fn scan(
    reader: impl Read,
    window: Window,
    cancel: &CancellationToken,
) -> Result<Scan, ScanError> {
    let mut reader = BufReader::with_capacity(CHUNK_BYTES, reader);
    let mut state = State::new(window);
    let mut hasher = ContentHasher::default();
    let mut len: u64 = 0;
    let mut last_byte = None;
    loop {
        if cancel.is_cancelled() {
            return Err(ScanError::Cancelled);
        }
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        if chunk.is_empty() {
            break;
        }
        if len < SNIFF_BYTES {
            let sniff = chunk.len().min((SNIFF_BYTES - len) as usize);
            if chunk[..sniff].contains(&0) {
                return Err(ScanError::Binary);
            }
        }
        hasher.update(chunk);
        state.feed(chunk);
        len += chunk.len() as u64;
        last_byte = chunk.last().copied();
        let consumed = chunk.len();
        reader.consume(consumed);
    }
    // A last line without a terminator is still a line.
    if last_byte.is_some_and(|b| b != b'\n') {
        state.end_line();
    }
    Ok(Scan {
        lines: state.kept,
        total_lines: state.newlines,
        stop: state.stop,
        len,
        hash: hasher.finish(),
    })
}

/// Where the pass is: which line it is in, what it keeps.
struct State {
    window: Window,
    /// Lines ended so far (by `\n`, or by the end of the file).
    newlines: u64,
    /// Whether lines may still be kept.
    open: bool,
    current: LineBuf,
    kept: Vec<String>,
    kept_bytes: usize,
    stop: Stop,
}

impl State {
    fn new(window: Window) -> Self {
        Self {
            window,
            newlines: 0,
            open: window.limit > 0,
            current: LineBuf::default(),
            kept: Vec::new(),
            kept_bytes: 0,
            stop: Stop::LimitOrEnd,
        }
    }

    /// The 1-based number of the line being read now.
    fn line_no(&self) -> u64 {
        self.newlines + 1
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while self.open && !bytes.is_empty() {
            let keep = self.line_no() >= self.window.first_line;
            match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    if keep {
                        self.current.push(&bytes[..at]);
                    }
                    self.end_line();
                    bytes = &bytes[at + 1..];
                }
                None => {
                    if keep {
                        self.current.push(bytes);
                    }
                    bytes = &[];
                }
            }
        }
        // Past the window only the count matters; this loop vectorises well.
        self.newlines += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    }

    fn end_line(&mut self) {
        if self.open && self.line_no() >= self.window.first_line {
            let line = self.current.take();
            if !self.kept.is_empty() && self.kept_bytes + line.len() > self.window.budget_bytes {
                self.open = false;
                self.stop = Stop::Budget;
            } else {
                self.kept_bytes += line.len() + 1;
                self.kept.push(line);
                if self.kept.len() as u64 >= self.window.limit {
                    self.open = false;
                }
            }
        }
        self.newlines += 1;
    }
}

/// The start of one line (up to `KEEP_BYTES`) and what is known of the rest.
#[derive(Default)]
struct LineBuf {
    kept: Vec<u8>,
    /// Every byte of the line, kept or not.
    bytes: usize,
    /// Characters in the whole line (UTF-8 lead bytes; exact for valid text).
    chars: usize,
    ends_with_cr: bool,
}

impl LineBuf {
    fn push(&mut self, bytes: &[u8]) {
        let room = KEEP_BYTES.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.bytes += bytes.len();
        self.chars += bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        if let Some(&last) = bytes.last() {
            self.ends_with_cr = last == b'\r';
        }
    }

    /// The line as text (invalid UTF-8 replaced), `\r` of a CRLF ending dropped, long lines cut.
    fn take(&mut self) -> String {
        let mut kept = std::mem::take(&mut self.kept);
        let mut chars = self.chars;
        if self.ends_with_cr {
            chars -= 1;
            if kept.len() == self.bytes {
                kept.pop();
            }
        }
        *self = Self::default();
        let text = String::from_utf8_lossy(&kept);
        cut_line(&text, chars)
    }
}
