//! An incremental decoder for `text/event-stream`, shared by both providers.
//!
//! The network hands us chunks split anywhere: in the middle of a line, between the `\r` and
//! `\n` of a CRLF, inside a multi-byte UTF-8 character. The decoder therefore works on bytes and
//! only turns a line into text once the whole line is in; a line terminator byte can never sit
//! inside a UTF-8 sequence, so no character is ever cut. It follows the WHATWG rules: lines end in
//! LF, CR or CRLF; a blank line dispatches; `:` starts a comment; several `data:` lines join
//! with `\n`; one space after the colon is dropped; a leading byte-order mark is ignored.
//!
//! What it buffers is bounded: a line longer than [`MAX_LINE_BYTES`] without its end, or an
//! event gathering more `data` than that, stops the decoder (see [`SseDecoder::overflow`])
//! instead of growing without end while a broken or hostile server keeps sending.

use memchr::memchr2;
use std::fmt;

/// The most bytes one line, and the `data` of one event, may hold. An event of either
/// provider is one JSON object of at most a few kilobytes (a whole tool input sent at once by
/// a local server, at most a few megabytes); a server sending more without a line end is not
/// speaking SSE, and buffering it would let it take all memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event. `event` is `None` when the server sent no `event:` field (the OpenAI
/// protocol never does).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
    pub retry_ms: Option<u64>,
}

/// The stream went past [`MAX_LINE_BYTES`]; the decoder dispatches nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseOverflow {
    /// A line grew past the limit without its end.
    Line { limit: usize },
    /// One event's `data` lines added up to more than the limit before its blank line.
    Event { limit: usize },
}

impl fmt::Display for SseOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Line { limit } => write!(
                f,
                "the server sent a line of more than {limit} bytes without a line end"
            ),
            Self::Event { limit } => write!(
                f,
                "the server sent an event with more than {limit} bytes of data"
            ),
        }
    }
}

#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the line not yet terminated.
    partial: Vec<u8>,
    /// The previous chunk ended in `\r`, so a `\n` opening this one completes that CRLF.
    after_cr: bool,
    /// The stream's first bytes have been seen (the BOM check is done).
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry_ms: Option<u64>,
    /// The most bytes a line or an event's data may hold.
    limit: usize,
    /// Set once the stream went past `limit`; nothing is decoded after it.
    overflow: Option<SseOverflow>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limit(MAX_LINE_BYTES)
    }
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that buffers at most `limit` bytes of one line or one event's data (tests and
    /// fuzzing use small limits; everything else [`MAX_LINE_BYTES`]).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            partial: Vec::new(),
            after_cr: false,
            started: false,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            retry_ms: None,
            limit,
            overflow: None,
        }
    }

    /// Why decoding stopped, if the stream went past the limit. The events before it were
    /// dispatched; a caller should end the response with this as its error.
    pub fn overflow(&self) -> Option<&SseOverflow> {
        self.overflow.as_ref()
    }

    /// Stops decoding and lets go of what was buffered.
    fn overflowed(&mut self, overflow: SseOverflow) {
        self.overflow = Some(overflow);
        self.partial = Vec::new();
        self.data = String::new();
        self.has_data = false;
    }

    /// Feeds a chunk and appends every event it completes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if chunk.is_empty() || self.overflow.is_some() {
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        if !self.started {
            // The BOM may itself arrive split; wait until three bytes (or a line) are in.
            self.partial.extend_from_slice(chunk);
            if self.partial.len() < 3 && memchr2(b'\n', b'\r', &self.partial).is_none() {
                return;
            }
            self.started = true;
            let buffered = std::mem::take(&mut self.partial);
            let body = buffered.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buffered);
            self.push_lines(body, out);
            return;
        }
        self.push_lines(chunk, out);
    }

    fn push_lines(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        while let Some(pos) = memchr2(b'\n', b'\r', chunk) {
            let was_cr = chunk[pos] == b'\r';
            if self.partial.is_empty() {
                self.process_line(&chunk[..pos], out);
            } else {
                self.partial.extend_from_slice(&chunk[..pos]);
                let mut line = std::mem::take(&mut self.partial);
                self.process_line(&line, out);
                if self.overflow.is_none() {
                    // Keep the buffer's allocation for the next line.
                    line.clear();
                    self.partial = line;
                }
            }
            if self.overflow.is_some() {
                return;
            }
            chunk = &chunk[pos + 1..];
            if was_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        if self.partial.len() + chunk.len() > self.limit {
            self.overflowed(SseOverflow::Line { limit: self.limit });
            return;
        }
        self.partial.extend_from_slice(chunk);
    }

    /// Ends the stream. A final event without its blank line is dispatched, as browsers do not
    /// but as a tolerant client should: some proxies drop the last empty line.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if self.overflow.is_some() {
            return;
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.process_line(&line, out);
        }
        self.dispatch(out);
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.len() > self.limit {
            self.overflowed(SseOverflow::Line { limit: self.limit });
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    self.overflowed(SseOverflow::Event { limit: self.limit });
                    return;
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(value.into_owned()),
            b"id" if !value.contains('\0') => self.id = Some(value.into_owned()),
            b"retry" => self.retry_ms = value.parse().ok().or(self.retry_ms),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
            retry_ms: self.retry_ms,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut start = 0;
        for &cut in cuts {
            d.push(&input[start..cut], &mut out);
            start = cut;
        }
        d.push(&input[start..], &mut out);
        d.finish(&mut out);
        out
    }

    const STREAM: &str = "\u{feff}: keep-alive comment\r\nevent: message_start\r\ndata: {\"a\":\"é🦀\"}\r\n\r\nevent: ping\ndata: {}\n\n:c\rdata: line one\rdata:line two\r\r";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: Some("message_start".into()),
                data: "{\"a\":\"é🦀\"}".into(),
                ..Default::default()
            },
            SseEvent {
                event: Some("ping".into()),
                data: "{}".into(),
                ..Default::default()
            },
            SseEvent {
                event: None,
                data: "line one\nline two".into(),
                ..Default::default()
            },
        ]
    }

    #[test]
    fn whole_stream_decodes() {
        assert_eq!(decode_in_pieces(STREAM.as_bytes(), &[]), expected());
    }

    #[test]
    fn every_single_split_point_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                decode_in_pieces(bytes, &[cut]),
                expected(),
                "split at byte {cut}"
            );
        }
    }

    #[test]
    fn every_pair_of_split_points_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                assert_eq!(
                    decode_in_pieces(bytes, &[a, b]),
                    expected(),
                    "splits at {a} and {b}"
                );
            }
        }
    }

    #[test]
    fn byte_at_a_time_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(decode_in_pieces(bytes, &cuts), expected());
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_name_resets() {
        let out = decode_in_pieces(b"event: lonely\n\ndata: x\n\n", &[]);
        assert_eq!(
            out,
            vec![SseEvent {
                data: "x".into(),
                ..Default::default()
            }]
        );
    }

    #[test]
    fn trailing_event_without_blank_line_is_dispatched_at_finish() {
        let out = decode_in_pieces(b"data: [DONE]", &[]);
        assert_eq!(out[0].data, "[DONE]");
    }

    #[test]
    fn id_and_retry_fields_are_kept() {
        let out = decode_in_pieces(b"id: 7\nretry: 1500\ndata: x\n\n", &[]);
        assert_eq!(out[0].id.as_deref(), Some("7"));
        assert_eq!(out[0].retry_ms, Some(1500));
    }

    #[test]
    fn a_line_without_end_past_the_limit_stops_the_decoder_without_growing() {
        let mut d = SseDecoder::with_limit(64);
        let mut out = Vec::new();
        d.push(b"data: first\n\n", &mut out);
        for _ in 0..1000 {
            d.push(
                b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                &mut out,
            );
        }
        d.push(b"\n\ndata: after\n\n", &mut out);
        d.finish(&mut out);
        assert_eq!(out.len(), 1, "only the event before the long line: {out:?}");
        assert_eq!(out[0].data, "first");
        assert_eq!(d.overflow(), Some(&SseOverflow::Line { limit: 64 }));
        assert!(d.partial.capacity() <= 64 + 64, "the long line was let go");
        assert!(d
            .overflow()
            .is_some_and(|o| o.to_string().contains("more than 64 bytes")));
    }

    #[test]
    fn a_long_line_in_one_chunk_is_refused_like_a_cut_one() {
        let line = format!("data: {}\n\n", "y".repeat(100));
        let mut whole = SseDecoder::with_limit(64);
        let mut out = Vec::new();
        whole.push(line.as_bytes(), &mut out);
        assert!(out.is_empty());
        assert_eq!(whole.overflow(), Some(&SseOverflow::Line { limit: 64 }));
    }

    #[test]
    fn an_event_gathering_data_past_the_limit_stops_the_decoder() {
        let mut d = SseDecoder::with_limit(64);
        let mut out = Vec::new();
        for _ in 0..100 {
            d.push(b"data: 0123456789\n", &mut out);
        }
        d.push(b"\n", &mut out);
        d.finish(&mut out);
        assert!(out.is_empty());
        assert_eq!(d.overflow(), Some(&SseOverflow::Event { limit: 64 }));
        assert!(d.data.capacity() <= 64);
    }

    #[test]
    fn streams_within_the_limit_decode_as_before() {
        const { assert!(MAX_LINE_BYTES >= 1024 * 1024) };
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let big = format!("data: {}\n\n", "z".repeat(1024 * 1024));
        d.push(big.as_bytes(), &mut out);
        assert_eq!(out[0].data.len(), 1024 * 1024);
        assert!(d.overflow().is_none());
    }

    #[test]
    fn empty_data_line_yields_empty_payload() {
        let out = decode_in_pieces(b"data\n\ndata:\ndata:\n\n", &[]);
        assert_eq!(out[0].data, "");
        assert_eq!(out[1].data, "\n");
    }
}
