//! The person's yes or no, asked in the UI: every "ask" decision of the session — the main
//! agent's, a synchronous subagent's, a background agent's — becomes a
//! [`UiEvent::Permission`], and the call waits for the matching answer. The driver hands the
//! answer back through [`UiApprover::take`]; an agent cancelled while it waits withdraws its
//! question, so the UI never keeps a prompt nobody waits for.

use fleet_protocol::AgentRef;
use fleet_runtime::approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::Access;
use fleet_tui::port::{PermissionAsk, UiEvent};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, oneshot};

/// One question still open.
pub struct Pending {
    /// The allow rules "allow always" writes: one per part of a command line.
    pub rules: Vec<String>,
    pub tool: String,
    /// The call, for a question handed on to the team's lead.
    pub input: serde_json::Value,
    pub tool_use_id: String,
    pub description: String,
    reply: oneshot::Sender<Approval>,
}

impl Pending {
    /// Answers the waiting call. The call may be gone already (cancelled): nothing to do then.
    pub fn reply(self, approval: Approval) {
        let _ = self.reply.send(approval);
    }
}

/// Who is asking, by agent id, as the forwarded events labelled them.
#[derive(Default)]
pub struct AgentLabels {
    map: Mutex<HashMap<String, AgentRef>>,
}

impl AgentLabels {
    /// Remembers the label an event carries, once per agent.
    pub fn note(&self, agent: &AgentRef) {
        if agent.agent_id == "main" {
            return;
        }
        let mut map = lock(&self.map);
        if !map.contains_key(&agent.agent_id) {
            map.insert(agent.agent_id.clone(), agent.clone());
        }
    }

    /// The agent `agent_id` as the UI knows it; a bare reference when no event named it yet.
    pub fn get(&self, agent_id: &str) -> AgentRef {
        if agent_id == "main" {
            return AgentRef::main();
        }
        lock(&self.map)
            .get(agent_id)
            .cloned()
            .unwrap_or_else(|| AgentRef {
                agent_id: agent_id.to_string(),
                parent_tool_use_id: None,
                subagent: None,
            })
    }
}

pub struct UiApprover {
    events: mpsc::Sender<UiEvent>,
    labels: Arc<AgentLabels>,
    next_id: AtomicU64,
    pending: Arc<Mutex<HashMap<u64, Pending>>>,
    /// A pane teammate's questions may be handed on to its lead.
    forwardable: std::sync::atomic::AtomicBool,
}

/// A lock that a panic elsewhere does not make unusable: each value is changed in one step.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl UiApprover {
    pub fn new(events: mpsc::Sender<UiEvent>, labels: Arc<AgentLabels>) -> Self {
        Self {
            events,
            labels,
            next_id: AtomicU64::new(1),
            pending: Arc::default(),
            forwardable: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Offers "ask the team lead" on every question from now on (a pane teammate).
    pub fn offer_lead(&self) {
        self.forwardable.store(true, Ordering::Relaxed);
    }

    /// The open question `id`, taken out so it is answered once.
    pub fn take(&self, id: u64) -> Option<Pending> {
        lock(&self.pending).remove(&id)
    }

    /// Refuses every open question (the session is ending).
    pub fn deny_all(&self) {
        let open: Vec<Pending> = lock(&self.pending).drain().map(|(_, p)| p).collect();
        for pending in open {
            pending.reply(Approval::deny());
        }
    }
}

/// Withdraws the question when the waiting call is dropped unanswered.
struct Withdraw {
    id: u64,
    pending: Arc<Mutex<HashMap<u64, Pending>>>,
    events: mpsc::Sender<UiEvent>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if lock(&self.pending).remove(&self.id).is_none() {
            return;
        }
        let event = UiEvent::PermissionWithdrawn { id: self.id };
        if let Err(mpsc::error::TrySendError::Full(event)) = self.events.try_send(event) {
            let events = self.events.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = events.send(event).await;
                });
            }
        }
    }
}

impl Approver for UiApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let rules = request.decision.suggested_rules();
        let ask = PermissionAsk {
            id,
            agent: self.labels.get(request.agent_id),
            tool: request.tool.to_string(),
            input: request.input.clone(),
            description: shown_description(&request),
            suggested_rule: (!rules.is_empty()).then(|| rules.join(", ")),
            forwardable: self.forwardable.load(Ordering::Relaxed),
            change: request.change.cloned(),
        };
        let (reply, answer) = oneshot::channel();
        lock(&self.pending).insert(
            id,
            Pending {
                rules,
                tool: request.tool.to_string(),
                input: request.input.clone(),
                tool_use_id: request.tool_use_id.to_string(),
                description: describe(&request),
                reply,
            },
        );
        let guard = Withdraw {
            id,
            pending: self.pending.clone(),
            events: self.events.clone(),
        };
        let tool = request.tool.to_string();
        Box::pin(async move {
            let _guard = guard;
            if self.events.send(UiEvent::Permission(ask)).await.is_err() {
                lock(&self.pending).remove(&id);
                return nobody_to_ask(&tool);
            }
            answer.await.unwrap_or_else(|_| nobody_to_ask(&tool))
        })
    }
}

/// The refusal when the UI is gone and nobody can answer.
fn nobody_to_ask(tool: &str) -> Approval {
    Approval::Deny {
        message: Some(format!(
            "This {tool} call was not run: the user closed the terminal UI, so nobody could \
             approve it."
        )),
    }
}

/// What the model reads when the person said no and why: their words, as an instruction.
pub fn feedback(tool: &str, text: &str) -> Approval {
    Approval::Deny {
        message: Some(format!(
            "The user doesn't want to proceed with this {tool} call, so it was not run. \
             The user said:\n{}\nFollow that instruction instead.",
            text.trim()
        )),
    }
}

/// The description above the call in the box: a file change the tool worked out is summed
/// up ("Edit: 2 lines added, 1 removed"), since the box shows its path and diff below it;
/// anything else as [`describe`] says it.
fn shown_description(request: &ApprovalRequest<'_>) -> String {
    match request.change {
        Some(change) => format!("{}: {}", request.tool, change.summary()),
        None => describe(request),
    }
}

/// The call in a person's words: "Bash command `rm -rf build`", "Write to /p/a.rs" — whole,
/// for a question handed on to the team's lead, who sees no box.
fn describe(request: &ApprovalRequest<'_>) -> String {
    let tool = request.tool;
    match &request.decision.access {
        Access::Command(command) => format!("{tool} command `{}`", command.trim()),
        Access::Write(path) => format!("{tool} to {}", path.display()),
        Access::Read(path) => format!("{tool} of {}", path.display()),
        Access::Other => match request.input.get("description").and_then(|d| d.as_str()) {
            Some(description) => format!("{tool}: {description}"),
            None => tool.to_string(),
        },
    }
}
