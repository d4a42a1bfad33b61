//! What a tool call may know about the agent that makes it.

use crate::background::{Enrolment, MoveSignal};
use crate::file_state::FileState;
use crate::permissions::ReadGuard;
use crate::sandbox::AgentSandbox;
use crate::workspace::Workspace;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Shared by every call one agent makes. Cloning is cheap; the file state is shared so that a
/// Read in one call is seen by the Write in the next.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The agent's working directory: relative paths and Bash start here.
    pub cwd: PathBuf,
    /// The project root and the folders added with `--add-dir`.
    pub workspace: Arc<Workspace>,
    /// What this agent has read, so Write and Edit can refuse to clobber unseen changes.
    pub files: Arc<FileState>,
    /// Cancelled when the agent is interrupted; long-running tools must watch it.
    pub cancel: CancellationToken,
    /// The tool_use id of the call being answered (set per call by the agent loop).
    pub tool_use_id: Option<String>,
    /// The API request id of the reply that made the call, when the provider sent one.
    pub request_id: Option<String>,
    /// How this agent's Bash processes are confined.
    pub sandbox: Arc<AgentSandbox>,
    /// Paths this agent may not read, which Read, Grep and Glob skip.
    pub read_guard: Arc<ReadGuard>,
    /// The user's "move to the background" for this agent's foreground calls (Ctrl+B); set
    /// on the main agent of a session with controls, `None` elsewhere.
    pub background: Option<MoveSignal>,
}

impl ToolContext {
    pub fn new(cwd: PathBuf, workspace: Arc<Workspace>) -> Self {
        Self {
            cwd,
            workspace,
            files: Arc::new(FileState::default()),
            cancel: CancellationToken::new(),
            tool_use_id: None,
            request_id: None,
            sandbox: Arc::new(AgentSandbox::off()),
            read_guard: Arc::new(ReadGuard::none()),
            background: None,
        }
    }

    /// The same context with its long-running calls answering `signal`.
    pub fn with_background(mut self, signal: MoveSignal) -> Self {
        self.background = Some(signal);
        self
    }

    /// Enrols the call being made with the agent's move signal, when it has one.
    pub fn enrol_foreground(&self) -> Option<Enrolment> {
        self.background.as_ref().map(MoveSignal::enrol)
    }

    /// The same context with its Bash processes confined by `sandbox`.
    pub fn with_sandbox(mut self, sandbox: Arc<AgentSandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The same context with `guard` deciding which paths may not be read.
    pub fn with_read_guard(mut self, guard: Arc<ReadGuard>) -> Self {
        self.read_guard = guard;
        self
    }

    /// The context for answering one call.
    pub fn for_call(
        &self,
        cancel: CancellationToken,
        tool_use_id: &str,
        request_id: Option<&str>,
    ) -> Self {
        Self {
            cancel,
            tool_use_id: Some(tool_use_id.to_string()),
            request_id: request_id.map(str::to_string),
            ..self.clone()
        }
    }

    /// The same agent's context with a different cancellation token (one per turn or call).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        Self {
            cancel,
            ..self.clone()
        }
    }
}
