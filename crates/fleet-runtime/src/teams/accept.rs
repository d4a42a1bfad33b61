//! The accept loop of a session's Unix socket, built so it can neither spin nor outlive the
//! session.
//!
//! `accept` can fail without the listener being at fault: `EMFILE`/`ENFILE` when the process
//! or the machine is out of file descriptors, `ENOBUFS`/`ENOMEM` under memory pressure,
//! `ECONNABORTED` for a peer that gave up. The connection that could not be taken stays in
//! the backlog, so the socket stays readable and a loop that just tries again gets the same
//! error at once, burning a core and flooding the log while the session starves. Here an
//! error backs off instead (10 ms, doubling to 1 s, back to none after a success), the first
//! error of a run is logged once, and the loop ends as soon as its stop token fires (the
//! session ended), even in the middle of a back-off.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

/// The first pause after a failed accept.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(10);
/// The longest pause between two tries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What the loop did, counted as it goes (for tests and diagnostics: a spinning loop shows as
/// attempts racing ahead of connections).
#[derive(Debug, Default)]
pub struct AcceptStats {
    attempts: AtomicU64,
    errors: AtomicU64,
    accepted: AtomicU64,
}

impl AcceptStats {
    /// Calls to `accept` so far.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::Acquire)
    }

    /// Calls that failed.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Acquire)
    }

    /// Connections taken.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Acquire)
    }
}

/// Whether the loop goes on after handing a connection over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Continue,
    Stop,
}

/// Accepts connections on `listener` and hands each to `serve` until `stop` fires or `serve`
/// says [`Next::Stop`]. `what` names the socket in the log.
pub async fn accept_loop(
    listener: UnixListener,
    what: &str,
    stop: CancellationToken,
    stats: &AcceptStats,
    mut serve: impl FnMut(UnixStream) -> Next,
) {
    let mut backoff: Option<Duration> = None;
    loop {
        stats.attempts.fetch_add(1, Ordering::AcqRel);
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                stats.accepted.fetch_add(1, Ordering::AcqRel);
                if backoff.take().is_some() {
                    tracing::info!("{what}: accepting connections again");
                }
                if serve(stream) == Next::Stop {
                    return;
                }
            }
            Err(err) => {
                stats.errors.fetch_add(1, Ordering::AcqRel);
                let wait = backoff.map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF));
                if backoff.is_none() {
                    tracing::warn!(
                        "{what}: cannot accept a connection: {err}; retrying, at most once a \
                         second while it lasts"
                    );
                } else {
                    tracing::debug!("{what}: cannot accept a connection: {err}");
                }
                backoff = Some(wait);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}
