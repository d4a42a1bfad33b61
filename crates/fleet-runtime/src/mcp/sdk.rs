//! SDK-hosted MCP servers (`{"type": "sdk"}` in `--mcp-config`): the server lives in the Agent
//! SDK program that started fleet, and its JSON-RPC travels as `mcp_message` control requests
//! on fleet's stdin and stdout.
//!
//! The control link belongs to the CLI (`fleet-cli/src/control/`); this module only needs a
//! way to hand it one JSON-RPC message and get the answer back, which is [`SdkMcpBridge`].
//! [`SdkTransport`] puts an rmcp client session on top of a bridge, so an SDK server is an
//! ordinary [`super::McpConnection`]: the same listing, timeouts, `notifications/cancelled`
//! and tool names as a stdio server. There is no process: a restart is a new `initialize`.
//!
//! Requests run concurrently: each is its own task, so a slow tool call never holds up a
//! `tools/list` behind it. Notifications are delivered before `send` returns, which keeps
//! `notifications/initialized` ahead of the requests rmcp sends after it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use thiserror::Error;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What [`SdkMcpBridge::send`] gives back.
pub type BridgeReply<'a> =
    Pin<Box<dyn Future<Output = Result<Option<Value>, BridgeError>> + Send + 'a>>;

/// Why no answer came for a message to an SDK server: the control link's own error (the
/// control response was an error, the SDK host is gone, the session ended), shown as it is.
#[derive(Debug, Error)]
#[error(transparent)]
pub struct BridgeError(pub fleet_tools::error::BoxedSource);

/// The way to an SDK program's MCP servers, implemented by the control link.
pub trait SdkMcpBridge: Send + Sync {
    /// Sends `message` (one JSON-RPC request or notification) to the SDK server `server` (its
    /// key in `mcpServers`) as a `control_request` `mcp_message`, and waits for the answer:
    /// `Ok(Some(response))` with the `mcp_response` of a request, `Ok(None)` once a
    /// notification is acknowledged (the SDKs answer it `{"jsonrpc":"2.0","result":{}}`), or
    /// `Err` with why no answer came (the control response was an error, the SDK is gone).
    /// Called concurrently; dropping the future abandons the request.
    fn send(&self, server: &str, message: Value) -> BridgeReply<'_>;
}

/// Answers rmcp waits for, buffered between the request tasks and the client's reader. A
/// request's task waits for room rather than dropping an answer.
const INCOMING_BUFFER: usize = 64;

/// Why a message could not go to the SDK.
#[derive(Debug, Error)]
pub enum SdkTransportError {
    #[error("SDK MCP server {server:?}: {source}")]
    Send {
        server: String,
        #[source]
        source: BridgeError,
    },
    #[error("SDK MCP server {server:?}: the message could not be written as JSON: {source}")]
    Encode {
        server: String,
        #[source]
        source: serde_json::Error,
    },
}

/// An rmcp client transport over a [`SdkMcpBridge`], for one session with one SDK server.
pub struct SdkTransport {
    server: String,
    bridge: Arc<dyn SdkMcpBridge>,
    answers: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    /// Ends the request tasks still waiting when the session closes or is dropped; the SDK's
    /// late answers then go nowhere.
    closed: CancellationToken,
}

impl std::fmt::Debug for SdkTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdkTransport")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl SdkTransport {
    /// A transport to the SDK server configured under `server`.
    pub fn new(server: &str, bridge: Arc<dyn SdkMcpBridge>) -> Self {
        let (answers, incoming) = mpsc::channel(INCOMING_BUFFER);
        Self {
            server: server.to_string(),
            bridge,
            answers,
            incoming,
            closed: CancellationToken::new(),
        }
    }
}

impl Drop for SdkTransport {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl Transport<RoleClient> for SdkTransport {
    type Error = SdkTransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), SdkTransportError>> + Send + 'static {
        let server = self.server.clone();
        let bridge = self.bridge.clone();
        let answers = self.answers.clone();
        let closed = self.closed.clone();
        let message = serde_json::to_value(&item);
        async move {
            let message = message.map_err(|source| SdkTransportError::Encode {
                server: server.clone(),
                source,
            })?;
            match request_id(&message) {
                Some(id) => {
                    // Answered later, by a task of its own: rmcp waits for the reply on
                    // `receive`, and other requests must not queue behind this one.
                    tokio::spawn(async move {
                        let reply = tokio::select! {
                            () = closed.cancelled() => return,
                            reply = bridge.send(&server, message) => reply,
                        };
                        let answer = answer_for(&server, id, reply);
                        tokio::select! {
                            () = closed.cancelled() => {}
                            _ = answers.send(answer) => {}
                        }
                    });
                    Ok(())
                }
                None => bridge
                    .send(&server, message)
                    .await
                    .map(drop)
                    .map_err(|source| SdkTransportError::Send { server, source }),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        tokio::select! {
            () = self.closed.cancelled() => None,
            answer = self.incoming.recv() => answer,
        }
    }

    async fn close(&mut self) -> Result<(), SdkTransportError> {
        self.closed.cancel();
        self.incoming.close();
        Ok(())
    }
}

/// The id of a request; `None` for a notification or a response (rmcp answering the server),
/// which expect no reply.
fn request_id(message: &Value) -> Option<Value> {
    message.get("method")?;
    message.get("id").cloned()
}

/// The message rmcp gets for the request `id`: the SDK's response, or a JSON-RPC error that
/// fails this one request (an internal error, as the SDKs answer a server that threw).
fn answer_for(
    server: &str,
    id: Value,
    reply: Result<Option<Value>, BridgeError>,
) -> RxJsonRpcMessage<RoleClient> {
    let mut response = match reply {
        Ok(Some(response)) => response,
        Ok(None) => {
            return error_answer(
                &id,
                format!("SDK MCP server {server:?} acknowledged a request without answering it"),
            )
        }
        Err(err) => return error_answer(&id, format!("SDK MCP server {server:?}: {err}")),
    };
    // The answer is this request's, whatever id the SDK wrote (some leave it out on errors).
    if let Value::Object(fields) = &mut response {
        fields.insert("id".into(), id.clone());
        fields
            .entry("jsonrpc")
            .or_insert_with(|| Value::String("2.0".into()));
    }
    serde_json::from_value(response).unwrap_or_else(|e| {
        error_answer(
            &id,
            format!("SDK MCP server {server:?} sent an answer that is not JSON-RPC: {e}"),
        )
    })
}

/// A JSON-RPC internal error for the request `id`.
fn error_answer(id: &Value, message: String) -> RxJsonRpcMessage<RoleClient> {
    let id = serde_json::from_value::<RequestId>(id.clone())
        .unwrap_or_else(|_| RequestId::String(id.to_string().into()));
    JsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn as_value(message: RxJsonRpcMessage<RoleClient>) -> Value {
        serde_json::to_value(message).unwrap()
    }

    #[test]
    fn a_bridge_error_fails_the_one_request_with_its_id() {
        let answer = as_value(answer_for(
            "calc",
            json!(7),
            Err(BridgeError("boom".into())),
        ));
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32603);
        assert!(answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"calc\": boom"));
    }

    #[test]
    fn an_answer_carries_the_request_id_even_when_the_sdk_left_it_out() {
        let answer = as_value(answer_for(
            "calc",
            json!(3),
            Ok(Some(json!({"jsonrpc": "2.0", "result": {"tools": []}}))),
        ));
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["tools"], json!([]));
    }

    #[test]
    fn a_request_acknowledged_like_a_notification_is_an_error() {
        let answer = as_value(answer_for("calc", json!(1), Ok(None)));
        assert!(answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without answering"));
    }

    #[test]
    fn only_requests_wait_for_an_answer() {
        assert_eq!(
            request_id(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})),
            Some(json!(4))
        );
        assert_eq!(
            request_id(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})),
            None
        );
        assert_eq!(
            request_id(&json!({"jsonrpc": "2.0", "id": 4, "result": {}})),
            None
        );
    }
}
