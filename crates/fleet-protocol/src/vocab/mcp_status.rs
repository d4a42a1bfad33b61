//! How an MCP server stands, in the Agent SDK's words: the `status` of a server in the `init`
//! line's `mcp_servers` and in an `mcp_status` answer.

use super::open::open_vocabulary;

open_vocabulary! {
    /// An MCP server's state, spelled as the TypeScript SDK's `McpServerStatus` spells it.
    pub enum McpServerState as "MCP server status" {
        /// Started, and its tools are in the pool.
        Connected = "connected",
        /// Its start failed, or its configuration could not be used.
        Failed = "failed",
        /// The server wants an OAuth sign-in. fleet has no OAuth, so it never reports this;
        /// it is known so an SDK host's own reports read as known values.
        NeedsAuth = "needs-auth",
        /// Still starting.
        Pending = "pending",
        /// Turned off (by `mcp_toggle` or the configuration).
        Disabled = "disabled",
    }
}
