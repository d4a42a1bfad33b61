//! MCP: servers from `.mcp.json` and the other configuration sources, per-agent servers, and
//! the rmcp clients that talk to them.
//!
//! - [`config`]: where server definitions come from, what they mean, and how `fleet mcp add |
//!   remove` edits them. Pure data and files; nothing here starts a process.
//! - [`process`]: stdio servers in their own process groups, killed on drop and on exit.
//! - [`logs`]: the owner-only files stdio servers' stderr goes to.
//! - [`client`]: one rmcp session (stdio, streamable HTTP or legacy SSE), its timeouts and
//!   errors.
//! - [`sdk`]: servers hosted by the Agent SDK program that started fleet, reached through
//!   its control protocol ([`SdkMcpBridge`]).
//! - [`sse`]: the legacy HTTP+SSE client transport, which rmcp 3 no longer has.
//! - [`connection`]: [`McpConnection`], a server as the rest of fleet uses it: tools, calls with
//!   timeout and cancellation, `list_changed`, restart once after a crash.
//! - [`control`]: reconnecting a server and turning one off or on while the session runs.
//! - [`live`]: [`McpLive`], an agent's MCP tools kept in step with `list_changed`.
//! - [`output`]: results mapped to tool output, capped.
//! - [`resources`]: listing and reading a server's resources, bounded like a call.
//! - [`resource_tools`]: `ListMcpResourcesTool` and `ReadMcpResourceTool` over the servers that
//!   offer resources.
//! - [`session`]: a session's servers, started together, with their tools and statuses.
//! - [`status`]: the servers as the Agent SDK's `mcp_status` reports them.
//! - [`tool`]: [`McpTool`], one server tool as a `fleet_tools::Tool` named `mcp__server__tool`.

pub mod client;
pub mod config;
pub mod connection;
pub mod control;
pub mod live;
pub mod logs;
pub mod output;
pub mod process;
pub mod resource_tools;
pub mod resources;
pub mod sdk;
pub mod session;
pub mod sse;
pub mod status;
pub mod tool;

pub use client::{McpError, McpTimeouts};
pub use config::{McpServerConfig, McpSource, McpTransport};
pub use connection::{McpCallResult, McpConnection, McpServerSnapshot, McpStatus, McpToolInfo};
pub use control::McpControlError;
pub use live::McpLive;
pub use logs::McpLogs;
pub use process::kill_all_server_groups;
pub use resource_tools::{
    ListMcpResourcesTool, ReadMcpResourceTool, ResourceServers, LIST_MCP_RESOURCES_TOOL,
    READ_MCP_RESOURCE_TOOL,
};
pub use resources::{McpResource, McpResourceError, PagingProblem};
pub use sdk::{BridgeError, BridgeReply, SdkMcpBridge};
pub use session::{McpServerEntry, McpServers, McpStartFailure};
pub use status::{McpServerInfo, McpServerStatusReport, McpToolStatus};
pub use tool::{mcp_tool_name, McpTool};
