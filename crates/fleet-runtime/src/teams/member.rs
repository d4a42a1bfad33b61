//! A session that is a pane teammate: its own `fleet` process, in a terminal pane, a member
//! of a team another session leads.
//!
//! Its prompts are its mail: a poller reads its durable inbox (woken by the mailbox, never by
//! a timer) and hands each batch to the session as one turn, acknowledged once the turn is
//! committed. Entries that claim to come from the lead must carry the lead's signature; one
//! that does not is refused — consumed, never shown to the model, and the person in the pane
//! is told. After each turn the lead gets an idle notification. The session ends when the
//! teammate agrees to shut down, or when the lead's process is gone.

use super::pane::TEAMMATE_ENV_FILE;
use super::roster::Team;
use super::send::{self, Sender};
use super::signing::{LeadVerifier, Verdict};
use super::{clock, LEAD_NAME};
use crate::backends::pidwatch;
use crate::subagent::{MessageBody, SendMessageInput, Spawner, Structured};
use fleet_protocol::team::frames::{
    permission_request_id, Frame, IdleNotification, PermissionRequest, PermissionResponse,
    ShutdownApproved, ShutdownRejected,
};
use fleet_protocol::team::render;
use fleet_protocol::{MailEntry, Message, TeamEvent};
use fleet_store::team::MemberStatus;
use fleet_store::Mailbox;
use fleet_tools::{ToolError, ToolOutput};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// How much of a turn's last text goes into the idle notification.
const IDLE_RESULT_CHARS: usize = 4000;

/// The most messages one turn is made of.
const MAIL_BATCH: usize = 100;

/// Who this process is in the team, from its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `name@team`.
    pub agent_id: String,
    pub name: String,
    pub team: String,
    pub color: String,
    /// The agent definition it runs.
    pub agent_type: String,
    /// The lead's session id.
    pub parent_session_id: String,
    /// `--lead-verify-key`.
    pub lead_verify_key: String,
}

/// This process's membership of its team.
#[derive(Debug)]
pub struct Membership {
    pub identity: Identity,
    team: Arc<Team>,
    mailbox: Mailbox,
    verifier: LeadVerifier,
    /// Its pane (`$TMUX_PANE`, …), for the shutdown frame.
    pane_id: String,
    backend: String,
    /// Set when it agreed to shut down: the turn ends after that call, then the session.
    exit: Arc<AtomicBool>,
    shutdown_request: Mutex<Option<String>>,
    peer_summary: Mutex<Option<String>>,
    /// Permission questions handed to the lead, by request id.
    asked: Mutex<HashMap<String, oneshot::Sender<PermissionResponse>>>,
    /// Cancelled when the session should end; the reason is in `why`.
    gone: CancellationToken,
    why: Mutex<Option<String>>,
    lead_gone: AtomicBool,
}

impl Spawner {
    /// Makes this session the teammate `identity` of a team another session leads: opens the
    /// team's files, starts reading its inbox and watching the lead. `exit` is the flag the
    /// main agent's loop ends on (its `end_after_tools`).
    pub fn join_team(
        self: &Arc<Self>,
        identity: Identity,
        exit: Arc<AtomicBool>,
    ) -> Result<Arc<Membership>, String> {
        let teams = self
            .teams()
            .ok_or("teams are off in this session (FLEET_AGENT_TEAMS=0)")?;
        let verifier = LeadVerifier::parse(&identity.lead_verify_key).map_err(|e| e.to_string())?;
        let team = teams.join(&identity.team)?;
        let config = team.config()?;
        if !config.members.iter().any(|m| m.name == identity.name) {
            return Err(format!(
                "team {:?} has no member named {:?}: a pane teammate is started by its lead",
                identity.team, identity.name
            ));
        }
        let mailbox = team.mailbox(&identity.name)?;
        let (pane_id, backend) = match std::env::var("TMUX_PANE") {
            Ok(pane) if !pane.is_empty() => (pane, "tmux".to_string()),
            _ => match std::env::var("ITERM_SESSION_ID") {
                Ok(id) if !id.is_empty() => (id, "iterm2".to_string()),
                _ => ("unknown".to_string(), "tmux".to_string()),
            },
        };
        let member = Arc::new(Membership {
            identity,
            team: team.clone(),
            mailbox,
            verifier,
            pane_id,
            backend,
            exit,
            shutdown_request: Mutex::new(None),
            peer_summary: Mutex::new(None),
            asked: Mutex::default(),
            gone: CancellationToken::new(),
            why: Mutex::new(None),
            lead_gone: AtomicBool::new(false),
        });
        self.set_membership(member.clone())?;
        let pid = std::process::id();
        team.update_member(&member.identity.name, |m| {
            m.status = MemberStatus::Active;
            m.extra.insert("isActive".into(), json!(true));
            m.extra.insert("pid".into(), json!(pid));
        });
        tokio::spawn(read_mail(member.clone(), self.team_inbox().clone()));
        match lead_pid(&config.extra) {
            Some(pid) => {
                tokio::spawn(watch_lead(member.clone(), pid));
            }
            None => tracing::warn!("the team file does not say which process leads it"),
        }
        Ok(member)
    }
}

impl Membership {
    pub fn name(&self) -> &str {
        &self.identity.name
    }

    /// Resolves once the session should end, with the reason.
    pub async fn gone(&self) -> String {
        self.gone.cancelled().await;
        lock(&self.why).clone().unwrap_or_default()
    }

    /// Whether it agreed to shut down.
    pub fn exiting(&self) -> bool {
        self.exit.load(Ordering::Acquire)
    }

    /// Whether the session ends because the lead's process is gone.
    pub fn lead_gone(&self) -> bool {
        self.lead_gone.load(Ordering::Acquire)
    }

    /// Closes this teammate's own tmux pane, the last thing it does when its lead is gone:
    /// with no lead left to close it, the pane must not outlive the process (tmux keeps a
    /// pane whose process it has not reaped yet).
    pub fn close_own_pane(&self) {
        if self.backend != "tmux" || self.pane_id == "unknown" {
            return;
        }
        use std::os::unix::process::CommandExt;
        // Its own process group: the hangup this process's exit sends its terminal's group
        // must not stop the command on its way.
        let spawned = std::process::Command::new("tmux")
            .args(["kill-pane", "-t", &self.pane_id])
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Err(err) = spawned {
            tracing::warn!("cannot close pane {}: {err}", self.pane_id);
        }
    }

    fn leave(&self, why: String) {
        lock(&self.why).get_or_insert(why);
        self.gone.cancel();
    }

    /// A turn begins: the team file says it is working.
    pub(crate) fn turn_started(&self) {
        *lock(&self.peer_summary) = None;
        self.team.update_member(&self.identity.name, |m| {
            m.status = MemberStatus::Active;
            m.extra.insert("isActive".into(), json!(true));
        });
    }

    /// A turn is over: the lead is told, with the turn's last text; after an agreed shutdown
    /// the session ends instead.
    pub(crate) async fn turn_ended(&self, last_text: &str) {
        if self.exiting() {
            self.leave(format!(
                "{} shut down at the lead's request.",
                self.identity.name
            ));
            return;
        }
        let text: String = last_text.chars().take(IDLE_RESULT_CHARS).collect();
        let summary = lock(&self.peer_summary).clone();
        let frame = Frame::IdleNotification(IdleNotification {
            from: self.identity.name.clone(),
            timestamp: clock::now_iso(),
            idle_reason: Some("available".into()),
            summary: summary.clone(),
            result: (!text.is_empty()).then_some(text),
            ..IdleNotification::default()
        });
        // The file first: once the lead reads the notification it may stop this teammate
        // and mark it stopped, which a later write here must not undo.
        self.team.update_member(&self.identity.name, |m| {
            m.status = MemberStatus::Idle;
            m.extra.insert("isActive".into(), json!(false));
        });
        let entry = self.entry(frame.to_text(), None);
        if let Err(err) = self.team.post(LEAD_NAME, &entry) {
            tracing::warn!("idle notification not delivered: {err}");
        }
        self.team
            .emit(TeamEvent::TeammateIdle {
                team: self.team.name.clone(),
                name: self.identity.name.clone(),
                agent_id: self.identity.agent_id.clone(),
                summary,
            })
            .await;
    }

    /// Hands a permission question to the lead (and its person); the answer comes back by
    /// mail, signed.
    pub fn ask_lead(
        &self,
        tool: &str,
        input: &serde_json::Value,
        tool_use_id: &str,
        description: &str,
        suggested_rule: Option<String>,
    ) -> Result<oneshot::Receiver<PermissionResponse>, String> {
        let request_id = permission_request_id(clock::now_ms(), &self.identity.name);
        let request_id = format!("{request_id}-{}", &clock::new_msg_id()[..8]);
        let frame = Frame::PermissionRequest(PermissionRequest {
            request_id: request_id.clone(),
            from: self.identity.name.clone(),
            tool_name: tool.to_string(),
            tool_use_id: tool_use_id.to_string(),
            description: description.to_string(),
            input: input.clone(),
            suggested_rule,
            timestamp: clock::now_iso(),
        });
        let (tx, rx) = oneshot::channel();
        lock(&self.asked).insert(request_id.clone(), tx);
        if let Err(err) = self
            .team
            .post(LEAD_NAME, &self.entry(frame.to_text(), None))
        {
            lock(&self.asked).remove(&request_id);
            return Err(err);
        }
        Ok(rx)
    }

    fn sender(&self) -> Sender {
        Sender {
            name: self.identity.name.clone(),
            color: Some(self.identity.color.clone()),
            mate: None,
        }
    }

    fn entry(&self, text: String, summary: Option<String>) -> MailEntry {
        send::entry(&self.sender(), text, summary)
    }

    /// SendMessage from this teammate's main agent; `Ok(None)` when `to` is nobody in the
    /// team (the caller then says so).
    pub(crate) fn send(&self, input: &SendMessageInput) -> Result<Option<ToolOutput>, ToolError> {
        let to = input.to.trim();
        let me = &self.identity.name;
        if to == "*" {
            return Err(ToolError::failed(
                "broadcast (to: \"*\") is not available to a teammate — send a message per \
                 recipient",
            ));
        }
        let lead_id = self.team.lead_agent_id();
        if to == LEAD_NAME || to == lead_id || to == "main" {
            return self.to_lead(input).map(Some);
        }
        let to = to
            .strip_suffix(&format!("@{}", self.team.name))
            .unwrap_or(to);
        if to == me.as_str() {
            return Err(ToolError::failed("You cannot send a message to yourself."));
        }
        let config = self.team.config().map_err(ToolError::Failed)?;
        let Some(peer) = config.members.iter().find(|m| m.name == to) else {
            return Ok(None);
        };
        if peer.status == MemberStatus::Stopped {
            return Ok(Some(not_reachable(to)));
        }
        let text = send::plain_text(input)?.to_string();
        let summary = send::summary_of(input, &text);
        let mail = self.entry(text.clone(), summary.clone());
        send::deliver(&self.team, to, &mail)?;
        *lock(&self.peer_summary) = summary.as_ref().map(|s| format!("[to {to}] {s}"));
        let sender = self.sender();
        Ok(Some(send::sent(
            format!("Message sent to {to}'s inbox"),
            &mail.msg_id,
            send::routing(&sender, to, peer.color.as_deref(), &summary, &text),
        )))
    }

    fn to_lead(&self, input: &SendMessageInput) -> Result<ToolOutput, ToolError> {
        let sender = self.sender();
        match &input.message {
            MessageBody::Text(_) => {
                let text = send::plain_text(input)?.to_string();
                let summary = send::summary_of(input, &text);
                let mail = self.entry(text.clone(), summary.clone());
                send::deliver(&self.team, LEAD_NAME, &mail)?;
                Ok(send::sent(
                    format!("Message sent to {LEAD_NAME}'s inbox"),
                    &mail.msg_id,
                    send::routing(&sender, LEAD_NAME, Some("red"), &summary, &text),
                ))
            }
            MessageBody::Structured(Structured::ShutdownResponse {
                request_id,
                approve,
                reason,
            }) => {
                let shown = lock(&self.shutdown_request).clone();
                let request_id = request_id.clone().or(shown).ok_or_else(|| {
                    ToolError::failed(
                        "You have not been asked to shut down: there is no shutdown request to \
                         answer.",
                    )
                })?;
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let me = &self.identity.name;
                let (frame, message) = if *approve {
                    if reason.is_some() {
                        return Err(ToolError::failed(
                            "An approval carries no `reason`; leave it out, or set `approve: \
                             false` to decline with your reason.",
                        ));
                    }
                    let frame = Frame::ShutdownApproved(ShutdownApproved {
                        request_id: request_id.clone(),
                        from: me.clone(),
                        timestamp: clock::now_iso(),
                        pane_id: self.pane_id.clone(),
                        backend_type: self.backend.clone(),
                    });
                    let message = format!(
                        "Shutdown approved. Sent confirmation to {LEAD_NAME}. Agent {me} is now \
                         exiting."
                    );
                    (frame, message)
                } else {
                    let reason = reason.ok_or_else(|| {
                        ToolError::failed(
                            "Declining a shutdown needs a `reason`: say why you keep working.",
                        )
                    })?;
                    let frame = Frame::ShutdownRejected(ShutdownRejected {
                        request_id: request_id.clone(),
                        from: me.clone(),
                        reason: reason.to_string(),
                        timestamp: clock::now_iso(),
                    });
                    (
                        frame,
                        format!("Shutdown rejected. Reason: {reason:?}. Continuing to work."),
                    )
                };
                send::deliver(&self.team, LEAD_NAME, &self.entry(frame.to_text(), None))?;
                if *approve {
                    self.exit.store(true, Ordering::Release);
                }
                let value = json!({"success": true, "message": message, "request_id": request_id});
                Ok(ToolOutput::text(value.to_string()).with_structured(value))
            }
            MessageBody::Structured(other) => Err(ToolError::Failed(format!(
                "A teammate in its own pane does not send a {}.",
                other.type_name()
            ))),
        }
    }
}

fn not_reachable(to: &str) -> ToolOutput {
    let value = json!({
        "success": false,
        "message": format!("No agent named '{to}' is reachable.\nUse ListAgents to see everyone you can message."),
    });
    ToolOutput::text(value.to_string()).with_structured(value)
}

/// The lead's pid from the team file (`leadProcess.pid`, Claude Code's field).
fn lead_pid(extra: &serde_json::Map<String, serde_json::Value>) -> Option<u32> {
    extra
        .get("leadProcess")?
        .get("pid")?
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok())
}

/// Ends the session when the lead's process is gone: a teammate nobody leads would wait
/// for mail forever.
async fn watch_lead(member: Arc<Membership>, pid: u32) {
    tokio::select! {
        _ = pidwatch::exited(pid) => {
            member.lead_gone.store(true, Ordering::Release);
            member.leave(format!(
                "The team lead (pid {pid}) is gone, so {} stops too.",
                member.identity.name
            ));
        }
        _ = member.gone.cancelled() => {}
    }
}

/// Reads the inbox for as long as the membership lasts.
async fn read_mail(member: Arc<Membership>, inbox: Arc<crate::inbox::Inbox>) {
    // Mail handed to the session but not yet committed: not handed over twice.
    let handed: Arc<Mutex<HashSet<String>>> = Arc::default();
    loop {
        let unread = match member.mailbox.unread_at_most(MAIL_BATCH) {
            Ok(unread) => unread,
            Err(err) => {
                tracing::error!("cannot read the inbox: {err}");
                member.leave(format!("Its inbox cannot be read: {err}"));
                return;
            }
        };
        for warning in &unread.warnings {
            tracing::warn!("inbox: {warning}");
        }
        let upto = unread.upto;
        let mut deliver = Vec::new();
        for entry in unread.entries {
            if lock(&handed).contains(&entry.msg_id) {
                continue;
            }
            if let Some(entry) = member.screen(entry).await {
                deliver.push(entry);
            }
        }
        if deliver.is_empty() {
            if lock(&handed).is_empty() {
                // Refused, answered or stale entries only: consumed now.
                if let Err(err) = member.mailbox.ack(&upto) {
                    tracing::warn!("cannot mark mail read: {err}");
                }
            }
        } else {
            let ids: Vec<String> = deliver.iter().map(|e| e.msg_id.clone()).collect();
            lock(&handed).extend(ids.iter().cloned());
            let mailbox = member.mailbox.clone();
            let handed = handed.clone();
            let ack_upto = upto;
            inbox.push_mail(
                Message::user_text(render::for_teammate(&deliver)),
                ids.clone(),
                Box::new(move || {
                    if let Err(err) = mailbox.ack(&ack_upto) {
                        tracing::warn!("cannot mark mail read: {err}");
                    }
                    let mut handed = lock(&handed);
                    for id in ids {
                        handed.remove(&id);
                    }
                }),
            );
        }
        tokio::select! {
            _ = member.mailbox.wait_past(&upto) => {}
            _ = member.gone.cancelled() => return,
        }
    }
}

impl Membership {
    /// What to do with one entry: `Some` to show the model; `None` when refused (not the
    /// lead's, though it says so) or handled here (an answer to a permission question).
    async fn screen(&self, entry: MailEntry) -> Option<MailEntry> {
        let verdict = self.verifier.check(&entry);
        let refusal = match verdict {
            Verdict::Unsigned => Some("it is not signed"),
            Verdict::BadSignature => Some("its signature does not match the lead's key"),
            // Only the lead speaks as the lead, whatever the spelling, and only the lead
            // sends what changes a teammate's life or permissions.
            Verdict::Peer if looks_like_lead(&entry.from) => Some("it is not signed"),
            Verdict::Peer if lead_only(&entry.text) => {
                Some("only the lead sends that, and the lead signs what it sends")
            }
            _ => None,
        };
        if let Some(why) = refusal {
            tracing::warn!(
                from = %entry.from, msg_id = %entry.msg_id,
                "refused a message that claims to come from {}: {why}", entry.from
            );
            self.team
                .emit(TeamEvent::MailRefused {
                    team: self.team.name.clone(),
                    to: self.identity.name.clone(),
                    from: entry.from.clone(),
                    reason: format!(
                        "A message claiming to come from {:?} was refused: {why}. It was not \
                         shown to the agent.",
                        entry.from
                    ),
                })
                .await;
            return None;
        }
        match Frame::parse(&entry.text) {
            Some(Frame::PermissionResponse(answer)) => {
                match lock(&self.asked).remove(&answer.request_id) {
                    Some(waiter) => {
                        let _ = waiter.send(answer);
                    }
                    None => tracing::info!("an answer to no question: {}", answer.request_id),
                }
                None
            }
            Some(Frame::ShutdownRequest(request)) => {
                *lock(&self.shutdown_request) = Some(request.request_id);
                Some(entry)
            }
            _ => Some(entry),
        }
    }
}

/// Reads the secret variables a lead handed over in `FLEET_TEAMMATE_ENV_FILE` and removes
/// the file. Called first thing in `main`, before any thread exists, since it sets this
/// process's environment.
pub fn take_secret_env() -> Result<Vec<(String, String)>, String> {
    let Some(path) = std::env::var_os(TEAMMATE_ENV_FILE) else {
        return Ok(Vec::new());
    };
    let path = std::path::PathBuf::from(path);
    let text = std::fs::read_to_string(&path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .map_err(|err| format!("{} is not a JSON object of strings: {err}", path.display()))?;
    Ok(map
        .into_iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_string())))
        .collect())
}

/// A sender name that reads as the lead's (`Team-Lead`, `SYSTEM`, `main`, …).
fn looks_like_lead(from: &str) -> bool {
    super::signing::LEAD_SENDERS
        .iter()
        .chain(std::iter::once(&"main"))
        .any(|name| from.trim().eq_ignore_ascii_case(name))
}

/// Frames only the lead sends.
fn lead_only(text: &str) -> bool {
    matches!(
        Frame::parse(text),
        Some(
            Frame::ShutdownRequest(_)
                | Frame::PlanApprovalResponse(_)
                | Frame::PermissionResponse(_)
        )
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_spelled_otherwise_is_still_the_lead() {
        for name in [
            "team-lead",
            "Team-Lead",
            "SYSTEM",
            "user",
            "Main",
            " team-lead ",
        ] {
            assert!(looks_like_lead(name), "{name}");
        }
        for name in ["alpha", "team-leader", "lead"] {
            assert!(!looks_like_lead(name), "{name}");
        }
    }

    #[test]
    fn only_the_lead_sends_what_changes_a_teammates_life() {
        let shutdown = r#"{"type":"shutdown_request","requestId":"shutdown-1@alpha","from":"team-lead","timestamp":"t"}"#;
        let answer =
            r#"{"type":"permission_response","requestId":"p-1","approved":true,"timestamp":"t"}"#;
        assert!(lead_only(shutdown));
        assert!(lead_only(answer));
        assert!(!lead_only("please shut down"));
        let idle = r#"{"type":"idle_notification","from":"beta","timestamp":"t"}"#;
        assert!(!lead_only(idle));
    }
}
