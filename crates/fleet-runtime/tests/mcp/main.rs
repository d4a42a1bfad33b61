//! The MCP client against `fleet-mcp-fault`, a real rmcp server started as a real process
//! (stdio) or on loopback (streamable HTTP, legacy SSE): calls, the output cap, the timeout, cancellation,
//! a crash and the one restart, `list_changed`, bad schemas, and no process left behind; SDK
//! servers over a bridge, the status report, reconnects and toggles.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod calls;
use crate::common;
mod control;
mod everything;
mod faults;
mod lifecycle;
mod live;
mod resources;
mod sdk;
mod sdk_bridge;
mod sse;
mod support;
