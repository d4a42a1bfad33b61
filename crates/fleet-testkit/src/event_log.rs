//! The request event log: one JSON line per event of a request's life, appended to a file
//! (`request_log_file` in a scenario, `fleet dev fake-model --log FILE`), so that a client
//! that hangs can be read from the server's side too — did the request arrive, on which
//! connection (the client's port), did the first byte leave, did the reply end, and how.
//!
//! Lines, all with `event`, `seq` (the request's number), `t_ms` (since the server started)
//! and `unix_ms`:
//!
//! - `received`: `conn`, `peer_port`, `path`, `rule` (or null), `stream`, `status`;
//! - `first_byte`: the first piece of the body was handed to the connection;
//! - `finished`: `bytes`, `writes` (SSE events unless `chunk_size` splits them) and `ended`:
//!   `complete`, `error_status` (an error response), `dropped_by_fault`, `reset_by_fault`
//!   or `client_gone` (the body was dropped before its end: the client closed).
//!
//! Off by default. When on, each line is written and flushed under one lock (a few
//! microseconds): a log that is cheap enough to leave on during a soak, and complete up to
//! the last line when the server is killed.

use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How a reply ended, as the log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Complete,
    ErrorStatus,
    DroppedByFault,
    ResetByFault,
    ClientGone,
}

impl Ended {
    fn name(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::ErrorStatus => "error_status",
            Self::DroppedByFault => "dropped_by_fault",
            Self::ResetByFault => "reset_by_fault",
            Self::ClientGone => "client_gone",
        }
    }
}

/// The open log file.
pub(crate) struct EventLog {
    out: Mutex<BufWriter<File>>,
    started: Instant,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog").finish_non_exhaustive()
    }
}

impl EventLog {
    /// Opens `path` for appending (created if absent).
    pub fn open(path: &Path, started: Instant) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            out: Mutex::new(BufWriter::new(file)),
            started,
        })
    }

    fn write(&self, event: &str, seq: u64, mut fields: Value) {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        if let Value::Object(map) = &mut fields {
            map.insert("event".into(), json!(event));
            map.insert("seq".into(), json!(seq));
            map.insert("t_ms".into(), json!(self.started.elapsed().as_millis()));
            map.insert("unix_ms".into(), json!(unix_ms));
        }
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        // A log that cannot be written must not take the server down: it is a diagnostic.
        let _ = serde_json::to_writer(&mut *out, &fields);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }

    /// A request arrived and was given (or not) a rule.
    pub fn received(&self, seq: u64, at: Received<'_>) {
        self.write(
            "received",
            seq,
            json!({"conn": at.conn, "peer_port": at.peer_port, "path": at.path,
                   "rule": at.rule, "stream": at.stream, "status": at.status}),
        );
    }

    /// A reply that had no body to stream ended at once.
    pub fn finished_at_once(&self, seq: u64, ended: Ended) {
        self.write(
            "finished",
            seq,
            json!({"bytes": 0, "writes": 0, "ended": ended.name()}),
        );
    }
}

/// What the `received` line says.
pub(crate) struct Received<'a> {
    pub conn: u64,
    pub peer_port: u16,
    pub path: &'a str,
    pub rule: Option<String>,
    pub stream: bool,
    pub status: u16,
}

/// Follows one streamed body: logs its first byte, and on drop how it ended.
pub(crate) struct Trace {
    log: Arc<EventLog>,
    seq: u64,
    bytes: u64,
    writes: u64,
    ended: Option<Ended>,
}

impl Trace {
    pub fn new(log: Arc<EventLog>, seq: u64) -> Self {
        Self {
            log,
            seq,
            bytes: 0,
            writes: 0,
            ended: None,
        }
    }

    /// A piece of `len` bytes is handed to the connection.
    pub fn wrote(&mut self, len: usize) {
        if self.writes == 0 {
            self.log.write("first_byte", self.seq, json!({}));
        }
        self.writes += 1;
        self.bytes += len as u64;
    }

    pub fn end(&mut self, ended: Ended) {
        self.ended = Some(ended);
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        let ended = self.ended.unwrap_or(Ended::ClientGone);
        self.log.write(
            "finished",
            self.seq,
            json!({"bytes": self.bytes, "writes": self.writes, "ended": ended.name()}),
        );
    }
}
