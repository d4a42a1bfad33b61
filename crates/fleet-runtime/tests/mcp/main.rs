//! The MCP client against `fleet-mcp-fault`, a real rmcp server started as a real process
//! (stdio) or on loopback (streamable HTTP, legacy SSE): calls, the output cap, the timeout, cancellation,
//! a crash and the one restart, `list_changed`, bad schemas, and no process left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod calls;
mod everything;
mod faults;
mod lifecycle;
mod live;
mod resources;
mod sse;
mod support;
