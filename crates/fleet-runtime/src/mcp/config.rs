//! MCP server configuration: every place servers are defined, what a definition means, and
//! the errors that keep one bad server or file from hiding the rest.
//!
//! # Sources and precedence
//!
//! Read in this order; when two define the same name, the later one wins (the more specific
//! scope, as in Claude Code where local beats project beats user):
//!
//! 1. `~/.claude.json` `mcpServers` — Claude Code's user scope (`$CLAUDE_CONFIG_DIR/.claude.json`
//!    when that variable is set);
//! 2. `$FLEET_HOME/settings.json` `mcpServers` — fleet's user scope;
//! 3. the project's `.mcp.json` files, from the repository root down to the working folder
//!    (the nearest wins; outside a repository only the working folder's);
//! 4. `~/.claude.json` `projects[<folder>].mcpServers` — Claude Code's local scope, for the
//!    working folder or the repository root;
//! 5. each `--mcp-config` value (a file path, or inline JSON when it starts with `{`), in the
//!    order given.
//!
//! With `--strict-mcp-config` only 5 is read. A missing file is simply no servers, except a
//! `--mcp-config` file, which was asked for by name.
//!
//! # Errors
//!
//! A file that cannot be read or parsed is one [`McpConfigError::Source`] naming the file and
//! the problem (with line and column for bad JSON); the other sources still load. A server whose
//! definition is unusable (see [`server`] for the field rules; an unset `${VAR}` without a
//! default) is one [`McpConfigError::Server`]; the other servers of the same file still load.
//! A broken definition still claims its name: it hides a same-named server from an earlier
//! source (the user meant to replace it), and an error in a definition that a later source
//! replaced is dropped, so every name has exactly one outcome.

mod agent;
pub mod approval;
mod edit;
pub mod expand;
pub mod server;
mod sources;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use agent::{agent_servers, parse_agent_servers, AgentMcpServer, AgentMcpServers};
pub use approval::McpApproval;
pub use edit::{
    add_server, project_file_for_writing, remove_server, server_names, McpEditError, ServerSpec,
};
pub use expand::{process_env, Lookup};
pub use server::{check_name, parse_server, ServerNameError, ServerProblem};
pub use sources::McpConfigSources;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// One MCP server as configured, with every `${VAR}` already expanded: what a client needs to
/// connect, and where the definition came from (for `fleet mcp list` and for error messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    /// The key in `mcpServers`; tools appear as `mcp__<name>__<tool>`.
    pub name: String,
    pub transport: McpTransport,
    pub source: McpSource,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to (not replacing) the environment fleet passes on.
        env: BTreeMap<String, String>,
        /// The child's working folder (absolute when the definition came from a file); `None`
        /// means fleet's own.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (`"type": "http"`).
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP + server-sent events transport (`"type": "sse"`).
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// A server living in the Agent SDK process that started fleet (`"type": "sdk"`), reached
    /// through `mcp_message` control requests (see [`super::sdk`]). Only `--mcp-config` may
    /// name one: the SDK passes it there, and nothing else could serve it.
    Sdk {
        /// The `name` the SDK gave (`create_sdk_mcp_server(name=…)`); requests go to the
        /// server's configuration key, as the SDKs route them.
        name: String,
    },
}

impl McpTransport {
    /// `stdio`, `http`, `sse` or `sdk`, as written in `"type"`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
            McpTransport::Sse { .. } => "sse",
            McpTransport::Sdk { .. } => "sdk",
        }
    }
}

/// Where a server's definition was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpSource {
    /// `~/.claude.json` `mcpServers` (Claude Code's user scope).
    ClaudeUser(PathBuf),
    /// `$FLEET_HOME/settings.json` `mcpServers` (fleet's user scope).
    FleetUser(PathBuf),
    /// The project's `.mcp.json`.
    Project(PathBuf),
    /// `~/.claude.json` `projects[<folder>].mcpServers` (Claude Code's local scope).
    ClaudeLocal(PathBuf),
    /// A `--mcp-config` value that named a file.
    FlagFile(PathBuf),
    /// A `--mcp-config` value given as inline JSON; the number is its position among the flags
    /// (0-based).
    FlagInline(usize),
    /// Defined inline in an agent definition's `mcpServers` (the agent's name).
    Agent(String),
}

impl McpSource {
    /// A one-word scope for listings: `user`, `project`, `local`, `flag` or `agent`.
    pub fn scope(&self) -> &'static str {
        match self {
            McpSource::ClaudeUser(_) | McpSource::FleetUser(_) => "user",
            McpSource::Project(_) => "project",
            McpSource::ClaudeLocal(_) => "local",
            McpSource::FlagFile(_) | McpSource::FlagInline(_) => "flag",
            McpSource::Agent(_) => "agent",
        }
    }
}

impl fmt::Display for McpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpSource::ClaudeUser(p) | McpSource::FleetUser(p) | McpSource::Project(p) => {
                write!(f, "{}", p.display())
            }
            McpSource::ClaudeLocal(p) => write!(f, "{} (projects entry)", p.display()),
            McpSource::FlagFile(p) => write!(f, "--mcp-config {}", p.display()),
            McpSource::FlagInline(i) => write!(f, "--mcp-config #{} (inline JSON)", i + 1),
            McpSource::Agent(name) => write!(f, "agent {name:?}"),
        }
    }
}

/// What went wrong while reading the configuration. Neither kind stops the rest loading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    /// A whole source is unusable: unreadable, not JSON, or `mcpServers` not an object.
    #[error("MCP configuration {origin}: {problem}")]
    Source {
        origin: McpSource,
        #[source]
        problem: SourceProblem,
    },
    /// One server's definition is unusable.
    #[error("MCP server {server:?} in {origin}: {problem}")]
    Server {
        server: String,
        origin: McpSource,
        problem: ServerProblem,
    },
}

/// Why a whole configuration source is unusable. The underlying I/O or JSON error is kept
/// (shared, so the configuration stays `Clone`); two problems are equal when they read the same.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SourceProblem {
    #[error("cannot read: {0}")]
    Unreadable(#[source] std::sync::Arc<std::io::Error>),
    #[error("not valid JSON: {0}")]
    NotJson(#[source] std::sync::Arc<serde_json::Error>),
    #[error("expected a JSON object, found {found}")]
    NotObject { found: &'static str },
    /// A document whose whole point is servers (`.mcp.json`, `--mcp-config`) without them.
    #[error("no \"mcpServers\" object (expected {{\"mcpServers\": {{\"name\": {{…}}}}}})")]
    NoServers,
    #[error("\"mcpServers\" must be an object of servers by name, found {found}")]
    ServersNotObject { found: &'static str },
}

impl SourceProblem {
    pub(crate) fn unreadable(err: std::io::Error) -> Self {
        Self::Unreadable(std::sync::Arc::new(err))
    }
}

impl PartialEq for SourceProblem {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for SourceProblem {}

impl McpConfigError {
    /// The server this error is about, when it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            McpConfigError::Source { .. } => None,
            McpConfigError::Server { server, .. } => Some(server),
        }
    }

    /// The source the error was found in.
    pub fn origin(&self) -> &McpSource {
        match self {
            McpConfigError::Source { origin, .. } | McpConfigError::Server { origin, .. } => origin,
        }
    }

    /// The one line a session prints for this problem on stderr, in every output format (a
    /// broken `.mcp.json` must not pass silently in `-p --output-format json`): what is wrong,
    /// where, and what the session does without it.
    pub fn warning(&self) -> String {
        match self {
            McpConfigError::Source { .. } => {
                format!("{self}; the session goes on without the MCP servers it defines")
            }
            McpConfigError::Server { .. } => {
                format!("{self}; the session goes on without that server")
            }
        }
    }
}

/// Every configured server (sorted by name, each name once) and every problem met on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    pub servers: Vec<McpServerConfig>,
    pub errors: Vec<McpConfigError>,
    /// Project servers held back because the user has not approved them (see [`approval`]).
    pub unapproved: Vec<McpServerConfig>,
    /// The user's approvals, also applied to servers defined inline by project agents.
    pub approval: McpApproval,
}

impl McpConfig {
    /// Everything configured for a session whose folders `at` names, with `--mcp-config`
    /// values `flags` and `--strict-mcp-config` `strict`, variables expanded from the process
    /// environment. Never fails: problems are in `errors`.
    pub fn load(at: &crate::locations::Locations, flags: Vec<String>, strict: bool) -> Self {
        let sources = McpConfigSources::discover(at, flags, strict);
        let mut config = sources.load(&process_env);
        config.hold_back_unapproved(sources.approval());
        config
    }

    /// Moves the project servers `approval` does not allow out of `servers` into
    /// `unapproved`, so nothing a repository wrote starts unasked.
    pub fn hold_back_unapproved(&mut self, approval: McpApproval) {
        let (held, kept) = std::mem::take(&mut self.servers)
            .into_iter()
            .partition(|server| {
                matches!(server.source, McpSource::Project(_)) && !approval.allows(&server.name)
            });
        self.servers = kept;
        self.unapproved = held;
        self.approval = approval;
    }

    /// The repository is trusted as a whole (`fleet trust`, `--trust-project`): its held-back
    /// servers start too, except those the user listed in `disabledMcpjsonServers`.
    pub fn trust_project(&mut self) {
        self.approval.all = true;
        let disabled = self.approval.disabled.clone();
        let (back, still): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unapproved)
            .into_iter()
            .partition(|server| !disabled.contains(&server.name));
        self.servers.extend(back);
        self.servers.sort_by(|a, b| a.name.cmp(&b.name));
        self.unapproved = still;
    }

    /// Why the held-back server `name` did not start, if it was held back.
    pub fn unapproved_reason(&self, name: &str) -> Option<String> {
        self.unapproved
            .iter()
            .find(|server| server.name == name)
            .map(|server| self.approval.refusal(name, &server.source.to_string()))
    }

    /// The server configured under `name`.
    pub fn get(&self, name: &str) -> Option<&McpServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The error that made `name` unusable, if its winning definition was broken.
    pub fn error_for(&self, name: &str) -> Option<&McpConfigError> {
        self.errors.iter().find(|e| e.server() == Some(name))
    }
}
