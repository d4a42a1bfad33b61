//! The MCP bench's baseline: the smallest client that can drive a stdio server — one task
//! writing newline-delimited JSON-RPC on the server's stdin and reading its stdout, no rmcp,
//! no schema types, no cap, no restart logic. What a call costs here is, as near as can be
//! measured from outside, the server's own time plus the pipes; what fleet's path costs on top
//! of it is fleet's overhead.

use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long one answer may take before the bench gives up on the server.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// An older protocol version every server still speaks; the baseline needs nothing newer.
const PROTOCOL_VERSION: &str = "2025-06-18";

/// A stdio server driven by hand.
pub(super) struct RawServer {
    child: Child,
    pid: i32,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

/// Per-call latencies and the wall time of the batches they came from.
#[derive(Debug, Default)]
pub(super) struct Timings {
    pub millis: Vec<f64>,
    pub wall: Duration,
}

impl Timings {
    /// Adds another batch.
    pub(super) fn extend(&mut self, other: Timings) {
        self.millis.extend(other.millis);
        self.wall += other.wall;
    }
}

impl RawServer {
    /// Starts `command args…` in `cwd` (in its own process group, so stopping it stops what
    /// it started) and completes the `initialize` handshake.
    pub(super) async fn start(command: &str, args: &[String], cwd: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(command)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {command}"))?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .context("the server exited as it started")?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the server's pipes were not opened");
        };
        let mut server = Self {
            child,
            pid,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 0,
        };
        let id = server
            .send(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "fleet-bench-raw", "version": "0"},
                }),
            )
            .await?;
        loop {
            let message = server.read().await?;
            if message["id"] == id {
                if message.get("result").is_none() {
                    bail!("initialize was refused: {message}");
                }
                break;
            }
        }
        server
            .write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(server)
    }

    /// `calls` calls of `tool` with `input`, `concurrency` in flight at once: a new one is
    /// sent as soon as an answer arrives. Every answer must be a result that is not an error.
    pub(super) async fn run(
        &mut self,
        tool: &str,
        input: &Value,
        calls: usize,
        concurrency: usize,
    ) -> anyhow::Result<Timings> {
        let params = json!({"name": tool, "arguments": input});
        let mut pending: HashMap<u64, Instant> = HashMap::new();
        let mut millis = Vec::with_capacity(calls);
        let mut sent = 0;
        let wall = Instant::now();
        while sent < calls.min(concurrency) {
            let started = Instant::now();
            let id = self.send("tools/call", params.clone()).await?;
            pending.insert(id, started);
            sent += 1;
        }
        while millis.len() < calls {
            let message = self.read().await?;
            let Some(started) = message["id"].as_u64().and_then(|id| pending.remove(&id)) else {
                continue; // a notification or a request of the server's: not ours to time
            };
            millis.push(started.elapsed().as_secs_f64() * 1000.0);
            let result = &message["result"];
            if result.is_null() || result["isError"] == true {
                bail!("the raw call of {tool} failed: {message}");
            }
            if sent < calls {
                let started = Instant::now();
                let id = self.send("tools/call", params.clone()).await?;
                pending.insert(id, started);
                sent += 1;
            }
        }
        Ok(Timings {
            millis,
            wall: wall.elapsed(),
        })
    }

    /// Kills the server's group and reaps the server.
    pub(super) async fn stop(mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait().await;
    }

    /// Sends a request; its id.
    async fn send(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    async fn write(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .context("writing to the server")?;
        self.stdin.flush().await.context("writing to the server")
    }

    /// The next JSON message on the server's stdout.
    async fn read(&mut self) -> anyhow::Result<Value> {
        loop {
            let line = tokio::time::timeout(ANSWER_TIMEOUT, self.lines.next_line())
                .await
                .context("the server did not answer within a minute")?
                .context("reading from the server")?
                .context("the server closed its output")?;
            if line.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&line)
                .with_context(|| format!("the server wrote something that is not JSON: {line}"));
        }
    }
}
