//! The host's requests after `initialize`: each is handled in a task of its own, so a slow one
//! (an MCP reconnect) never holds up an `interrupt`, and answered with its `request_id`. A
//! `control_cancel_request` stops the handling and no answer is sent, as the host expects.

use super::link::ControlLink;
use super::reader::HostRequest;
use fleet_runtime::controls::SessionControls;
use fleet_runtime::subagent::McpSession;
use fleet_tools::permissions::PermissionMode;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// What the handlers act on.
pub struct Server {
    pub link: Arc<ControlLink>,
    pub mcp: Arc<McpSession>,
    pub controls: SessionControls,
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
                self.mcp
                    .servers
                    .reconnect(name)
                    .await
                    .map_err(|e| e.to_string())?;
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
            "interrupt" => {
                // Idle or not, the host's stop is acknowledged, as Claude Code does.
                self.controls.interrupt();
                Ok(json!({"still_queued": []}))
            }
            "set_permission_mode" => {
                let mode = body
                    .get("mode")
                    .and_then(Value::as_str)
                    .ok_or("set_permission_mode needs a string \"mode\"")?;
                let mode: PermissionMode = mode.parse().map_err(|e: String| e)?;
                let mode = self
                    .controls
                    .set_permission_mode(mode)
                    .map_err(|e| e.to_string())?;
                Ok(json!({"mode": mode.as_str()}))
            }
            "set_model" => {
                let model = match body.get("model") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(model)) => Some(model.as_str()),
                    Some(_) => return Err("set_model: \"model\" must be a string or null".into()),
                };
                let model = self.controls.set_model(model).map_err(|e| e.to_string())?;
                Ok(json!({"model": model}))
            }
            "get_context_usage" => {
                let usage = self
                    .controls
                    .context_usage()
                    .ok_or("the session has not started yet: no context to measure")?;
                serde_json::to_value(usage).map_err(|e| e.to_string())
            }
            "stop_task" => {
                let task_id = body
                    .get("task_id")
                    .and_then(Value::as_str)
                    .ok_or("stop_task needs a string \"task_id\"")?;
                self.controls
                    .stop_task(task_id)
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
pub struct Effects(pub SessionControls);

impl super::approver::AnswerEffects for Effects {
    fn apply_updates(&self, updates: &[Value]) -> Result<(), String> {
        self.0
            .apply_permission_update_values(updates)
            .map_err(|e| e.to_string())
    }

    fn interrupt(&self) {
        self.0.interrupt();
    }
}
