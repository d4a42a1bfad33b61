//! A session's servers under the user's hand while it runs: reconnect one, turn one off or
//! on. The Agent SDK asks for these with `mcp_reconnect` and `mcp_toggle`; the work is done
//! by each [`McpConnection`] (see `connection/control.rs`), and the agents see the result
//! through their [`super::McpLive`] before their next request.

use std::sync::Arc;

use thiserror::Error;

use super::{McpConnection, McpError, McpServers};

/// Why a reconnect or a toggle did not happen.
#[derive(Debug, Error)]
pub enum McpControlError {
    /// No server of that name is configured.
    #[error("no MCP server named {name:?} (configured: {known})")]
    Unknown { name: String, known: String },
    /// The server's definition is broken, so there is nothing to start.
    #[error("MCP server {name:?} cannot be started: {reason}")]
    Unusable { name: String, reason: String },
    /// Starting it failed; the server is now failed with this reason.
    #[error(transparent)]
    Server(#[from] McpError),
}

impl McpServers {
    /// The server configured as `name`, as it is now.
    pub fn server(&self, name: &str) -> Result<&Arc<McpConnection>, McpControlError> {
        let Some(entry) = self.entries.iter().find(|e| e.name == name) else {
            let mut known: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
            known.sort_unstable();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Err(McpControlError::Unknown {
                name: name.to_string(),
                known,
            });
        };
        entry
            .server
            .as_ref()
            .ok_or_else(|| McpControlError::Unusable {
                name: name.to_string(),
                reason: entry
                    .error
                    .clone()
                    .unwrap_or_else(|| "its definition is unusable".into()),
            })
    }

    /// Restarts the server `name`: a stdio server's process is killed and started again, an
    /// HTTP or SSE session is opened anew, an SDK server is initialized again. Also brings
    /// back a server that failed at the start. Its tools reach the agents before their next
    /// request.
    pub async fn reconnect(&self, name: &str) -> Result<(), McpControlError> {
        Ok(self.server(name)?.reconnect().await?)
    }

    /// Turns the server `name` off (its process stopped, its tools gone from every agent's
    /// next request) or on again (started, its tools back).
    pub async fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), McpControlError> {
        Ok(self.server(name)?.set_enabled(enabled).await?)
    }
}
