//! What can go wrong when loading a scenario or starting the fake server.
//!
//! Errors are for the test author: each one names the file (or the string it came from) and
//! says what to fix, because a test that fails on a bad scenario should not need a debugger.

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// The listening socket could not be created (port taken, address not local, …).
    #[error("fake model server: cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },

    /// A scenario file could not be read from disk.
    #[error("scenario {}: cannot read the file: {source}", path.display())]
    ReadScenario {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A scenario was read but does not describe a valid script. `origin` is the file path, or
    /// `<yaml string>` / `<json string>` / `<rust builder>` when it did not come from a file.
    #[error("scenario {origin}: {message}")]
    InvalidScenario { origin: String, message: String },

    /// A rule of the scenario fails a check the types cannot make; `rule` is its name or
    /// `rules[i]`.
    #[error("scenario {origin}: rule {rule}: {problem}")]
    InvalidRule {
        origin: String,
        rule: String,
        #[source]
        problem: Box<crate::scenario::ScenarioProblem>,
    },

    /// The request event log file (`request_log_file`) could not be opened.
    #[error("fake model server: cannot open the request log {}: {source}", path.display())]
    RequestLogFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl TestkitError {
    pub(crate) fn invalid(origin: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidScenario {
            origin: origin.into(),
            message: message.into(),
        }
    }
}
