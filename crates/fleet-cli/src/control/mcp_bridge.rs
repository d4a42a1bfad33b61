//! MCP servers that live in the SDK host's process (`{"type": "sdk"}`): every JSON-RPC
//! message of fleet's MCP client goes to the host as an `mcp_message` request, and the
//! `mcp_response` in its answer comes back to the client.

use super::link::ControlLink;
use fleet_runtime::mcp::{BridgeReply, SdkMcpBridge};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct LinkBridge {
    link: Arc<ControlLink>,
    /// Withdraws messages still waiting when the session ends.
    cancel: CancellationToken,
}

impl LinkBridge {
    pub fn new(link: Arc<ControlLink>, cancel: CancellationToken) -> Self {
        Self { link, cancel }
    }
}

impl SdkMcpBridge for LinkBridge {
    fn send(&self, server: &str, message: Value) -> BridgeReply<'_> {
        let body = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        Box::pin(async move {
            let answer = self
                .link
                .request("mcp_message", body, &self.cancel)
                .await
                .map_err(|err| err.to_string())?;
            Ok(answer.get("mcp_response").cloned())
        })
    }
}
