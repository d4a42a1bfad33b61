//! The runtime's `isolation: "remote"` on NATS: a [`RemoteLauncher`] that turns the request
//! into a job, follows its events into task updates, stops it on cancel and fetches its
//! branch at the end.
//! PLACEHOLDER: written in the client helper's branch.

use fleet_runtime::remote::{RemoteLaunched, RemoteLauncher, RemoteRequest};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// Launches remote agents through the broker at `url`, connecting on first use (a session
/// that never goes remote never connects).
#[derive(Debug)]
pub struct NatsLauncher {
    pub url: String,
}

impl NatsLauncher {
    pub fn new(url: impl Into<String>) -> Self {
        Self { url: url.into() }
    }
}

impl RemoteLauncher for NatsLauncher {
    fn launch(
        &self,
        _request: RemoteRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<RemoteLaunched, String>> {
        Box::pin(async move { Err("PLACEHOLDER".to_string()) })
    }
}
