//! One rmcp client session with one server: starting the transport the configuration names,
//! the `initialize` handshake under the connect timeout, and the client handler that notices
//! `notifications/tools/list_changed`. [`super::McpConnection`] builds on this and adds the
//! restart-once policy; nothing here retries.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use thiserror::Error;

use super::config::{McpServerConfig, McpTransport};
use super::process::{describe_exit, ServerProcess, StderrTail};
use super::sdk::{SdkMcpBridge, SdkTransport};
use super::sse::SseClientTransport;

/// The two MCP timeouts of the issue, read from the environment by [`McpTimeouts::from_env`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// Starting the server and the `initialize` handshake (`MCP_TIMEOUT`, default 30 s).
    pub connect: Duration,
    /// One `tools/call` (`MCP_TOOL_TIMEOUT`); `None` waits as long as the call's cancellation
    /// allows, as Claude Code does when the variable is unset.
    pub call: Option<Duration>,
}

impl Default for McpTimeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(30),
            call: None,
        }
    }
}

impl McpTimeouts {
    /// `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT`, both in milliseconds as in Claude Code; a value
    /// that is not a number keeps the default.
    pub fn from_env() -> Self {
        let ms = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        let default = Self::default();
        Self {
            connect: ms("MCP_TIMEOUT").unwrap_or(default.connect),
            call: ms("MCP_TOOL_TIMEOUT").or(default.call),
        }
    }
}

/// Why a server could not be reached or a call did not produce a result.
#[derive(Debug, Error)]
pub enum McpError {
    #[error("MCP server {server:?}: could not start {command:?}: {source}")]
    Spawn {
        server: String,
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("MCP server {server:?}: no answer to initialize within {timeout:?}")]
    ConnectTimeout { server: String, timeout: Duration },
    #[error("MCP server {server:?}: connecting failed: {message}")]
    Connect { server: String, message: String },
    #[error("MCP server {server:?}: {message}")]
    Unsupported { server: String, message: String },
    #[error("MCP server {server:?} failed: {reason}")]
    Failed { server: String, reason: String },
    #[error("MCP tool {tool:?} on server {server:?} did not answer within {timeout:?}")]
    CallTimeout {
        server: String,
        tool: String,
        timeout: Duration,
    },
    #[error("MCP tool {tool:?} on server {server:?} was cancelled")]
    Cancelled { server: String, tool: String },
    #[error("MCP tool {tool:?} on server {server:?}: {message}")]
    Call {
        server: String,
        tool: String,
        message: String,
    },
}

impl McpError {
    /// The server the error is about.
    pub fn server(&self) -> &str {
        match self {
            Self::Spawn { server, .. }
            | Self::ConnectTimeout { server, .. }
            | Self::Connect { server, .. }
            | Self::Unsupported { server, .. }
            | Self::Failed { server, .. }
            | Self::CallTimeout { server, .. }
            | Self::Cancelled { server, .. }
            | Self::Call { server, .. } => server,
        }
    }

    /// What went wrong, without the `MCP server "x"` the full message starts with, on one
    /// line: for a caller that names the server itself (`MCP server "db" failed to start:
    /// …`), so the name is not said twice.
    pub fn reason(&self) -> String {
        let text = match self {
            Self::Spawn {
                command, source, ..
            } => format!("could not start {command:?}: {source}"),
            Self::ConnectTimeout { timeout, .. } => {
                format!("no answer to initialize within {timeout:?}")
            }
            Self::Connect { message, .. } | Self::Unsupported { message, .. } => message.clone(),
            Self::Failed { reason, .. } => reason.clone(),
            Self::CallTimeout { tool, timeout, .. } => {
                format!("tool {tool:?} did not answer within {timeout:?}")
            }
            Self::Cancelled { tool, .. } => format!("tool {tool:?} was cancelled"),
            Self::Call { tool, message, .. } => format!("tool {tool:?}: {message}"),
        };
        one_line(&text)
    }
}

/// `text` with every run of white space that holds a line break made one space, so a
/// message stays one line wherever it is printed.
pub fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.trim().to_string();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The client side of the session: says who we are and raises a flag when the server's tool
/// list changes, which the connection checks before the agent's next request.
#[derive(Debug, Clone, Default)]
pub struct FleetClientHandler {
    pub signals: Arc<ServerSignals>,
}

/// What a server tells fleet between answers, kept across its restarts.
#[derive(Debug)]
pub struct ServerSignals {
    /// Set by `notifications/tools/list_changed`, taken before the next model request.
    pub tools_changed: AtomicBool,
    /// Counts `notifications/progress`: a call still making progress is not timed out.
    pub progress: tokio::sync::watch::Sender<u64>,
}

impl Default for ServerSignals {
    fn default() -> Self {
        Self {
            tools_changed: AtomicBool::new(false),
            progress: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl ClientHandler for FleetClientHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("fleet", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.signals.tools_changed.store(true, Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.signals.progress.send_modify(|n| *n += 1);
    }
}

/// A connected session and, for stdio, the process behind it.
pub struct Session {
    pub service: RunningService<RoleClient, FleetClientHandler>,
    pub process: Option<ServerProcess>,
}

/// How long a stdio server whose `initialize` failed may take to exit by itself, so the
/// message can give its exit status rather than the broken pipe it left.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// Largest JSON-RPC line accepted from a stdio server: well above the 10 MB a tool may return
/// before the output cap cuts it.
const MAX_STDIO_LINE: usize = 64 * 1024 * 1024;

/// Starts the transport for `config` and completes `initialize` within `timeouts.connect`.
/// A stdio server that does not finish in time is killed with its group. An SDK server goes
/// through `bridge`, and fails without one.
///
/// A stdio server's stderr goes to `log` (see [`super::logs`]); a failed start quotes its last
/// line.
pub async fn open_session(
    config: &McpServerConfig,
    timeouts: McpTimeouts,
    handler: FleetClientHandler,
    bridge: Option<&Arc<dyn SdkMcpBridge>>,
    log: Option<&Path>,
) -> Result<Session, McpError> {
    let server = config.name.clone();
    let timed_out = || McpError::ConnectTimeout {
        server: server.clone(),
        timeout: timeouts.connect,
    };
    let failed = |message: String| McpError::Connect {
        server: server.clone(),
        message,
    };
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let (process, pipes) = ServerProcess::spawn(command, args, env, cwd.as_deref(), log)
                .map_err(|source| McpError::Spawn {
                    server: server.clone(),
                    command: command.clone(),
                    source,
                })?;
            let transport = AsyncRwTransport::new_client(pipes.stdout, pipes.stdin)
                .with_max_line_length(MAX_STDIO_LINE);
            match tokio::time::timeout(timeouts.connect, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Session {
                    service,
                    process: Some(process),
                }),
                Ok(Err(e)) => {
                    // Stopped first (dead or not): then all it wrote has been read.
                    let stderr = process.stderr().clone();
                    let message = match process.stop_after(EXIT_GRACE).await {
                        Some(status) => {
                            format!("{} before answering initialize", describe_exit(status))
                        }
                        None => e.to_string(),
                    };
                    Err(failed(with_last_line(message, &stderr)))
                }
                Err(_) => {
                    process.shutdown().await;
                    Err(timed_out())
                }
            }
        }
        McpTransport::Http { url, headers } => {
            // reqwest 0.13 inside rmcp is built without a crypto provider; fleet uses ring
            // everywhere (no aws-lc). Installing it twice is harmless: the second call fails.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut custom = std::collections::HashMap::new();
            for (name, value) in headers {
                let name = http::HeaderName::try_from(name.as_str())
                    .map_err(|e| failed(format!("header name {name:?}: {e}")))?;
                let value = http::HeaderValue::try_from(value.as_str())
                    .map_err(|e| failed(format!("header {name}: {e}")))?;
                custom.insert(name, value);
            }
            let transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            match tokio::time::timeout(timeouts.connect, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Session {
                    service,
                    process: None,
                }),
                Ok(Err(e)) => Err(failed(e.to_string())),
                Err(_) => Err(timed_out()),
            }
        }
        McpTransport::Sse { url, headers } => {
            // One budget for both steps: the stream's `endpoint` event, then `initialize`.
            let deadline = tokio::time::Instant::now() + timeouts.connect;
            let transport = SseClientTransport::connect(url, headers, timeouts.connect)
                .await
                .map_err(|e| failed(e.to_string()))?;
            match tokio::time::timeout_at(deadline, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Session {
                    service,
                    process: None,
                }),
                Ok(Err(e)) => Err(failed(format!("{url}: {e}"))),
                Err(_) => Err(timed_out()),
            }
        }
        McpTransport::Sdk { .. } => {
            let Some(bridge) = bridge else {
                return Err(McpError::Unsupported {
                    server,
                    message: "an SDK server (\"type\": \"sdk\") is served over the Agent \
                              SDK's control protocol, and this session has none (fleet was \
                              not started by an SDK with --input-format stream-json)"
                        .into(),
                });
            };
            let transport = SdkTransport::new(&config.name, bridge.clone());
            match tokio::time::timeout(timeouts.connect, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Session {
                    service,
                    process: None,
                }),
                Ok(Err(e)) => Err(failed(e.to_string())),
                Err(_) => Err(timed_out()),
            }
        }
    }
}

/// `message`, and the line of the server's stderr that most likely says why (all it wrote is
/// in its log).
pub(crate) fn with_last_line(message: String, stderr: &StderrTail) -> String {
    match stderr.last_line() {
        Some(line) => format!("{message}; it said: {line}"),
        None => message,
    }
}
