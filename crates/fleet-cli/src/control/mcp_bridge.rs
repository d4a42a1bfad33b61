//! MCP servers that live in the SDK host's process (`{"type": "sdk"}`): every JSON-RPC
//! message of fleet's MCP client goes to the host as an `mcp_message` request, and the
//! `mcp_response` in its answer comes back to the client.

use super::link::ControlLink;
use fleet_protocol::control::{ControlRequest, McpMessage, McpMessageAnswer};
use fleet_runtime::mcp::{BridgeError, BridgeReply, SdkMcpBridge};
use serde_json::Value;
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
        let request = ControlRequest::McpMessage(McpMessage {
            server_name: server.to_string(),
            message,
        });
        Box::pin(async move {
            let answer = self
                .link
                .request(request, &self.cancel)
                .await
                .map_err(|err| BridgeError(Box::new(err)))?;
            // An answer that is not an object carries no reply, as a notification's.
            let answer: McpMessageAnswer = serde_json::from_value(answer).unwrap_or_default();
            Ok(answer.mcp_response)
        })
    }
}
