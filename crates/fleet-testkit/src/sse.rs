//! Writing a response body the way a flaky network delivers it: in pieces of a chosen size
//! that split events, lines and UTF-8 characters anywhere, optionally slowly, optionally cut
//! off. Each piece is its own write: the stream yields to the scheduler between pieces, so
//! hyper flushes each one instead of coalescing the whole body.

use crate::event_log::{Ended, Trace};
use axum::body::Body;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    /// Normally (the terminating chunk is sent).
    Complete,
    /// Abruptly: the connection is dropped mid-body.
    Abort,
    /// Abruptly, with a TCP reset: the connection's flag is set, then it is dropped.
    Reset(Option<Arc<AtomicBool>>),
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
    /// A long pause after some frames (a `stall_after_events` fault).
    pub stall: Option<Stall>,
}

/// Nothing is written for `pause` once `after_frames` frames are out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stall {
    pub after_frames: usize,
    pub pause: Duration,
}

struct Writer {
    pieces: VecDeque<Bytes>,
    pacing: Pacing,
    started: bool,
    /// Pieces written so far, and the piece before which the stall falls.
    written: usize,
    stall_before: Option<usize>,
    ending: Option<Ending>,
    trace: Option<Trace>,
}

/// The body made of `frames`, written according to `pacing`, ending as `ending` says;
/// `trace` (when the request log is on) hears of every write and of the end.
pub(crate) fn body(
    frames: Vec<Bytes>,
    pacing: Pacing,
    ending: Ending,
    trace: Option<Trace>,
) -> Body {
    // The stall falls after the piece that completes frame `after_frames`.
    let stall_at_byte = pacing.stall.map(|st| {
        frames
            .iter()
            .take(st.after_frames)
            .map(Bytes::len)
            .sum::<usize>()
    });
    let (pieces, stall_before): (VecDeque<Bytes>, Option<usize>) = if pacing.chunk_size == 0 {
        let at = pacing.stall.map(|st| st.after_frames.min(frames.len()));
        (frames.into(), at)
    } else {
        let mut all = BytesMut::new();
        for f in frames {
            all.extend_from_slice(&f);
        }
        let all = all.freeze();
        let at = stall_at_byte.map(|b| b.div_ceil(pacing.chunk_size));
        let pieces = (0..all.len())
            .step_by(pacing.chunk_size)
            .map(|start| all.slice(start..(start + pacing.chunk_size).min(all.len())))
            .collect();
        (pieces, at)
    };
    let writer = Writer {
        pieces,
        pacing,
        started: false,
        written: 0,
        stall_before,
        ending: Some(ending),
        trace,
    };
    let stream = futures::stream::unfold(writer, |mut w| async move {
        if w.stall_before == Some(w.written) {
            w.stall_before = None;
            if let Some(stall) = w.pacing.stall {
                tokio::time::sleep(stall.pause).await;
            }
        }
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
            w.written += 1;
            if let Some(t) = &mut w.trace {
                t.wrote(piece.len());
            }
            return Some((Ok(piece), w));
        }
        let (ended, message) = match w.ending.take()? {
            Ending::Complete => {
                if let Some(t) = &mut w.trace {
                    t.end(Ended::Complete);
                }
                return None;
            }
            Ending::Abort => (
                Ended::DroppedByFault,
                "fake model: scripted connection drop",
            ),
            Ending::Reset(flag) => {
                if let Some(flag) = flag {
                    flag.store(true, Ordering::Relaxed);
                }
                (Ended::ResetByFault, "fake model: scripted connection reset")
            }
        };
        if let Some(t) = &mut w.trace {
            t.end(ended);
        }
        tokio::task::yield_now().await;
        let err = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, message);
        Some((Err(err), w))
    });
    Body::from_stream(stream)
}
