//! Stopping and starting a server while the session runs: for the agents that own one
//! (`stop` when the agent ends, `suspend` while a teammate sleeps), for the user (the Agent
//! SDK's `mcp_reconnect` and `mcp_toggle`), and what `mcp_status` reads off it.
//!
//! - **Reconnect:** the session is closed (a stdio server's process group killed) and a new
//!   one started: a new process, a new HTTP/SSE session, or a new `initialize` over the SDK
//!   bridge. A success gives the server its one automatic restart back.
//! - **Disable:** the server is stopped and lists no tools. The listing's generation moves,
//!   so every agent watching it ([`super::super::McpLive`]) drops its tools before its next
//!   request. Calls fail, saying it is disabled; nothing restarts it on its own.
//! - **Enable:** started again; its listing comes back to the agents the same way.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::super::client::{McpError, McpTimeouts};
use super::super::config::McpServerConfig;
use super::super::sdk::SdkMcpBridge;
use super::{stop, McpConnection, McpStatus, McpToolInfo};

/// Why a disabled server does not answer.
pub(super) const DISABLED: &str = "it is disabled; enable it to use its tools";

/// A server's state in one look, for a status report.
#[derive(Debug, Clone)]
pub struct McpServerSnapshot {
    /// `None` while a reconnect or an enable is starting it (`pending`).
    pub status: Option<McpStatus>,
    /// `serverInfo` name and version from its last `initialize`.
    pub server_info: Option<(String, String)>,
    /// Its tools as last listed (none while disabled).
    pub tools: Arc<Vec<McpToolInfo>>,
}

/// Marks a connection as starting for as long as it lives.
struct Starting<'a>(&'a AtomicBool);

impl<'a> Starting<'a> {
    fn new(flag: &'a AtomicBool) -> Self {
        flag.store(true, Ordering::SeqCst);
        Self(flag)
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl McpConnection {
    /// A server that could not start: failed with `reason`, no tools, and no automatic
    /// restart (a call would only fail the same way). [`Self::reconnect`] can still bring it.
    /// A stdio server's `log` is where its start wrote, and where the next start writes.
    pub fn failed(
        config: &McpServerConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
        log: Option<PathBuf>,
        reason: String,
    ) -> Self {
        Self::new(
            config,
            timeouts,
            bridge,
            log,
            McpStatus::Failed {
                reason,
                restart_left: false,
            },
        )
    }

    /// Closes the session and starts a new one. A disabled server stays disabled (an error
    /// says so); a failed start leaves the server failed with the reason, which is returned.
    pub async fn reconnect(&self) -> Result<(), McpError> {
        let _starting = Starting::new(&self.connecting);
        let mut inner = self.inner.lock().await;
        if inner.status == McpStatus::Disabled {
            return Err(
                self.failed_error("it is disabled; enabling it starts it again".to_string())
            );
        }
        if let Some(session) = inner.session.take() {
            stop(session).await;
        }
        self.start_again(&mut inner, "reconnect failed").await
    }

    /// Starts the server into `inner` again; a failure leaves it failed for good, saying
    /// `what` failed, so no later call restarts it behind the user's back.
    async fn start_again(&self, inner: &mut super::Inner, what: &str) -> Result<(), McpError> {
        match self.start_into(inner).await {
            Ok(()) => {
                inner.restarted = false;
                Ok(())
            }
            Err(err) => {
                inner.status = McpStatus::Failed {
                    reason: format!("{what}: {}", err.reason()),
                    restart_left: false,
                };
                inner.restarted = true;
                Err(err)
            }
        }
    }

    /// Turns the server off (stopped, no tools) or on again (started, tools listed). Turning
    /// on a server that is not off does nothing; a failed start leaves it failed.
    pub async fn set_enabled(&self, enabled: bool) -> Result<(), McpError> {
        if !enabled {
            let mut inner = self.inner.lock().await;
            if let Some(session) = inner.session.take() {
                stop(session).await;
            }
            inner.status = McpStatus::Disabled;
            inner.tools = Arc::new(Vec::new());
            inner.skipped.clear();
            inner.generation += 1;
            return Ok(());
        }
        let _starting = Starting::new(&self.connecting);
        let mut inner = self.inner.lock().await;
        if inner.status != McpStatus::Disabled {
            return Ok(());
        }
        self.start_again(&mut inner, "enabling it failed").await
    }

    /// Stops the server now, even while tools still hold the connection: for a server that
    /// lives as long as one agent. Calls after this fail, and it is not restarted.
    pub async fn stop(&self) {
        let mut inner = self.inner.lock().await;
        if let Some(session) = inner.session.take() {
            stop(session).await;
        }
        inner.status = McpStatus::Failed {
            reason: "stopped with the agent that started it".into(),
            restart_left: false,
        };
        inner.restarted = true;
    }

    /// Stops the server while its agent sleeps (a stopped teammate that a message may bring
    /// back): unlike [`Self::stop`], the next call starts it again.
    pub async fn suspend(&self) {
        let mut inner = self.inner.lock().await;
        if let Some(session) = inner.session.take() {
            stop(session).await;
        }
        inner.status = McpStatus::Failed {
            reason: "stopped while its agent was stopped".into(),
            restart_left: true,
        };
        inner.restarted = false;
    }

    /// Stops the server and waits until a stdio server's own process is gone.
    pub async fn shutdown(self) {
        let mut inner = self.inner.into_inner();
        if let Some(session) = inner.session.take() {
            stop(session).await;
        }
    }

    /// Whether the server is turned on.
    pub async fn is_enabled(&self) -> bool {
        self.inner.lock().await.status != McpStatus::Disabled
    }

    /// The server's `serverInfo` (name, version) from its last `initialize`.
    pub async fn server_info(&self) -> Option<(String, String)> {
        self.inner.lock().await.server_info.clone()
    }

    /// Status, server info and tools in one look; a server being started is reported
    /// without waiting for its start to end.
    pub async fn snapshot(&self) -> McpServerSnapshot {
        if self.connecting.load(Ordering::SeqCst) {
            return McpServerSnapshot {
                status: None,
                server_info: None,
                tools: Arc::new(Vec::new()),
            };
        }
        let inner = self.inner.lock().await;
        McpServerSnapshot {
            status: Some(inner.status.clone()),
            server_info: inner.server_info.clone(),
            tools: inner.tools.clone(),
        }
    }
}
