//! A command's output kept in bounded memory: the start and the end of each stream are kept and
//! the middle is only counted, so `cat` of a huge log costs no more memory than `ls`, and the
//! model still sees how the output began (the command's echo, the first error) and how it
//! ended (the summary, the exit message).

use std::collections::VecDeque;

/// How far from a cut we look for a line break, so cuts fall between lines when they can.
const SNAP_WINDOW: usize = 256;

/// One stream as it is read: the head fills first, then the tail as a ring of the latest bytes.
#[derive(Debug, Clone)]
pub(super) struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    /// Whether the byte just before the tail (evicted or at the head's end) was a line break,
    /// so a tail that starts at a line start is not cut a second time.
    tail_at_line_start: bool,
    total_bytes: u64,
    total_lines: u64,
}

impl Capture {
    /// Keeps at most `limit` bytes: half from the start, half from the end.
    pub(super) fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        let tail_cap = limit - head_cap;
        Self {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap,
            tail_at_line_start: true,
            total_bytes: 0,
            total_lines: 0,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        self.total_lines += count_lines(bytes);
        let room = self
            .head_cap
            .saturating_sub(self.head.len())
            .min(bytes.len());
        let (to_head, rest) = bytes.split_at(room);
        self.head.extend_from_slice(to_head);
        if rest.is_empty() {
            return;
        }
        let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
        if overflow == 0 {
            if self.tail.is_empty() {
                self.tail_at_line_start = self.head.last().is_none_or(|&b| b == b'\n');
            }
            self.tail.extend(rest);
        } else if overflow >= self.tail.len() {
            // The whole ring is replaced; the byte before the new tail comes from `rest`.
            let skip = overflow - self.tail.len();
            self.tail_at_line_start = match skip.checked_sub(1) {
                Some(before) => rest.get(before) == Some(&b'\n'),
                None => self.tail.back().is_none_or(|&b| b == b'\n'),
            };
            self.tail.clear();
            self.tail.extend(&rest[skip..]);
        } else {
            self.tail_at_line_start = self.tail.get(overflow - 1) == Some(&b'\n');
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// The captured text, decoded (invalid UTF-8 becomes U+FFFD) and without trailing newlines.
    pub(super) fn finish(self) -> Captured {
        let mut head = self.head;
        let tail = Vec::from(self.tail);
        let kept = (head.len() + tail.len()) as u64;
        if kept == self.total_bytes {
            head.extend_from_slice(&tail);
            let mut text = String::from_utf8_lossy(&head).into_owned();
            trim_trailing_newlines(&mut text);
            return Captured {
                head: text,
                ..Captured::default()
            };
        }
        // A cut may fall inside a character: drop its pieces rather than show U+FFFD for them.
        let head_end = complete_prefix_len(&head);
        let tail_start = tail
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count();
        let lines = self.total_lines - count_lines(&head) - count_lines(&tail);
        let bytes = self.total_bytes - kept + (head.len() - head_end + tail_start) as u64;
        let mut captured = Captured {
            head: String::from_utf8_lossy(&head[..head_end]).into_owned(),
            tail: String::from_utf8_lossy(&tail[tail_start..]).into_owned(),
            tail_at_line_start: self.tail_at_line_start && tail_start == 0,
            omitted: Some(Omitted { bytes, lines }),
        };
        trim_trailing_newlines(&mut captured.tail);
        captured.snap();
        captured
    }
}

/// What was dropped from the middle of a stream.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Omitted {
    pub bytes: u64,
    pub lines: u64,
}

impl Omitted {
    fn add(&mut self, dropped: &str) {
        self.bytes += dropped.len() as u64;
        self.lines += count_lines(dropped.as_bytes());
    }
}

/// A finished stream: `head`, then (when `omitted` is set) a marker and `tail`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Captured {
    head: String,
    tail: String,
    tail_at_line_start: bool,
    omitted: Option<Omitted>,
}

impl Captured {
    /// Bytes of text kept (the marker not counted).
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    #[cfg(test)]
    pub(super) fn omitted(&self) -> Option<Omitted> {
        self.omitted
    }

    /// Drops text from the middle until at most `limit` bytes are kept, start and end alike.
    pub(super) fn shrink_to(&mut self, limit: usize) {
        if self.len() <= limit {
            return;
        }
        let omitted = self.omitted.get_or_insert_with(Omitted::default);
        if self.tail.is_empty() {
            let middle = ceil_boundary(&self.head, self.head.len() / 2);
            self.tail = self.head.split_off(middle);
            self.tail_at_line_start = self.head.is_empty() || self.head.ends_with('\n');
        }
        let head_keep = self
            .head
            .len()
            .min((limit / 2).max(limit.saturating_sub(self.tail.len())));
        let tail_keep = self.tail.len().min(limit - head_keep);
        let cut = floor_boundary(&self.head, head_keep);
        omitted.add(&self.head[cut..]);
        self.head.truncate(cut);
        let cut = ceil_boundary(&self.tail, self.tail.len() - tail_keep);
        if cut > 0 {
            self.tail_at_line_start = self.tail[..cut].ends_with('\n');
            omitted.add(&self.tail[..cut]);
            self.tail.drain(..cut);
        }
        self.snap();
    }

    /// Moves both cuts to line breaks near them, so the marker sits between whole lines.
    fn snap(&mut self) {
        let Some(omitted) = self.omitted.as_mut() else {
            return;
        };
        let bytes = self.head.as_bytes();
        let window = bytes.len().saturating_sub(SNAP_WINDOW);
        if let Some(at) = bytes[window..].iter().rposition(|&b| b == b'\n') {
            let cut = window + at + 1;
            omitted.add(&self.head[cut..]);
            self.head.truncate(cut);
        }
        if !self.tail_at_line_start {
            let bytes = self.tail.as_bytes();
            let window = bytes.len().min(SNAP_WINDOW);
            if let Some(at) = bytes[..window].iter().position(|&b| b == b'\n') {
                omitted.add(&self.tail[..=at]);
                self.tail.drain(..=at);
                self.tail_at_line_start = true;
            }
        }
    }

    /// The text the model reads.
    pub(super) fn render(&self) -> String {
        let Some(omitted) = self.omitted else {
            return self.head.clone();
        };
        let separator = if self.head.is_empty() || self.head.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let lines = if omitted.lines == 1 { "line" } else { "lines" };
        format!(
            "{head}{separator}… [{} {lines} / {} bytes truncated; redirect the output to a file \
             and use Read or Grep to see all of it] …\n{tail}",
            omitted.lines,
            omitted.bytes,
            head = self.head,
            tail = self.tail,
        )
    }
}

/// Shares `limit` bytes between stdout and stderr: a stream that needs less than half leaves
/// the rest to the other.
pub(super) fn fit(stdout: &mut Captured, stderr: &mut Captured, limit: usize) {
    if stdout.len() + stderr.len() <= limit {
        return;
    }
    let half = limit / 2;
    if stderr.len() <= half {
        stdout.shrink_to(limit - stderr.len());
    } else if stdout.len() <= half {
        stderr.shrink_to(limit - stdout.len());
    } else {
        stdout.shrink_to(half);
        stderr.shrink_to(limit - half);
    }
}

fn count_lines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

fn trim_trailing_newlines(text: &mut String) {
    let end = text.trim_end_matches(['\n', '\r']).len();
    text.truncate(end);
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The length of `bytes` without a character that was cut off at its end.
fn complete_prefix_len(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for at in (len.saturating_sub(4)..len).rev() {
        let lead = bytes[at];
        if is_continuation(lead) {
            continue;
        }
        let needed = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if len - at < needed { at } else { len };
    }
    len
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn capture(limit: usize, chunks: &[&[u8]]) -> Captured {
        let mut capture = Capture::new(limit);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    fn numbered_lines(count: usize) -> String {
        (1..=count).map(|n| format!("{n}\n")).collect()
    }

    #[test]
    fn short_output_is_kept_whole_without_trailing_newlines() {
        let captured = capture(100, &[b"one\n", b"two\n\n"]);
        assert_eq!(captured.render(), "one\ntwo");
        assert_eq!(captured.omitted(), None);
    }

    #[test]
    fn output_of_exactly_the_limit_is_not_truncated() {
        let captured = capture(8, &[b"abcd", b"efgh"]);
        assert_eq!(captured.render(), "abcdefgh");
    }

    #[test]
    fn long_output_keeps_whole_lines_at_both_ends_and_counts_the_rest() {
        let text = numbered_lines(10_000);
        // Chunks of odd sizes, as pipes deliver them.
        let chunks: Vec<&[u8]> = text.as_bytes().chunks(977).collect();
        let captured = capture(2_000, &chunks);
        let rendered = captured.render();
        assert!(rendered.starts_with("1\n2\n3\n"), "{rendered}");
        assert!(rendered.ends_with("\n9999\n10000"), "{rendered}");
        let omitted = captured.omitted().unwrap();
        let kept_lines = rendered.lines().count() as u64 - 1; // minus the marker line
        assert_eq!(omitted.lines + kept_lines, 10_000);
        assert_eq!(
            omitted.bytes + captured.len() as u64 + 1, // plus the trimmed final newline
            text.len() as u64
        );
        assert!(rendered.contains(&format!("… [{} lines / ", omitted.lines)));
        // Every kept line is whole: the head counts up from 1, the tail up to 10000.
        let (head, tail) = rendered.split_once("\n…").unwrap();
        let tail = tail.split_once('\n').unwrap().1;
        let head: Vec<usize> = head.lines().map(|l| l.parse().unwrap()).collect();
        let tail: Vec<usize> = tail.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(head, (1..=head.len()).collect::<Vec<_>>());
        assert_eq!(tail, (10_001 - tail.len()..=10_000).collect::<Vec<_>>());
    }

    #[test]
    fn a_tail_ring_replaced_in_one_chunk_keeps_the_latest_bytes() {
        let captured = capture(10, &[b"abcde", b"0123456789xyz\n"]);
        assert!(captured.render().starts_with("abcde\n… [0 lines / 9 bytes"));
        assert!(captured.render().ends_with("…\n9xyz"));
    }

    #[test]
    fn characters_cut_at_either_end_are_dropped_not_mangled() {
        // Each "é" is two bytes; the head (5 bytes) and tail (5 bytes) cut through one.
        let text = "ééééééééééééé".as_bytes();
        let rendered = capture(10, &[text]).render();
        assert!(!rendered.contains('\u{FFFD}'), "{rendered}");
        assert!(rendered.starts_with("éé\n…"), "{rendered}");
        assert!(rendered.ends_with("\néé"), "{rendered}");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let rendered = capture(100, &[b"ok \xff\xfe done"]).render();
        assert_eq!(rendered, "ok \u{FFFD}\u{FFFD} done");
    }

    #[test]
    fn fit_gives_a_small_stream_its_whole_text_and_the_rest_to_the_other() {
        let mut stdout = capture(10_000, &[numbered_lines(2_000).as_bytes()]);
        let mut stderr = capture(10_000, &[b"warning: something\n"]);
        fit(&mut stdout, &mut stderr, 1_000);
        assert_eq!(stderr.render(), "warning: something");
        assert!(stdout.len() <= 1_000 - stderr.len());
        let rendered = stdout.render();
        assert!(rendered.starts_with("1\n2\n"), "{rendered}");
        assert!(rendered.ends_with("\n2000"), "{rendered}");
        let omitted = stdout.omitted().unwrap();
        assert_eq!(omitted.lines + rendered.lines().count() as u64 - 1, 2_000);
    }

    #[test]
    fn fit_halves_the_limit_when_both_streams_are_long() {
        let mut stdout = capture(10_000, &[numbered_lines(3_000).as_bytes()]);
        let mut stderr = capture(10_000, &[numbered_lines(3_000).as_bytes()]);
        fit(&mut stdout, &mut stderr, 2_000);
        assert!(stdout.len() <= 1_000 && stderr.len() <= 1_000);
        for stream in [&stdout, &stderr] {
            let rendered = stream.render();
            assert!(rendered.starts_with("1\n2\n") && rendered.ends_with("\n3000"));
        }
    }
}
