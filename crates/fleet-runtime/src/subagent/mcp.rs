//! A child's MCP servers, from its definition's `mcpServers`: configured servers it names are
//! required (it shares the session's connection, and gets their tools whatever its `tools`
//! list says); servers it defines inline are started for it and stopped when it ends.
//!
//! A required server that is not connected, or an inline one that cannot start, fails the
//! spawn at once, naming every server that is unavailable and why.

use crate::definitions::Restriction;
use crate::definitions::{AgentDefinition, AgentSource};
use crate::mcp::config::agent_servers;
use crate::mcp::{McpConnection, McpLive, McpTimeouts, McpTool};
use fleet_tools::{Tool, ToolError};
use std::path::PathBuf;
use std::sync::Arc;

/// What a child gets from MCP.
#[derive(Default)]
pub(crate) struct ChildMcp {
    /// Names of the session's servers it may use (`mcp__<name>__*` tools).
    pub shared: Vec<String>,
    /// Its own servers, stopped when it ends.
    pub inline: Vec<Arc<McpConnection>>,
    /// The tools of its own servers.
    pub tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ChildMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildMcp")
            .field("shared", &self.shared)
            .field("inline", &self.inline.len())
            .finish_non_exhaustive()
    }
}

impl ChildMcp {
    /// Whether `tool` belongs to one of the shared servers it names.
    pub fn names_tool(&self, tool: &str) -> bool {
        self.shared
            .iter()
            .any(|server| tool.strip_prefix(&format!("mcp__{server}__")).is_some())
    }

    /// Stops its own servers.
    pub async fn stop(&self) {
        for connection in &self.inline {
            connection.stop().await;
        }
    }

    /// Stops its own servers until its next call (a teammate that stopped may come back).
    pub async fn suspend(&self) {
        for connection in &self.inline {
            connection.suspend().await;
        }
    }
}

/// The session's MCP servers as children need them: what is configured, and what started.
#[derive(Debug)]
pub struct McpSession {
    pub config: crate::mcp::config::McpConfig,
    pub servers: crate::mcp::McpServers,
}

/// The session's MCP pool for its children: the session's servers they share, and the
/// servers of their own they start (and stop) with them.
#[derive(Debug)]
pub struct McpPool {
    session: Option<Arc<McpSession>>,
    /// Where a built-in definition's inline servers start (the project root).
    root: PathBuf,
}

impl McpPool {
    /// The pool over the session's servers (`None`: the session has none), with inline
    /// servers of built-in definitions started in `root`.
    pub fn new(session: Option<Arc<McpSession>>, root: PathBuf) -> Self {
        Self { session, root }
    }

    /// What a child watches for `list_changed`: the session's servers and its own.
    pub(crate) fn live(&self, child: &ChildMcp, def: &AgentDefinition) -> Option<McpLive> {
        let mut connections = self
            .session
            .as_ref()
            .map(|session| session.servers.connections())
            .unwrap_or_default();
        connections.extend(child.inline.iter().cloned());
        McpLive::watch(connections, def.restriction == Restriction::ReadOnly)
    }

    /// A resumed teammate's servers: as at its spawn, but one that cannot start now does not
    /// keep the rest of the team from coming back (its tools are then missing, and say so
    /// when the model asks for them).
    pub(crate) async fn restored(&self, member: &str, def: &AgentDefinition) -> ChildMcp {
        match self.child(def).await {
            Ok(mcp) => mcp,
            Err(err) => {
                tracing::warn!(member, "teammate restored without its MCP servers: {err}");
                ChildMcp::default()
            }
        }
    }

    /// Gets the servers `def` names ready for a child, or fails naming every one that is not.
    pub(crate) async fn child(&self, def: &AgentDefinition) -> Result<ChildMcp, ToolError> {
        if def.mcp_servers.is_empty() {
            return Ok(ChildMcp::default());
        }
        let Some(session) = self.session.as_ref() else {
            return Err(ToolError::Failed(format!(
                "Agent type {:?} needs MCP servers, and this session has none configured.",
                def.name
            )));
        };
        // An inline server's relative paths are taken from the agent file's folder.
        let base = match &def.source {
            AgentSource::Project(path) | AgentSource::User(path) => path
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_else(|| self.root.clone()),
            _ => self.root.clone(),
        };
        let lookup = |name: &str| std::env::var(name).ok();
        let wanted = agent_servers(&def.name, &def.mcp_servers, &session.config, &base, &lookup);
        let mut unavailable = wanted.unavailable.clone();
        for name in &wanted.shared {
            let connected = session
                .servers
                .entries
                .iter()
                .find(|e| &e.name == name)
                .filter(|e| e.connection.is_some());
            if connected.is_none() {
                let why = session
                    .servers
                    .entries
                    .iter()
                    .find(|e| &e.name == name)
                    .and_then(|e| e.error.clone())
                    .unwrap_or_else(|| "it did not start".into());
                unavailable.push((name.clone(), why));
            }
        }
        // A repository's agent file may not start a program unasked any more than its
        // `.mcp.json` may: its inline servers need the same approval.
        let mut wanted_inline = wanted.inline.clone();
        if let AgentSource::Project(path) = &def.source {
            let origin = path.display().to_string();
            wanted_inline.retain(|server| {
                let allowed = session.config.approval.allows(&server.name);
                if !allowed {
                    unavailable.push((
                        server.name.clone(),
                        session.config.approval.refusal(&server.name, &origin),
                    ));
                }
                allowed
            });
        }
        let timeouts = McpTimeouts::from_env();
        let logs = session.servers.logs.as_deref();
        let starts = wanted_inline.iter().map(|server| {
            let log = crate::mcp::session::log_for(logs, server);
            async move {
                (
                    server.name.clone(),
                    McpConnection::connect_logged(server, timeouts, None, log.clone()).await,
                    log.filter(|path| path.exists()),
                )
            }
        });
        let mut inline = Vec::new();
        for (name, started, log) in futures::future::join_all(starts).await {
            match started {
                Ok(connection) => inline.push(Arc::new(connection)),
                Err(err) => {
                    let why = match log {
                        Some(log) => format!("{}; its output: {}", err.reason(), log.display()),
                        None => err.reason(),
                    };
                    unavailable.push((name, why));
                }
            }
        }
        if !unavailable.is_empty() {
            for connection in &inline {
                connection.stop().await;
            }
            let list: Vec<String> = unavailable
                .iter()
                .map(|(name, why)| format!("{name} ({why})"))
                .collect();
            return Err(ToolError::Failed(format!(
                "Agent type {:?} needs MCP servers that are unavailable: {}.",
                def.name,
                list.join("; ")
            )));
        }
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for connection in &inline {
            for tool in McpTool::all(connection).await {
                tools.push(Arc::new(tool));
            }
        }
        Ok(ChildMcp {
            shared: wanted.shared,
            inline,
            tools,
        })
    }
}
