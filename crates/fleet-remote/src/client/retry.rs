//! Retrying a JetStream call while the broker is away.
//!
//! The client library reconnects on its own; calls made meanwhile fail. A caller retries them
//! for a while (a restart takes seconds) and then says which piece did not answer.

use crate::error::RemoteError;
use std::future::Future;
use std::time::Duration;

/// The pause between two tries, and before a reader makes its consumer again.
pub(crate) const PAUSE: Duration = Duration::from_millis(250);

/// How long a call keeps being retried before the error is given up to the caller.
const GIVE_UP_AFTER: Duration = Duration::from_secs(60);

/// Runs `call` until it succeeds or [`GIVE_UP_AFTER`] has passed; `what` names the stream,
/// bucket or subject in the final error.
pub(crate) async fn retrying<T, E, F, Fut>(what: &str, mut call: F) -> Result<T, RemoteError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    let deadline = tokio::time::Instant::now() + GIVE_UP_AFTER;
    let mut pause = PAUSE;
    loop {
        match call().await {
            Ok(value) => return Ok(value),
            Err(err) if tokio::time::Instant::now() + pause >= deadline => {
                return Err(RemoteError::broker(what, err));
            }
            Err(err) => {
                tracing::debug!("{what}: {err}; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}
