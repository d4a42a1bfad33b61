//! A bridge for SDK-server tests that fakes nothing: where the Agent SDK would hand each
//! `mcp_message` to an MCP server in its own process, this one writes it to a real
//! `fleet-mcp-fault` process over stdio and hands back what the server answers. An
//! `initialize` starts a fresh process, so a re-initialized server is visibly a new one.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use fleet_runtime::mcp::{BridgeError, BridgeReply, SdkMcpBridge};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

type Waiting = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// One running server process and the requests waiting for its answers.
struct Process {
    child: Child,
    stdin: ChildStdin,
    waiting: Waiting,
}

pub struct ForwardingBridge {
    /// The SDK server name this bridge serves; any other is an error, as in the SDKs.
    server: String,
    args: Vec<String>,
    process: tokio::sync::Mutex<Option<Process>>,
    /// Every method sent to the bridge, in order.
    pub seen: Mutex<Vec<String>>,
    /// A method the bridge fails with an error instead of forwarding (a broken control link).
    pub fail_method: Mutex<Option<String>>,
}

impl ForwardingBridge {
    pub fn new(server: &str, args: &[&str]) -> Arc<Self> {
        Arc::new(Self {
            server: server.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            process: tokio::sync::Mutex::new(None),
            seen: Mutex::new(Vec::new()),
            fail_method: Mutex::new(None),
        })
    }

    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// The pid of the process answering now.
    pub async fn pid(&self) -> Option<u32> {
        self.process
            .lock()
            .await
            .as_ref()
            .and_then(|p| p.child.id())
    }

    async fn spawn(&self) -> Result<Process, String> {
        let command = fleet_testkit::mcp_fault_server().map_err(|e| e.to_string())?;
        let mut child = Command::new(command)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let waiting: Waiting = Arc::default();
        let answers = waiting.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                // The server's own notifications are dropped, as the SDKs drop them.
                let Some(id) = message
                    .get("id")
                    .filter(|_| message.get("method").is_none())
                else {
                    continue;
                };
                if let Some(waiter) = answers.lock().unwrap().remove(&id.to_string()) {
                    let _ = waiter.send(message);
                }
            }
        });
        Ok(Process {
            child,
            stdin,
            waiting,
        })
    }

    async fn forward(&self, message: Value) -> Result<Option<Value>, String> {
        let method = message["method"].as_str().unwrap_or_default().to_string();
        self.seen.lock().unwrap().push(method.clone());
        if self.fail_method.lock().unwrap().as_deref() == Some(method.as_str()) {
            return Err("the control link is closed".into());
        }
        let mut process = self.process.lock().await;
        if method == "initialize" || process.is_none() {
            if let Some(mut old) = process.take() {
                let _ = old.child.kill().await;
            }
            *process = Some(self.spawn().await?);
        }
        let Some(running) = process.as_mut() else {
            return Err("no process".into());
        };
        let answer = match message.get("id") {
            Some(id) => {
                let (tx, rx) = oneshot::channel();
                running.waiting.lock().unwrap().insert(id.to_string(), tx);
                Some(rx)
            }
            None => None,
        };
        let mut line = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        line.push(b'\n');
        running
            .stdin
            .write_all(&line)
            .await
            .map_err(|e| e.to_string())?;
        // Not held while waiting: other requests go out meanwhile.
        drop(process);
        match answer {
            Some(rx) => rx
                .await
                .map(Some)
                .map_err(|_| "the server went away".to_string()),
            None => Ok(None),
        }
    }
}

impl SdkMcpBridge for ForwardingBridge {
    fn send(&self, server: &str, message: Value) -> BridgeReply<'_> {
        let known = server == self.server;
        let server = server.to_string();
        Box::pin(async move {
            if !known {
                return Err(BridgeError(format!("Server '{server}' not found").into()));
            }
            self.forward(message)
                .await
                .map_err(|why| BridgeError(why.into()))
        })
    }
}
