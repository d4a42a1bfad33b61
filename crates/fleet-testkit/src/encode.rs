//! What both wire encoders share: how a reply is paced, and how a stream fault cuts the
//! event sequence.

use crate::event_log::{EventLog, Trace};
use crate::http_error::insert_request_id;
use crate::scenario::{Fault, OpenAiOptions};
use crate::sse::{self, Ending, Pacing};
use crate::view::Protocol;
use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Per-request settings for encoding a reply.
#[derive(Debug, Clone)]
pub(crate) struct Encoding {
    pub pacing: Pacing,
    pub delta_chars: usize,
    pub request_id: String,
    pub openai: OpenAiOptions,
    /// OpenAI: send a usage chunk (the request set `stream_options.include_usage` and the
    /// server does not omit usage).
    pub include_usage: bool,
    /// OpenAI: the reply stops after this many output tokens (the context window is full).
    pub output_room: Option<u64>,
    /// The request log and this request's number, when the log is on.
    pub log: Option<(Arc<EventLog>, u64)>,
    /// The connection's reset flag (see `conn`), for a `reset_after_events` fault.
    pub reset: Option<Arc<AtomicBool>>,
}

/// An HTTP 200 event stream with no event at all: what some servers send for a prompt they
/// cannot take, streaming or not.
pub(crate) fn empty_stream(protocol: Protocol, request_id: &str) -> Response {
    event_stream(Body::empty(), protocol, request_id)
}

impl Encoding {
    /// A `200 text/event-stream` response carrying `frames`.
    pub fn sse_response(&self, protocol: Protocol, frames: Vec<Bytes>, ending: Ending) -> Response {
        event_stream(self.body(frames, ending), protocol, &self.request_id)
    }

    /// The body of `frames`, paced, traced in the request log, reset through this request's
    /// connection if `ending` says so.
    pub fn body(&self, frames: Vec<Bytes>, ending: Ending) -> Body {
        let ending = match ending {
            Ending::Reset(None) => Ending::Reset(self.reset.clone()),
            other => other,
        };
        let trace = self
            .log
            .as_ref()
            .map(|(log, seq)| Trace::new(log.clone(), *seq));
        sse::body(frames, self.pacing, ending, trace)
    }
}

fn event_stream(body: Body, protocol: Protocol, request_id: &str) -> Response {
    let mut resp = (StatusCode::OK, body).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    insert_request_id(headers, protocol, request_id);
    resp
}

/// Applies a stream fault to the event frames: an error event after K events, or an abrupt
/// end after K events. `error_frame` renders the protocol's error event.
pub(crate) fn apply_stream_fault(
    mut frames: Vec<Bytes>,
    fault: Option<&Fault>,
    error_frame: impl FnOnce(&str, &str) -> Bytes,
) -> (Vec<Bytes>, Ending) {
    match fault {
        Some(Fault::SseError {
            error_type,
            message,
            after_events,
        }) => {
            frames.truncate(*after_events);
            frames.push(error_frame(error_type, message));
            (frames, Ending::Complete)
        }
        Some(Fault::DropAfterEvents(k)) => {
            frames.truncate(*k);
            (frames, Ending::Abort)
        }
        Some(Fault::ResetAfterEvents(k)) => {
            frames.truncate(*k);
            (frames, Ending::Reset(None))
        }
        _ => (frames, Ending::Complete),
    }
}
