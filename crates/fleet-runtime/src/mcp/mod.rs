//! MCP: servers from `.mcp.json` and the other configuration sources, per-agent servers, and
//! the rmcp clients that talk to them.
//!
//! - [`config`]: where server definitions come from, what they mean, and how `fleet mcp add |
//!   remove` edits them. Pure data and files; nothing here starts a process.

pub mod config;

pub use config::{McpServerConfig, McpSource, McpTransport};
