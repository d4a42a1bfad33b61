//! The host's requests after `initialize`: each is handled in a task of its own, so a slow one
//! (an MCP reconnect) never holds up an `interrupt`, and answered with its `request_id`. A
//! `control_cancel_request` stops the handling and no answer is sent, as the host expects.
//!
//! Requests that steer the session (`interrupt`, `set_model`, `set_permission_mode`,
//! `stop_task`) become the session's `Op`s (see `steer.rs`), as `-p` and the TUI steer it.
//! The rest have no `Op` and keep their own handles: `mcp_status`, `mcp_reconnect` and
//! `mcp_toggle` act on the session's MCP servers, `get_context_usage` reads the
//! [`SessionControls`].

use super::link::ControlLink;
use super::reader::HostRequest;
use super::steer::Steer;
use fleet_protocol::control::{ControlRequest, Empty, McpStatusAnswer, RequestBody};
use fleet_runtime::controls::{ControlError, SessionControls};
use fleet_runtime::mcp::McpControlError;
use fleet_runtime::subagent::McpSession;
use fleet_session::ops::SessionEnded;
use fleet_session::OpSender;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Why a host's request was answered with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("initialize was already answered: it must be the first line, and only once")]
    InitializeAgain,
    /// A subtype fleet does not know, or one only fleet sends (`can_use_tool`, …).
    #[error("fleet does not support the control request {0:?}")]
    Unsupported(String),
    #[error("the session has not started yet: no context to measure")]
    NotStarted,
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error(transparent)]
    Mcp(#[from] McpControlError),
    #[error(transparent)]
    Ended(#[from] SessionEnded),
    #[error("the answer could not be written: {0}")]
    Encode(#[from] serde_json::Error),
}

/// What the handlers act on. The session's [`OpSender`] is not here: [`Server::serve`] holds
/// it only while it serves, and a request task only until its op is answered, so the server
/// never keeps a session alive that would otherwise end.
pub struct Server {
    pub link: Arc<ControlLink>,
    pub mcp: Arc<McpSession>,
    /// For `get_context_usage`, which has no `Op`.
    pub controls: SessionControls,
}

impl Server {
    /// Answers requests until stdin ends; the steering ones through `ops`.
    pub async fn serve(self, mut requests: mpsc::UnboundedReceiver<HostRequest>, ops: OpSender) {
        let this = Arc::new(self);
        let mut running: HashMap<String, AbortHandle> = HashMap::new();
        while let Some(request) = requests.recv().await {
            running.retain(|_, task| !task.is_finished());
            match request {
                HostRequest::Call { id, request } => {
                    let this = this.clone();
                    let key = id.clone();
                    let task = match Steer::of(&request) {
                        Some(steer) => {
                            let ops = ops.clone();
                            tokio::spawn(async move {
                                let outcome = steer.send(&ops).await;
                                drop(ops);
                                this.link.respond(&id, outcome.map_err(|e| e.to_string()));
                            })
                        }
                        None => tokio::spawn(async move {
                            let outcome = this.handle(request).await;
                            this.link.respond(&id, outcome.map_err(|e| e.to_string()));
                        }),
                    };
                    running.insert(key, task.abort_handle());
                }
                HostRequest::Cancel { id } => {
                    if let Some(task) = running.remove(&id) {
                        task.abort();
                    }
                }
            }
        }
    }

    async fn handle(&self, request: RequestBody) -> Result<Value, ServerError> {
        let request = match request {
            RequestBody::Known(request) => request,
            RequestBody::Unknown(unknown) => return Err(ServerError::Unsupported(unknown.subtype)),
        };
        match request {
            ControlRequest::Initialize(_) => Err(ServerError::InitializeAgain),
            ControlRequest::McpStatus => {
                let servers = self.mcp.servers.status().await;
                answer(McpStatusAnswer {
                    mcp_servers: serde_json::to_value(servers)?,
                })
            }
            ControlRequest::McpReconnect { server_name } => {
                self.mcp.servers.reconnect(&server_name).await?;
                answer(Empty {})
            }
            ControlRequest::McpToggle {
                server_name,
                enabled,
            } => {
                self.mcp.servers.set_enabled(&server_name, enabled).await?;
                answer(Empty {})
            }
            ControlRequest::GetContextUsage => {
                let usage = self
                    .controls
                    .context_usage()
                    .ok_or(ServerError::NotStarted)?;
                answer(usage)
            }
            // Sent as ops by `serve`; never here.
            request @ (ControlRequest::Interrupt
            | ControlRequest::SetPermissionMode { .. }
            | ControlRequest::SetModel { .. }
            | ControlRequest::StopTask { .. }) => {
                Err(ServerError::Unsupported(request.subtype().to_string()))
            }
            // Questions only fleet asks; a host sending them is not understood.
            request @ (ControlRequest::CanUseTool(_)
            | ControlRequest::HookCallback(_)
            | ControlRequest::McpMessage(_)) => {
                Err(ServerError::Unsupported(request.subtype().to_string()))
            }
        }
    }
}

fn answer(body: impl Serialize) -> Result<Value, ServerError> {
    Ok(serde_json::to_value(body)?)
}

/// What a `can_use_tool` answer changes beyond its call. It acts on the
/// [`SessionControls`] directly: it is made (in `host.rs`) before the session and its
/// `OpSender` exist, and permission updates have no `Op`.
pub struct Effects(pub SessionControls);

impl super::approver::AnswerEffects for Effects {
    fn apply_updates(&self, updates: &[Value]) -> Result<(), ControlError> {
        self.0.apply_permission_update_values(updates)
    }

    fn interrupt(&self) {
        self.0.interrupt();
    }
}
