//! MCP server configuration: the shape every source is read into.

use std::collections::BTreeMap;
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
        /// The child's working folder; `None` means fleet's own.
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
    /// A `--mcp-config` value that named a file.
    FlagFile(PathBuf),
    /// A `--mcp-config` value given as inline JSON; the number is its position among the flags
    /// (0-based).
    FlagInline(usize),
    /// Defined inline in an agent definition's `mcpServers` (the agent's name).
    Agent(String),
}
