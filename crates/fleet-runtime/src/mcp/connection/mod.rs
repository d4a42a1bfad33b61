//! [`McpConnection`]: one configured server as the rest of fleet uses it.
//!
//! Calls run concurrently: each takes a clone of the rmcp peer and holds no lock while it
//! waits. A call whose transport closes under it (the server died) fails, marks the
//! connection failed, and the next call restarts the server, once per connection; after that
//! the connection stays failed and says why.

mod control;
mod listing;

pub use control::McpServerSnapshot;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fleet_tools::ToolOutput;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::{json, Value};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::client::{
    open_session, with_last_line, FleetClientHandler, McpError, McpTimeouts, ServerSignals, Session,
};
use super::config::McpServerConfig;
use super::output::{map_call_result, max_output_tokens_from_env};
use super::sdk::SdkMcpBridge;
use listing::list_tools;

/// One tool a server offers, as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// The server's own name for it (not the `mcp__…` name).
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// The server's `readOnlyHint` annotation; MCP tools are not read-only without it.
    pub read_only_hint: bool,
    /// The tool's `annotations` object as listed (`Null` without one), for status reports.
    pub annotations: Value,
}

/// Where a connection stands, for `fleet mcp list` and the stream-json `init` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpStatus {
    Connected,
    /// Turned off ([`McpConnection::set_enabled`]): stopped, no tools, no calls until it is
    /// turned on again.
    Disabled,
    /// Dead; `restart_left` says whether the next call will try to start it again.
    Failed {
        reason: String,
        restart_left: bool,
    },
}

/// What one call gives: the tool output for the model, or why there is none.
pub type McpCallResult = Result<ToolOutput, McpError>;

struct Inner {
    session: Option<Session>,
    status: McpStatus,
    tools: Arc<Vec<McpToolInfo>>,
    /// Tools the server listed that fleet cannot offer, with the reason (a non-object schema).
    skipped: Vec<(String, String)>,
    instructions: Option<String>,
    restarted: bool,
    /// Bumped whenever `tools` is replaced, so agents holding adapters know theirs are stale.
    generation: u64,
    /// The server's `serverInfo` name and version from `initialize`.
    server_info: Option<(String, String)>,
    /// Counts the sessions started, so a failure is blamed on the session it happened in.
    epoch: u64,
}

/// A connected MCP server. Dropping it kills a stdio server's process group.
pub struct McpConnection {
    config: McpServerConfig,
    /// The way to an SDK server (`"type": "sdk"`); kept for its restarts.
    bridge: Option<Arc<dyn SdkMcpBridge>>,
    /// Set while a reconnect or an enable is starting the server, so a status report can say
    /// `pending` without waiting for the start.
    connecting: AtomicBool,
    pub(super) timeouts: McpTimeouts,
    pub(super) max_output_tokens: usize,
    signals: Arc<ServerSignals>,
    /// Held while a `list_changed` is being acted on, so agents asking at once list the
    /// tools once and all see the new list.
    syncing: Mutex<()>,
    /// Where a stdio server's stderr goes, every start of it (see [`super::logs`]).
    log: Option<PathBuf>,
    inner: Mutex<Inner>,
}

impl McpConnection {
    /// Starts the server, completes `initialize` within `timeouts.connect` and lists its tools.
    pub async fn connect(
        config: &McpServerConfig,
        timeouts: McpTimeouts,
    ) -> Result<Self, McpError> {
        Self::connect_with(config, timeouts, None).await
    }

    /// [`Self::connect`], with the bridge an SDK server (`"type": "sdk"`) is reached through.
    pub async fn connect_with(
        config: &McpServerConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
    ) -> Result<Self, McpError> {
        Self::connect_logged(config, timeouts, bridge, None).await
    }

    /// [`Self::connect_with`], a stdio server's stderr going to `log` (kept only in memory
    /// without one).
    pub async fn connect_logged(
        config: &McpServerConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
        log: Option<PathBuf>,
    ) -> Result<Self, McpError> {
        let connection = Self::new(config, timeouts, bridge, log, McpStatus::Connected);
        {
            let mut inner = connection.inner.lock().await;
            connection.start_into(&mut inner).await?;
        }
        Ok(connection)
    }

    /// A connection with no session yet. One created failed has no automatic restart left.
    fn new(
        config: &McpServerConfig,
        timeouts: McpTimeouts,
        bridge: Option<Arc<dyn SdkMcpBridge>>,
        log: Option<PathBuf>,
        status: McpStatus,
    ) -> Self {
        Self {
            config: config.clone(),
            bridge,
            log,
            connecting: AtomicBool::new(false),
            timeouts,
            max_output_tokens: max_output_tokens_from_env(),
            signals: Arc::new(ServerSignals::default()),
            syncing: Mutex::new(()),
            inner: Mutex::new(Inner {
                session: None,
                restarted: matches!(status, McpStatus::Failed { .. }),
                status,
                tools: Arc::new(Vec::new()),
                skipped: Vec::new(),
                instructions: None,
                generation: 0,
                server_info: None,
                epoch: 0,
            }),
        }
    }

    /// Opens a session into `inner` (over the bridge for an SDK server) and lists its tools.
    async fn start_into(&self, inner: &mut Inner) -> Result<(), McpError> {
        start(
            &self.config,
            self.timeouts,
            &self.signals,
            self.bridge.as_ref(),
            self.log.as_deref(),
            inner,
        )
        .await
    }

    /// The same connection with its output cap set explicitly (instead of from the environment).
    pub fn with_max_output_tokens(mut self, tokens: usize) -> Self {
        self.max_output_tokens = tokens;
        self
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// The file a stdio server's stderr goes to, when it has one and it has been written
    /// (a server whose command could not be run has none).
    pub fn log(&self) -> Option<&Path> {
        self.log.as_deref().filter(|path| path.exists())
    }

    pub async fn status(&self) -> McpStatus {
        self.inner.lock().await.status.clone()
    }

    /// The tools as last listed.
    pub async fn tools(&self) -> Arc<Vec<McpToolInfo>> {
        self.inner.lock().await.tools.clone()
    }

    /// Listed tools left out, with why.
    pub async fn skipped_tools(&self) -> Vec<(String, String)> {
        self.inner.lock().await.skipped.clone()
    }

    /// The server's `instructions` from `initialize`, uncapped (the system prompt caps them).
    pub async fn instructions(&self) -> Option<String> {
        self.inner.lock().await.instructions.clone()
    }

    /// The stdio server's pid (its process group id), for tests and diagnostics.
    pub async fn server_pid(&self) -> Option<i32> {
        let inner = self.inner.lock().await;
        inner.session.as_ref()?.process.as_ref().map(|p| p.pid())
    }

    /// True once after the server sent `notifications/tools/list_changed`: the caller then
    /// calls [`Self::refresh_tools`] before building the agent's next request.
    pub fn take_tools_changed(&self) -> bool {
        self.signals.tools_changed.swap(false, Ordering::SeqCst)
    }

    /// How many `notifications/progress` the server has sent, for diagnostics and tests.
    pub fn progress_notifications(&self) -> u64 {
        *self.signals.progress.borrow()
    }

    /// Runs `request` under `MCP_TOOL_TIMEOUT`, counted from the last sign of life: a
    /// long operation that keeps reporting progress is not cut off. `None` on timeout.
    pub(super) async fn within_call_timeout<F: std::future::Future>(
        &self,
        request: F,
    ) -> Option<F::Output> {
        let Some(timeout) = self.timeouts.call else {
            return Some(request.await);
        };
        let mut progress = self.signals.progress.subscribe();
        tokio::pin!(request);
        loop {
            tokio::select! {
                outcome = &mut request => return Some(outcome),
                () = tokio::time::sleep(timeout) => return None,
                changed = progress.changed() => {
                    if changed.is_err() {
                        return tokio::time::timeout(timeout, request).await.ok();
                    }
                }
            }
        }
    }

    /// Lists the server's tools again and returns the new list.
    pub async fn refresh_tools(&self) -> Result<Arc<Vec<McpToolInfo>>, McpError> {
        let peer = self.ready_peer().await?;
        let (tools, skipped) = list_tools(&self.config.name, &peer).await?;
        let mut inner = self.inner.lock().await;
        inner.tools = Arc::new(tools);
        inner.skipped = skipped;
        inner.generation += 1;
        Ok(inner.tools.clone())
    }

    /// Which listing of the tools is current: it changes each time the list is replaced.
    pub async fn generation(&self) -> u64 {
        self.inner.lock().await.generation
    }

    /// Acts on a pending `list_changed` (lists the tools again), then says which listing is
    /// current. Called before every model request of an agent that uses this server, so the
    /// next request shows the new tools. A failed listing keeps the old tools; the server's
    /// next notification tries again.
    pub async fn sync_tools(&self) -> u64 {
        let _one_at_a_time = self.syncing.lock().await;
        if self.take_tools_changed() {
            if let Err(err) = self.refresh_tools().await {
                tracing::warn!("{err}; keeping the tools listed before");
            }
        }
        self.generation().await
    }

    /// Calls `tool` with `arguments` (a JSON object). Gives up after `MCP_TOOL_TIMEOUT` or when
    /// `cancel` fires; either way the server gets `notifications/cancelled` for the request
    /// (rmcp sends it when the pending request is dropped).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> McpCallResult {
        let server = self.config.name.clone();
        let call_error = |message: String| McpError::Call {
            server: server.clone(),
            tool: tool.to_string(),
            message,
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(call_error(format!(
                    "arguments must be an object, not {other}"
                )))
            }
        };
        let params: CallToolRequestParams =
            serde_json::from_value(json!({"name": tool, "arguments": arguments}))
                .map_err(|e| call_error(e.to_string()))?;
        let (peer, epoch) = self.ready_session().await?;
        let request = peer.call_tool_once(params);
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(McpError::Cancelled { server, tool: tool.to_string() });
            }
            outcome = self.within_call_timeout(request) => outcome,
        };
        match outcome {
            None => Err(McpError::CallTimeout {
                server,
                tool: tool.to_string(),
                timeout: self.timeouts.call.unwrap_or_default(),
            }),
            Some(Ok(CallToolResponse::Complete(result))) => {
                // rmcp hands each notification to a task of its own; a `list_changed` sent
                // before this result gets its turn now, so the agent's next request sees it.
                tokio::task::yield_now().await;
                let value = serde_json::to_value(&result).map_err(|e| call_error(e.to_string()))?;
                Ok(map_call_result(&value, self.max_output_tokens))
            }
            Some(Ok(_)) => Err(call_error(
                "the server asked for more input or started a task; fleet does not support \
                 either yet"
                    .to_string(),
            )),
            Some(Err(ServiceError::McpError(e))) => Err(call_error(e.message.to_string())),
            Some(Err(e)) if peer.is_transport_closed() || is_transport_error(&e) => Err(self
                .mark_failed_in(epoch, format!("the server exited during the call ({e})"))
                .await),
            Some(Err(e)) => Err(call_error(e.to_string())),
        }
    }

    /// A peer to send on: the live one, or a restarted one if the connection failed and has
    /// its restart left.
    pub(super) async fn ready_peer(&self) -> Result<Peer<RoleClient>, McpError> {
        self.ready_session().await.map(|(peer, _)| peer)
    }

    /// [`Self::ready_peer`] and which session it belongs to, so a call that fails can tell
    /// whether the session it used is still the current one (a reconnect may have replaced
    /// it meanwhile).
    async fn ready_session(&self) -> Result<(Peer<RoleClient>, u64), McpError> {
        let mut inner = self.inner.lock().await;
        if let Some(session) = &inner.session {
            if !session.service.is_closed() && !session.service.peer().is_transport_closed() {
                return Ok((session.service.peer().clone(), inner.epoch));
            }
            let reason = exit_reason(session, "the server exited");
            fail(&mut inner, reason).await;
        }
        let reason = match inner.status.clone() {
            McpStatus::Failed { reason, .. } => reason,
            McpStatus::Disabled => return Err(self.failed_error(control::DISABLED.into())),
            McpStatus::Connected => return Err(self.failed_error("no session".to_string())),
        };
        if inner.restarted {
            return Err(self.failed_error(reason));
        }
        inner.restarted = true;
        match self.start_into(&mut inner).await {
            Ok(()) => match &inner.session {
                Some(session) => Ok((session.service.peer().clone(), inner.epoch)),
                None => Err(self.failed_error(reason)),
            },
            Err(e) => {
                inner.status = McpStatus::Failed {
                    reason: format!("restart failed: {}", e.reason()),
                    restart_left: false,
                };
                Err(e)
            }
        }
    }

    /// [`Self::mark_failed`] for a call made on session `epoch`: when another session has
    /// replaced it since (a reconnect, a toggle), the current one is left alone.
    async fn mark_failed_in(&self, epoch: u64, reason: String) -> McpError {
        let mut inner = self.inner.lock().await;
        if inner.epoch != epoch {
            return self.failed_error(reason);
        }
        self.fail_locked(&mut inner, reason).await
    }

    pub(super) async fn mark_failed(&self, reason: String) -> McpError {
        let mut inner = self.inner.lock().await;
        self.fail_locked(&mut inner, reason).await
    }

    async fn fail_locked(&self, inner: &mut Inner, reason: String) -> McpError {
        let reason = match &inner.session {
            Some(session) => exit_reason(session, &reason),
            None => reason,
        };
        fail(inner, reason.clone()).await;
        self.failed_error(reason)
    }

    fn failed_error(&self, reason: String) -> McpError {
        McpError::Failed {
            server: self.config.name.clone(),
            reason,
        }
    }
}

/// Opens a session into `inner` and lists its tools.
async fn start(
    config: &McpServerConfig,
    timeouts: McpTimeouts,
    signals: &Arc<ServerSignals>,
    bridge: Option<&Arc<dyn SdkMcpBridge>>,
    log: Option<&Path>,
    inner: &mut Inner,
) -> Result<(), McpError> {
    let handler = FleetClientHandler {
        signals: signals.clone(),
    };
    let session = open_session(config, timeouts, handler, bridge, log).await?;
    let peer = session.service.peer().clone();
    let listed = tokio::time::timeout(timeouts.connect, list_tools(&config.name, &peer)).await;
    let (tools, skipped) = match listed {
        Ok(Ok(listed)) => listed,
        Ok(Err(e)) => {
            stop(session).await;
            return Err(e);
        }
        Err(_) => {
            stop(session).await;
            return Err(McpError::ConnectTimeout {
                server: config.name.clone(),
                timeout: timeouts.connect,
            });
        }
    };
    let info = session.service.peer_info();
    inner.instructions = info.as_ref().and_then(|info| info.instructions.clone());
    inner.server_info = info
        .as_ref()
        .and_then(|info| info.server_info.as_ref())
        .map(|server| (server.name.clone(), server.version.clone()));
    inner.tools = Arc::new(tools);
    inner.skipped = skipped;
    inner.generation += 1;
    inner.epoch += 1;
    inner.session = Some(session);
    inner.status = McpStatus::Connected;
    signals.tools_changed.store(false, Ordering::SeqCst);
    Ok(())
}

async fn fail(inner: &mut Inner, reason: String) {
    if let Some(session) = inner.session.take() {
        stop(session).await;
    }
    if inner.status == McpStatus::Disabled {
        // A call cut off by the disable: the server is off, not failed.
        return;
    }
    inner.status = McpStatus::Failed {
        reason,
        restart_left: !inner.restarted,
    };
}

async fn stop(mut session: Session) {
    let _ = session.service.close().await;
    if let Some(process) = session.process.take() {
        process.shutdown().await;
    }
}

/// `reason`, with the last line a stdio server wrote to stderr (all of it is in its log).
fn exit_reason(session: &Session, reason: &str) -> String {
    match session.process.as_ref() {
        Some(process) => with_last_line(reason.to_string(), process.stderr()),
        None => reason.to_string(),
    }
}

pub(super) fn is_transport_error(e: &ServiceError) -> bool {
    matches!(
        e,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}
