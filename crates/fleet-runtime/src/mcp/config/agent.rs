//! An agent definition's `mcpServers`: each entry is either the name of a configured server
//! (the agent shares the session's connection) or an object `{name: definition}` defining
//! servers of its own (started with the agent, stopped when it ends).
//!
//! ```yaml
//! mcpServers:
//!   - github                      # configured in .mcp.json or user settings
//!   - scratch:                    # the agent's own
//!       command: npx
//!       args: ["-y", "@modelcontextprotocol/server-memory"]
//! ```
//!
//! The servers an agent lists are required: [`agent_servers`] reports every one that cannot be
//! had (unknown name, broken definition) so the spawn can fail with all of them named.

use super::expand::Lookup;
use super::server::{check_name, kind, parse_server, ServerProblem};
use super::{McpConfig, McpConfigError, McpServerConfig, McpSource};
use serde_json::Value;
use std::path::Path;

/// One entry of an agent's `mcpServers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentMcpServer {
    /// A server from the session's configuration, by name.
    Named(String),
    /// A server the agent defines itself.
    Inline(McpServerConfig),
}

impl AgentMcpServer {
    pub fn name(&self) -> &str {
        match self {
            AgentMcpServer::Named(name) => name,
            AgentMcpServer::Inline(config) => &config.name,
        }
    }
}

/// Reads an agent's `mcpServers` entries (as kept in `AgentDefinition::mcp_servers`). Bad
/// entries become errors (with [`McpSource::Agent`]) and the rest still load; a name listed
/// twice keeps its first entry. `base_dir` is where inline servers' relative `cwd` point from
/// (the project folder).
pub fn parse_agent_servers(
    agent: &str,
    entries: &[Value],
    base_dir: &Path,
    lookup: Lookup<'_>,
) -> (Vec<AgentMcpServer>, Vec<McpConfigError>) {
    let source = McpSource::Agent(agent.to_string());
    let mut servers: Vec<AgentMcpServer> = Vec::new();
    let mut errors = Vec::new();
    let mut push_error = |server: &str, problem: ServerProblem| {
        errors.push(McpConfigError::Server {
            server: server.to_string(),
            origin: source.clone(),
            problem,
        })
    };
    let mut seen: Vec<String> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let mut found: Vec<(String, Result<AgentMcpServer, ServerProblem>)> = Vec::new();
        match entry {
            Value::String(name) => {
                let name = name.trim().to_string();
                let parsed = check_name(&name)
                    .map(|()| AgentMcpServer::Named(name.clone()))
                    .map_err(ServerProblem::Name);
                found.push((name, parsed));
            }
            Value::Object(map) if !map.is_empty() => {
                for (name, definition) in map {
                    let parsed = parse_server(name, definition, &source, base_dir, lookup)
                        .map(AgentMcpServer::Inline);
                    found.push((name.clone(), parsed));
                }
            }
            other => {
                let what = match other {
                    Value::Object(_) => "an empty object",
                    other => kind(other),
                };
                push_error(
                    &format!("#{}", index + 1),
                    ServerProblem::Invalid(format!(
                        "mcpServers entry {} must be a server name or {{name: definition}}, \
                         found {what}",
                        index + 1
                    )),
                );
            }
        }
        for (name, parsed) in found {
            if seen.contains(&name) {
                push_error(
                    &name,
                    ServerProblem::Invalid("listed twice; the first entry is used".into()),
                );
                continue;
            }
            seen.push(name.clone());
            match parsed {
                Ok(server) => servers.push(server),
                Err(problem) => push_error(&name, problem),
            }
        }
    }
    (servers, errors)
}

/// What an agent's `mcpServers` come to, checked against the session's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentMcpServers {
    /// Configured servers the agent uses through the session's connections, by name.
    pub shared: Vec<String>,
    /// Servers the agent defines itself: to start with the agent and stop when it ends.
    pub inline: Vec<McpServerConfig>,
    /// Every listed server that cannot be had, with why (bad entries first, then names that do
    /// not resolve). Non-empty means the spawn must fail, naming them all.
    pub unavailable: Vec<(String, String)>,
}

/// Reads an agent's `mcpServers` and resolves the names against `config`: an unknown name, a
/// configured server whose definition is broken, and a broken inline definition are all
/// unavailable. An inline server may reuse a configured name; the agent's own one is used.
pub fn agent_servers(
    agent: &str,
    entries: &[Value],
    config: &McpConfig,
    base_dir: &Path,
    lookup: Lookup<'_>,
) -> AgentMcpServers {
    let (servers, errors) = parse_agent_servers(agent, entries, base_dir, lookup);
    let mut out = AgentMcpServers::default();
    for error in errors {
        let name = error.server().unwrap_or_default().to_string();
        let why = match &error {
            McpConfigError::Server { problem, .. } => problem.to_string(),
            McpConfigError::Source { problem, .. } => problem.to_string(),
        };
        out.unavailable.push((name, why));
    }
    for server in servers {
        match server {
            AgentMcpServer::Inline(config) => out.inline.push(config),
            AgentMcpServer::Named(name) => {
                if config.get(&name).is_some() {
                    out.shared.push(name);
                } else if let Some(why) = config.unapproved_reason(&name) {
                    out.unavailable.push((name, why));
                } else if let Some(error) = config.error_for(&name) {
                    out.unavailable.push((name, error.to_string()));
                } else {
                    let why = "no MCP server of that name is configured (.mcp.json, user \
                               settings or --mcp-config)"
                        .to_string();
                    out.unavailable.push((name, why));
                }
            }
        }
    }
    out
}
