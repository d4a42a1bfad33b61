//! An incremental decoder for `text/event-stream`, shared by both providers.
//!
//! The network hands us chunks split anywhere: in the middle of a line, between the `\r` and
//! `\n` of a CRLF, inside a multi-byte UTF-8 character. The decoder therefore works on bytes and
//! only turns a line into text once the whole line is in; a line terminator byte can never sit
//! inside a UTF-8 sequence, so no character is ever cut. It follows the WHATWG rules: lines end in
//! LF, CR or CRLF; a blank line dispatches; `:` starts a comment; several `data:` lines join
//! with `\n`; one space after the colon is dropped; a leading byte-order mark is ignored.

use memchr::memchr2;

/// One dispatched event. `event` is `None` when the server sent no `event:` field (the OpenAI
/// protocol never does).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
    pub retry_ms: Option<u64>,
}

#[derive(Debug, Default)]
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
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk and appends every event it completes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if chunk.is_empty() {
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
                let line = std::mem::take(&mut self.partial);
                self.process_line(&line, out);
                self.partial = line;
                self.partial.clear();
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
        self.partial.extend_from_slice(chunk);
    }

    /// Ends the stream. A final event without its blank line is dispatched, as browsers do not
    /// but as a tolerant client should: some proxies drop the last empty line.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.process_line(&line, out);
        }
        self.dispatch(out);
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
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
    fn empty_data_line_yields_empty_payload() {
        let out = decode_in_pieces(b"data\n\ndata:\ndata:\n\n", &[]);
        assert_eq!(out[0].data, "");
        assert_eq!(out[1].data, "\n");
    }
}
