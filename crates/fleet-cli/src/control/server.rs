//! The host's requests after `initialize`: each is handled in a task of its own, so a slow one
//! (an MCP reconnect) never holds up an `interrupt`, and answered with its `request_id`. A
//! `control_cancel_request` stops the handling and no answer is sent, as the host expects.

use super::link::ControlLink;
use super::reader::HostRequest;
use fleet_protocol::KilledBy;
use fleet_runtime::subagent::{McpSession, Spawner};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// What the handlers act on.
pub struct Server {
    pub link: Arc<ControlLink>,
    pub mcp: Arc<McpSession>,
    pub spawner: Arc<Spawner>,
}

impl Server {
    /// Answers requests until stdin ends.
    pub async fn serve(self, mut requests: mpsc::UnboundedReceiver<HostRequest>) {
        let this = Arc::new(self);
        let mut running: HashMap<String, AbortHandle> = HashMap::new();
        while let Some(request) = requests.recv().await {
            running.retain(|_, task| !task.is_finished());
            match request {
                HostRequest::Call { id, body } => {
                    let this = this.clone();
                    let key = id.clone();
                    let task = tokio::spawn(async move {
                        let outcome = this.handle(&body).await;
                        this.link.respond(&id, outcome);
                    });
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

    async fn handle(&self, body: &Map<String, Value>) -> Result<Value, String> {
        let subtype = body.get("subtype").and_then(Value::as_str).unwrap_or("");
        match subtype {
            "initialize" => Err(
                "initialize was already answered: it must be the first line, and only once".into(),
            ),
            "mcp_status" => {
                let servers = self.mcp.servers.status().await;
                Ok(json!({"mcpServers": serde_json::to_value(servers).map_err(|e| e.to_string())?}))
            }
            "mcp_reconnect" => {
                let name = server_name(body)?;
                self.mcp.servers.reconnect(name).await.map_err(|e| e.to_string())?;
                Ok(json!({}))
            }
            "mcp_toggle" => {
                let name = server_name(body)?;
                let enabled = body
                    .get("enabled")
                    .and_then(Value::as_bool)
                    .ok_or("mcp_toggle needs a boolean \"enabled\"")?;
                self.mcp
                    .servers
                    .set_enabled(name, enabled)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(json!({}))
            }
            "stop_task" => {
                let task_id = body
                    .get("task_id")
                    .and_then(Value::as_str)
                    .ok_or("stop_task needs a string \"task_id\"")?;
                self.spawner
                    .tasks()
                    .stop(task_id, KilledBy::User)
                    .await
                    .map_err(|err| err.to_string())?;
                Ok(json!({}))
            }
            other => Err(format!(
                "fleet does not support the control request {other:?}"
            )),
        }
    }
}

fn server_name(body: &Map<String, Value>) -> Result<&str, String> {
    body.get("serverName")
        .and_then(Value::as_str)
        .ok_or_else(|| "needs a string \"serverName\"".to_string())
}

/// What a `can_use_tool` answer changes beyond its call.
#[derive(Default)]
pub struct Effects {}

impl super::approver::AnswerEffects for Effects {
    fn apply_updates(&self, updates: &[Value]) -> Result<(), String> {
        if updates.is_empty() {
            return Ok(());
        }
        Err("permission updates are not supported yet".into())
    }

    fn interrupt(&self) {}
}
