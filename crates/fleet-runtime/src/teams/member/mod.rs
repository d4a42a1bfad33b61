//! A session that is a pane teammate: its own `fleet` process, in a terminal pane, a member
//! of a team another session leads.
//!
//! Its prompts are its mail: a poller reads its durable inbox (woken by the mailbox, never by
//! a timer) and hands each batch to the session as one turn, acknowledged once the turn is
//! committed. Entries that claim to come from the lead must carry the lead's signature (or,
//! from `user`, the user's own: `fleet team send`); one
//! that does not is refused — consumed, never shown to the model, and the person in the pane
//! is told. After each turn the lead gets an idle notification. The session ends when the
//! teammate agrees to shut down, or when the lead's process is gone.
//!
//! - `mail`: the inbox read as prompts, each entry screened first.
//! - `outbox`: SendMessage from the teammate's agent, and questions handed to the lead.

mod mail;
mod outbox;

use super::pane::TEAMMATE_ENV_FILE;
use super::roster::{Team, Teams};
use super::signing::{LeadVerifier, UserMailKey, UserVerifier};
use super::{clock, SecretEnvError, TeamSetupError, LEAD_NAME};
use crate::backends::pidwatch;
use crate::subagent::Spawner;
use fleet_protocol::team::frames::{Frame, IdleNotification, PermissionResponse};
use fleet_protocol::{BackendType, TeamEvent};
use fleet_store::team::MemberStatus;
use fleet_store::Mailbox;
use serde_json::json;
use std::collections::HashMap;
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
    /// The public half of the user's team-mail key (`fleet team send`), read when the
    /// teammate starts; why it cannot be used, when it cannot.
    user_verifier: Result<UserVerifier, String>,
    /// Its pane (`$TMUX_PANE`, …), for the shutdown frame.
    pane_id: String,
    backend: BackendType,
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

impl Teams {
    /// Makes this session the teammate `identity` of a team another session leads: opens the
    /// team's files, starts reading its inbox (into `spawner`'s team inbox) and watching the
    /// lead. `exit` is the flag the main agent's loop ends on (its `stop.end_after_tools`).
    pub fn join_team(
        &self,
        spawner: &Spawner,
        identity: Identity,
        exit: Arc<AtomicBool>,
    ) -> Result<Arc<Membership>, TeamSetupError> {
        let teams = self;
        let verifier =
            LeadVerifier::parse(&identity.lead_verify_key).map_err(TeamSetupError::LeadKey)?;
        let team = teams.join(&identity.team)?;
        let config = team.config()?;
        if !config.members.iter().any(|m| m.name == identity.name) {
            return Err(TeamSetupError::NoSuchMember {
                team: identity.team.clone(),
                name: identity.name.clone(),
            });
        }
        let mailbox = team.mailbox(&identity.name)?;
        let user_verifier = UserMailKey::load_or_create(teams.settings.home.root())
            .map(|key| key.verifier())
            .map_err(|err| {
                tracing::warn!("mail from `fleet team send` will be refused: {err}");
                err.to_string()
            });
        let (pane_id, backend) = match std::env::var("TMUX_PANE") {
            Ok(pane) if !pane.is_empty() => (pane, BackendType::Tmux),
            _ => match std::env::var("ITERM_SESSION_ID") {
                Ok(id) if !id.is_empty() => (id, BackendType::ITerm2),
                _ => ("unknown".to_string(), BackendType::Tmux),
            },
        };
        let member = Arc::new(Membership {
            identity,
            team: team.clone(),
            mailbox,
            verifier,
            user_verifier,
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
        teams.set_membership(member.clone())?;
        let pid = std::process::id();
        team.update_member(&member.identity.name, |m| {
            m.status = MemberStatus::Active;
            m.extra.insert("isActive".into(), json!(true));
            m.extra.insert("pid".into(), json!(pid));
        });
        tokio::spawn(mail::read_mail(
            member.clone(),
            spawner.team_inbox().clone(),
        ));
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
        if self.backend != BackendType::Tmux || self.pane_id == "unknown" {
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

/// Reads the secret variables a lead handed over in `FLEET_TEAMMATE_ENV_FILE` and removes
/// the file. Called first thing in `main`, before any thread exists, since it sets this
/// process's environment.
pub fn take_secret_env() -> Result<Vec<(String, String)>, SecretEnvError> {
    let Some(path) = std::env::var_os(TEAMMATE_ENV_FILE) else {
        return Ok(Vec::new());
    };
    let path = std::path::PathBuf::from(path);
    let text = std::fs::read_to_string(&path).map_err(|source| SecretEnvError::Read {
        path: path.clone(),
        source,
    })?;
    let _ = std::fs::remove_file(&path);
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).map_err(|source| SecretEnvError::NotJson {
            path: path.clone(),
            source,
        })?;
    Ok(map
        .into_iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_string())))
        .collect())
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
