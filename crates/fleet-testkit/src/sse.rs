//! Writing a response body the way a flaky network delivers it: in pieces of a chosen size
//! that split events, lines and UTF-8 characters anywhere, optionally slowly, optionally cut
//! off. Each piece is its own write: the stream yields to the scheduler between pieces, so
//! hyper flushes each one instead of coalescing the whole body.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;
use std::time::Duration;

/// An Anthropic-style event: `event: NAME\ndata: JSON\n\n`.
pub(crate) fn named_event(name: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// An OpenAI-style event: `data: JSON\n\n`.
pub(crate) fn data_event(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// How the body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Normally (the terminating chunk is sent).
    Complete,
    /// Abruptly: the connection is dropped mid-body.
    Abort,
}

/// How the body is cut into writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacing {
    /// Bytes per write; 0 keeps each event (frame) whole.
    pub chunk_size: usize,
    pub delay: Duration,
    /// Pause after the headers, before the first write: a server that answers at once and
    /// then reads the prompt before its first event.
    pub first_delay: Duration,
}

struct Writer {
    pieces: VecDeque<Bytes>,
    pacing: Pacing,
    started: bool,
    abort: bool,
}

/// The body made of `frames`, written according to `pacing`, ending as `ending` says.
pub(crate) fn body(frames: Vec<Bytes>, pacing: Pacing, ending: Ending) -> Body {
    let pieces: VecDeque<Bytes> = if pacing.chunk_size == 0 {
        frames.into()
    } else {
        let mut all = BytesMut::new();
        for f in frames {
            all.extend_from_slice(&f);
        }
        let all = all.freeze();
        (0..all.len())
            .step_by(pacing.chunk_size)
            .map(|start| all.slice(start..(start + pacing.chunk_size).min(all.len())))
            .collect()
    };
    let writer = Writer {
        pieces,
        pacing,
        started: false,
        abort: ending == Ending::Abort,
    };
    let stream = futures::stream::unfold(writer, |mut w| async move {
        if let Some(piece) = w.pieces.pop_front() {
            let pause = if w.started {
                w.pacing.delay
            } else {
                w.pacing.first_delay
            };
            if pause.is_zero() {
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(pause).await;
            }
            w.started = true;
            Some((Ok(piece), w))
        } else if w.abort {
            w.abort = false;
            tokio::task::yield_now().await;
            let err = std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fake model: scripted connection drop",
            );
            Some((Err(err), w))
        } else {
            None
        }
    });
    Body::from_stream(stream)
}
