//! A session's MCP servers: all started together when the session starts, each ending up
//! connected or failed, and what the session takes from them — their tools for the agents'
//! pools, their statuses for the `init` line, their instructions for the system prompt.

use super::config::{McpConfig, McpServerConfig, McpSource, McpTransport};
use super::logs::McpLogs;
use super::resource_tools::ResourceServers;
use super::sdk::SdkMcpBridge;
use super::{McpConnection, McpTimeouts, McpTool};
use fleet_protocol::McpServerState;
use fleet_tools::Tool;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most of one server's instructions that go into the system prompt.
const MAX_INSTRUCTIONS_CHARS: usize = 2_000;

/// One configured server, after its start.
pub struct McpServerEntry {
    pub name: String,
    /// `connected` or `failed`, as Claude Code's `init` line says it.
    pub status: McpServerState,
    /// Why it failed (or why its configuration was refused), on one line, without the
    /// server's name (the caller names it).
    pub error: Option<String>,
    /// The server when it connected at the start: what agents were given.
    pub connection: Option<Arc<McpConnection>>,
    /// The server as it is now, for every configured server, also one that failed to start
    /// (a reconnect may still bring it); `None` only for a configuration error. Status
    /// reports, reconnects and toggles go through this.
    pub server: Option<Arc<McpConnection>>,
    /// Where its definition came from (for a configuration error, the file that had it).
    pub source: Option<McpSource>,
    /// The file its stderr went to (a stdio server that ran, in a session with logs).
    pub log: Option<PathBuf>,
}

impl std::fmt::Debug for McpServerEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerEntry")
            .field("name", &self.name)
            .field("status", &self.status)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// Every server of the session.
#[derive(Debug, Default)]
pub struct McpServers {
    pub entries: Vec<McpServerEntry>,
    /// Where stdio servers' stderr goes, also for the servers agents start later; `None`
    /// keeps only its end, in memory.
    pub logs: Option<Arc<McpLogs>>,
}

impl McpServers {
    /// Starts every server of `config` at once and waits for each to connect or fail (a
    /// connect is bounded by `timeouts.connect`). A configuration error is a failed server of
    /// that name, so it shows next to the others. An SDK server fails: see
    /// [`Self::start_with`].
    pub async fn start(config: &McpConfig, timeouts: McpTimeouts) -> Self {
        Self::start_with(config, timeouts, None).await
    }

    /// [`Self::start`], with `bridge` the way to the SDK servers (`"type": "sdk"`) of the
    /// Agent SDK program that started fleet. Without one, an SDK server fails, saying why.
    pub async fn start_with(
        config: &McpConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
    ) -> Self {
        Self::start_logged(config, timeouts, bridge, None).await
    }

    /// [`Self::start_with`], each stdio server's stderr going to a file of `logs`.
    pub async fn start_logged(
        config: &McpConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
        logs: Option<Arc<McpLogs>>,
    ) -> Self {
        let starts = config.servers.iter().map(|server| {
            let bridge = bridge.clone();
            let log = log_for(logs.as_deref(), server);
            async move {
                let started =
                    McpConnection::connect_logged(server, timeouts, bridge.clone(), log.clone())
                        .await;
                let written = log.filter(|path| path.exists());
                match started {
                    Ok(connection) => {
                        let connection = Arc::new(connection);
                        McpServerEntry {
                            name: server.name.clone(),
                            status: McpServerState::Connected,
                            error: None,
                            connection: Some(connection.clone()),
                            server: Some(connection),
                            source: Some(server.source.clone()),
                            log: written,
                        }
                    }
                    Err(err) => McpServerEntry {
                        name: server.name.clone(),
                        status: McpServerState::Failed,
                        error: Some(err.reason()),
                        connection: None,
                        // Its status (`/mcp`, the SDK's `mcp_status`) also says where the
                        // server's output went.
                        server: Some(Arc::new(McpConnection::failed(
                            server,
                            timeouts,
                            bridge,
                            written.clone(),
                            with_log(err.reason(), written.as_deref()),
                        ))),
                        source: Some(server.source.clone()),
                        log: written,
                    },
                }
            }
        });
        let mut entries: Vec<McpServerEntry> = futures::future::join_all(starts).await;
        for error in &config.errors {
            entries.push(McpServerEntry {
                name: error.server().unwrap_or("(configuration)").to_string(),
                status: McpServerState::Failed,
                error: Some(error.to_string()),
                connection: None,
                server: None,
                source: Some(error.origin().clone()),
                log: None,
            });
        }
        Self { entries, logs }
    }

    /// The servers that failed to start (configuration errors aside): one line each, to be
    /// said the same way by every front end.
    pub fn failures(&self) -> Vec<McpStartFailure> {
        self.entries
            .iter()
            .filter(|e| e.server.is_some() && e.status == McpServerState::Failed)
            .map(|e| McpStartFailure {
                server: e.name.clone(),
                reason: e.error.clone().unwrap_or_else(|| "no reason given".into()),
                log: e.log.clone(),
            })
            .collect()
    }

    /// The tools of every connected server, as `mcp__<server>__<tool>`.
    pub async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for connection in self.entries.iter().filter_map(|e| e.connection.as_ref()) {
            for tool in McpTool::all(connection).await {
                tools.push(Arc::new(tool));
            }
        }
        tools
    }

    /// The servers that connected at the start, for watching their tools (`McpLive`).
    pub fn connections(&self) -> Vec<Arc<McpConnection>> {
        self.entries
            .iter()
            .filter_map(|e| e.connection.clone())
            .collect()
    }

    /// `ListMcpResourcesTool` and `ReadMcpResourceTool` over the connected servers that
    /// announced the `resources` capability; none when no server did, so a session without
    /// resources does not show the model two tools it cannot use.
    pub async fn resource_tools(&self) -> Vec<Arc<dyn Tool>> {
        let connections = self.entries.iter().filter_map(|e| e.connection.clone());
        ResourceServers::new(connections).await.tools()
    }

    /// `(name, status)` per server, for the `init` line.
    pub fn statuses(&self) -> Vec<(String, McpServerState)> {
        self.entries
            .iter()
            .map(|e| (e.name.clone(), e.status.clone()))
            .collect()
    }

    /// The servers' instructions, one capped section each, for the system prompt.
    pub async fn instructions(&self) -> Option<String> {
        let mut sections = Vec::new();
        for connection in self.entries.iter().filter_map(|e| e.connection.as_ref()) {
            if let Some(text) = connection.instructions().await {
                let text: String = text.chars().take(MAX_INSTRUCTIONS_CHARS).collect();
                sections.push(format!("## {}\n{}", connection.name(), text.trim()));
            }
        }
        (!sections.is_empty()).then(|| {
            format!(
                "# MCP server instructions\n\nThe MCP servers you can use through their \
                 `mcp__<server>__<tool>` tools describe themselves:\n\n{}",
                sections.join("\n\n")
            )
        })
    }
}

/// A file of `logs` for a stdio server; other transports have no stderr of their own.
pub(crate) fn log_for(logs: Option<&McpLogs>, server: &McpServerConfig) -> Option<PathBuf> {
    match server.transport {
        McpTransport::Stdio { .. } => logs.map(|logs| logs.file_for(&server.name)),
        _ => None,
    }
}

/// A server that did not start, as the person is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpStartFailure {
    pub server: String,
    /// One line, without the server's name.
    pub reason: String,
    /// The file holding what the server wrote to stderr.
    pub log: Option<PathBuf>,
}

impl McpStartFailure {
    /// `MCP server "db" failed to start: ` — fleet's own words, before the reason.
    pub fn lead(&self) -> String {
        format!("MCP server {:?} failed to start: ", self.server)
    }

    /// The reason (text from outside fleet: the server's words, an OS error), then where its
    /// output is: `… (its output: /home/me/.fleet/logs/mcp/db-….log)`.
    pub fn detail(&self) -> String {
        with_log(self.reason.clone(), self.log.as_deref())
    }
}

impl std::fmt::Display for McpStartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.lead(), self.detail())
    }
}

/// `reason (its output: LOG)`, or the reason alone without a log.
fn with_log(reason: String, log: Option<&Path>) -> String {
    match log {
        Some(log) => format!("{reason} (its output: {})", log.display()),
        None => reason,
    }
}
