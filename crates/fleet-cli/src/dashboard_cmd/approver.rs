//! Permission questions of a session started with `--dashboard`, asked on the page too: each
//! "ask" is listed in the hub (`pending_permissions`) until someone answers it — on the page,
//! or through the approver the session already had (the terminal UI, a person at the
//! terminal, an SDK host), whichever answers first. A question whose call goes away
//! (cancelled) leaves the list with it.

use fleet_dashboard::api::{Decision as Answer, PermissionAnswer, PermissionRequest};
use fleet_dashboard::Hub;
use fleet_runtime::approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::Access;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// How long a question only the page can answer waits before it counts as a no.
const PAGE_ONLY_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The longest summary of a call the page shows.
const SUMMARY_LIMIT: usize = 2000;

struct Open {
    request: PermissionRequest,
    reply: oneshot::Sender<Approval>,
}

pub struct DashboardApprover {
    inner: Option<Arc<dyn Approver>>,
    hub: Hub,
    session_id: String,
    next_id: AtomicU64,
    open: Arc<Mutex<Vec<Open>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl DashboardApprover {
    /// Asks on the page of `hub`'s session `session_id`, and `inner` too when there is one.
    pub fn new(inner: Option<Arc<dyn Approver>>, hub: Hub, session_id: String) -> Self {
        Self {
            inner,
            hub,
            session_id,
            next_id: AtomicU64::new(1),
            open: Arc::default(),
        }
    }

    /// Answers question `id`; false when no such question waits.
    pub fn answer(&self, id: &str, answer: &PermissionAnswer) -> bool {
        let open = {
            let mut open = lock(&self.open);
            let Some(at) = open.iter().position(|o| o.request.id == id) else {
                return false;
            };
            open.remove(at)
        };
        publish(&self.hub, &self.session_id, &self.open);
        let approval = match answer.decision {
            Answer::Allow => Approval::allow(),
            Answer::Deny => Approval::Deny {
                message: answer
                    .message
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(|m| {
                        format!(
                            "The user doesn't want to proceed with this call, so it was not \
                             run. The user said (on the dashboard):\n{m}\nFollow that \
                             instruction instead."
                        )
                    }),
            },
        };
        // The call may be gone already (cancelled): nothing to do then.
        let _ = open.reply.send(approval);
        true
    }
}

/// Tells the hub which questions wait now.
fn publish(hub: &Hub, session_id: &str, open: &Mutex<Vec<Open>>) {
    let list = lock(open).iter().map(|o| o.request.clone()).collect();
    hub.set_pending_permissions(session_id, list);
}

/// Takes the question off the list when its call ends, answered or not.
struct Withdraw {
    id: String,
    hub: Hub,
    session_id: String,
    open: Arc<Mutex<Vec<Open>>>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let removed = {
            let mut open = lock(&self.open);
            let before = open.len();
            open.retain(|o| o.request.id != self.id);
            open.len() != before
        };
        if removed {
            publish(&self.hub, &self.session_id, &self.open);
        }
    }
}

impl Approver for DashboardApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let id = format!("q{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply, answer) = oneshot::channel();
        lock(&self.open).push(Open {
            request: PermissionRequest {
                id: id.clone(),
                agent_id: request.agent_id.to_string(),
                tool: request.tool.to_string(),
                summary: summary(&request),
            },
            reply,
        });
        publish(&self.hub, &self.session_id, &self.open);
        let guard = Withdraw {
            id,
            hub: self.hub.clone(),
            session_id: self.session_id.clone(),
            open: self.open.clone(),
        };
        let elsewhere = self.inner.as_ref().map(|inner| inner.approve(request));
        Box::pin(async move {
            let _guard = guard;
            match elsewhere {
                Some(elsewhere) => tokio::select! {
                    answered = answer => answered.unwrap_or_else(|_| Approval::deny()),
                    approval = elsewhere => approval,
                },
                // Only the page can answer (a `-p` run with no host): a bounded wait, so a
                // run nobody watches ends instead of hanging on its question.
                None => match tokio::time::timeout(PAGE_ONLY_WAIT, answer).await {
                    Ok(answered) => answered.unwrap_or_else(|_| Approval::deny()),
                    Err(_) => Approval::Deny {
                        message: Some(format!(
                            "Nobody answered this permission question on the dashboard within {} \
                             minutes, so the call was not run. Do not retry it; finish \
                             without it or say what you need.",
                            PAGE_ONLY_WAIT.as_secs() / 60
                        )),
                    },
                },
            }
        })
    }
}

/// The call in a person's words, whole enough to decide on: the command, the path and the
/// change, or the input.
fn summary(request: &ApprovalRequest<'_>) -> String {
    let mut text = match &request.decision.access {
        Access::Command(command) => command.trim().to_string(),
        Access::Write(path) | Access::Read(path) => path.display().to_string(),
        Access::Other => serde_json::to_string_pretty(request.input).unwrap_or_default(),
    };
    if let Some(change) = request.change {
        text.push_str(&format!("\n{}", change.summary()));
    }
    if text.len() > SUMMARY_LIMIT {
        let mut cut = SUMMARY_LIMIT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}
