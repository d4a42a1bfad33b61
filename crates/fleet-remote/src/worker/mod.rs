//! `fleet worker`: pulls jobs from the shared consumer, runs up to `slots` at once, each as a
//! `fleet` process in a fresh checkout under its own temporary folder, with the worker's own
//! model credentials.
//! PLACEHOLDER: written in the worker helper's branch.

use crate::error::RemoteError;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// How a worker is set up.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub url: String,
    pub slots: u32,
    pub labels: Vec<String>,
    /// The `fleet` binary each job runs (this binary, normally).
    pub program: PathBuf,
    /// Where jobs' checkouts go (a temporary folder each, removed after the job).
    pub work_root: PathBuf,
    /// A stable id (`<host>-<pid>` when `None`).
    pub id: Option<String>,
}

/// Runs the worker until `shutdown` fires: running jobs are stopped and given back to the
/// queue (not acknowledged), so another worker runs them.
pub async fn run(_config: WorkerConfig, _shutdown: CancellationToken) -> Result<(), RemoteError> {
    unimplemented!("PLACEHOLDER")
}
