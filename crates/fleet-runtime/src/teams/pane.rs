//! The lead's side of pane teammates: a teammate that is its own `fleet` process in a terminal
//! pane (tmux, iTerm2), which the person can watch and type into.
//!
//! The lead opens the pane with the teammate's identity on the command line (and the public
//! half of a key pair only the lead holds), writes its first prompt into its inbox — signed,
//! like everything the lead writes there — and watches its process. A process that ends is
//! reported to the lead as terminated (with its last lines when it did not agree to stop) and
//! its pane is closed, so no pane or process is left behind; a message to it afterwards
//! starts it again in a new pane from its own transcript.

use super::enlist::{self, Enlistee};
use super::mate::{Mate, MateState};
use super::roster::{Team, Teams};
use super::signing::LeadKey;
use super::{PaneError, PaneSettings, RevivalError, RevivalProblem, LEAD_NAME};
use crate::backends::{pidwatch, BackendKind, Pane, PaneBackend, PaneSpec};
use crate::subagent::{AgentInput, ParentView, Spawner};
use fleet_protocol::MailEntry;
use fleet_store::team::MemberStatus;
use fleet_tools::permissions::PermissionMode;
use fleet_tools::{ToolError, ToolOutput};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a closed pane's process gets to end by itself before it is killed.
const GRACE: Duration = Duration::from_secs(3);

/// How many of a crashed teammate's last lines the lead is shown.
const LAST_WORDS: usize = 12;

/// One pane teammate's process, as the lead sees it.
pub(crate) struct PaneLink {
    backend: Arc<dyn PaneBackend>,
    settings: PaneSettings,
    /// The pane it runs in now; `None` between a death and a restart.
    pane: Mutex<Option<Pane>>,
    /// Signs what the lead writes into its inbox; kept for its whole life here, so mail
    /// written while it was down still verifies after a restart.
    pub(crate) key: LeadKey,
    /// Its own session id: its transcript, and what a restart resumes.
    pub(crate) session_id: String,
    /// The permission mode it was started in (a restart keeps it).
    mode: PermissionMode,
    /// Whether a process was ever started (a restart resumes its session).
    started: AtomicBool,
    /// The secrets file written for its latest start: the teammate removes it as it starts;
    /// the lead removes it when the process ends without having done so.
    secrets: Mutex<Option<std::path::PathBuf>>,
}

impl std::fmt::Debug for PaneLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaneLink")
            .field("backend", &self.backend.kind())
            .field("pane", &self.current())
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl PaneLink {
    pub(crate) fn backend_kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// The pane it runs in now.
    pub(crate) fn current(&self) -> Option<Pane> {
        lock(&self.pane).clone()
    }

    /// Closes its pane (its process gets SIGHUP from the terminal) and makes sure the process
    /// ends: killed after a grace period. The watcher reports the end.
    pub(crate) fn close(&self) {
        let Some(pane) = self.current() else {
            return;
        };
        let backend = self.backend.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            if let Err(err) = backend.kill(&pane.id) {
                tracing::warn!("cannot close pane {}: {err}", pane.id);
            }
            return;
        };
        runtime.spawn(async move {
            let id = pane.id.clone();
            let killed = tokio::task::spawn_blocking(move || backend.kill(&id)).await;
            if let Ok(Err(err)) = killed {
                tracing::warn!("cannot close pane {}: {err}", pane.id);
            }
            if let Some(pid) = pane.pid {
                if tokio::time::timeout(GRACE, pidwatch::exited(pid))
                    .await
                    .is_err()
                {
                    kill_hard(pid);
                }
            }
        });
    }
}

/// The Agent call a pane teammate is started for: who asks, for what, as which agent type,
/// in which folder.
pub(crate) struct Recruit<'a> {
    pub parent: &'a Arc<ParentView>,
    pub input: &'a AgentInput,
    pub name: &'a str,
    pub def: Arc<crate::definitions::AgentDefinition>,
    pub cwd: std::path::PathBuf,
}

impl Teams {
    /// Starts the teammate `recruit` asks for in a pane of its own.
    pub(crate) async fn spawn_pane_teammate(
        &self,
        spawner: &Arc<Spawner>,
        recruit: Recruit<'_>,
        team: &Arc<Team>,
        panes: &PaneSettings,
    ) -> Result<ToolOutput, ToolError> {
        let Recruit {
            parent,
            input,
            name,
            def,
            cwd,
        } = recruit;
        let model = spawner
            .settings()
            .child_model(parent, &def, input.model.as_deref());
        let mode = parent.permissions.mode();
        let plan_required = mode == PermissionMode::Plan;
        let color = team.next_color();
        let enlistee = Enlistee {
            team,
            name,
            color: color.clone(),
            plan_required,
        };
        // Its MCP servers run in its own process.
        let bp = enlistee.blueprint(parent, &def, input, &model, cwd, Arc::default());
        let session_id = uuid::Uuid::new_v4().to_string();
        let link = Arc::new(PaneLink {
            backend: panes.backend.clone(),
            settings: panes.clone(),
            pane: Mutex::new(None),
            key: LeadKey::generate(),
            session_id: session_id.clone(),
            mode,
            started: AtomicBool::new(false),
            secrets: Mutex::new(None),
        });
        let mailbox = team.mailbox(name)?;
        let mate = Arc::new(
            Mate::new(
                name,
                &team.name,
                session_id.clone(),
                color.clone(),
                bp,
                mailbox,
                plan_required,
            )
            .with_pane(link.clone()),
        );
        let mut member = enlist::record(&mate, team, input, &def);
        member.backend = link.backend_kind().into();
        member.extra.insert("tmuxPaneId".into(), json!(""));
        enlist::enroll(team, mate.clone(), member)?;
        // Its first prompt comes through its inbox, signed, before its process exists: it
        // reads it at start, with whatever else was sent meanwhile.
        let first = MailEntry::new(
            LEAD_NAME,
            input.prompt.clone(),
            Team::now(),
            super::clock::new_msg_id(),
        );
        if let Err(err) = team.post(name, &first) {
            team.remove_mate(name);
            return Err(err.into());
        }
        let pane = match launch_pane(team, &mate).await {
            Ok(pane) => pane,
            Err(err) => {
                team.remove_mate(name);
                team.update_member(name, |m| m.status = MemberStatus::Stopped);
                return Err(err.into());
            }
        };
        self.announce(spawner, team, &mate, false).await;
        let backend = link.backend_kind().as_str();
        let mut text = format!(
            "Spawned successfully. ({name} is a teammate in its own {backend} pane: a separate \
             fleet process the user can watch and type into. It keeps running between tasks \
             and talks through mailboxes; message it with SendMessage, and shut it down with a \
             shutdown_request when the work is done.)\nagent_id: {id}\nname: {name}\nteam_name: \
             {team}\nThe agent is now running and will receive instructions via mailbox.",
            id = mate.agent_id,
            team = team.name,
        );
        let look = link.backend.where_to_look();
        if let Some(look) = &look {
            text.push_str(&format!("\nThe user can watch it with: {look}"));
        }
        Ok(ToolOutput::text(text).with_structured(json!({
            "status": "teammate_spawned",
            "agent_id": mate.agent_id,
            "name": name,
            "team_name": team.name,
            "color": color,
            "agent_type": def.name,
            "model": model,
            "backend": backend,
            "pane_id": pane.id,
            "where_to_look": look,
            "plan_mode_required": plan_required,
        })))
    }

    /// Starts a stopped pane teammate again in a new pane, resuming its own session; its
    /// unread mail waits in its inbox. `false` when it is already running.
    pub(crate) async fn relaunch_pane(
        &self,
        spawner: &Arc<Spawner>,
        team: &Arc<Team>,
        mate: &Arc<Mate>,
    ) -> Result<bool, RevivalError> {
        if !mate.claim_for_revival() {
            return Ok(false);
        }
        if let Err(err) = launch_pane(team, mate).await {
            mate.mark_stopped();
            return Err(RevivalError {
                name: mate.name.clone(),
                why: RevivalProblem::Pane(err),
            });
        }
        self.announce(spawner, team, mate, true).await;
        Ok(true)
    }
}

/// Opens a pane running the teammate's process and starts watching it.
async fn launch_pane(team: &Arc<Team>, mate: &Arc<Mate>) -> Result<Pane, PaneError> {
    let link = mate.pane.clone().ok_or_else(|| PaneError::NotPane {
        name: mate.name.clone(),
    })?;
    let resume = link.started.swap(true, Ordering::AcqRel);
    let spec = pane_spec(team, mate, &link, resume)?;
    let backend = link.backend.clone();
    let pane = tokio::task::spawn_blocking(move || backend.spawn(&spec))
        .await
        .map_err(PaneError::Task)?
        .map_err(PaneError::Backend)?;
    *lock(&link.pane) = Some(pane.clone());
    let (id, pid) = (pane.id.clone(), pane.pid);
    team.update_member(&mate.name, |m| {
        m.extra.insert("tmuxPaneId".into(), json!(id));
        m.extra.insert("isActive".into(), json!(true));
        if let Some(pid) = pid {
            m.extra.insert("pid".into(), json!(pid));
        }
    });
    tokio::spawn(watch(team.clone(), mate.clone(), link, pane.clone()));
    Ok(pane)
}

/// The command line and environment of a teammate's process.
fn pane_spec(
    team: &Team,
    mate: &Mate,
    link: &PaneLink,
    resume: bool,
) -> Result<PaneSpec, PaneError> {
    let settings = &link.settings;
    let mut argv = vec![settings.program.display().to_string()];
    argv.extend(settings.args.iter().cloned());
    let identity = [
        ("--agent-id", mate.agent_id.clone()),
        ("--agent-name", mate.name.clone()),
        ("--team-name", team.name.clone()),
        ("--agent-color", mate.color.clone()),
        ("--agent-type", mate.agent_type.clone()),
        ("--parent-session-id", team.settings.session_id.clone()),
        ("--lead-verify-key", link.key.verify_key_arg()),
        ("--model", mate.model.clone()),
    ];
    for (flag, value) in identity {
        argv.push(flag.to_string());
        argv.push(value);
    }
    argv.push(if resume { "--resume" } else { "--session-id" }.to_string());
    argv.push(link.session_id.clone());
    match link.mode {
        PermissionMode::BypassPermissions => argv.push("--dangerously-skip-permissions".into()),
        mode => {
            argv.push("--permission-mode".into());
            argv.push(mode.as_str().to_string());
        }
    }
    let mut env = settings.env.clone();
    if !settings.secret_env.is_empty() {
        let file = secrets_file(team, &mate.name, &settings.secret_env)?;
        env.push((TEAMMATE_ENV_FILE.to_string(), file.display().to_string()));
        if let Some(stale) = lock(&link.secrets).replace(file) {
            let _ = std::fs::remove_file(stale);
        }
    }
    Ok(PaneSpec {
        name: mate.name.clone(),
        color: mate.color.clone(),
        cwd: mate.blueprint.cwd.clone(),
        argv,
        env,
    })
}

/// The variable naming the file a pane teammate reads its secret variables from (and
/// removes) as it starts: API keys never appear on a command line or in the terminal
/// server's environment.
pub const TEAMMATE_ENV_FILE: &str = "FLEET_TEAMMATE_ENV_FILE";

/// Writes the secrets a teammate needs into an owner-only file for it to read once.
fn secrets_file(
    team: &Team,
    name: &str,
    vars: &[(String, String)],
) -> Result<std::path::PathBuf, PaneError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = team.store.dir(&team.name).join("secrets");
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(PaneError::SecretsDir { dir, source });
    }
    let path = dir.join(format!("{name}-{}.json", uuid::Uuid::new_v4().simple()));
    let map: serde_json::Map<String, serde_json::Value> =
        vars.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut file| {
            file.write_all(serde_json::Value::Object(map).to_string().as_bytes())?;
            file.sync_all()
        });
    if let Err(source) = written {
        return Err(PaneError::SecretsFile { path, source });
    }
    Ok(path)
}

/// Waits for the teammate's process to end, then closes its pane and reports the end.
async fn watch(team: Arc<Team>, mate: Arc<Mate>, link: Arc<PaneLink>, pane: Pane) {
    match pane.pid {
        Some(pid) => pidwatch::exited(pid).await,
        None => loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let backend = link.backend.clone();
            let id = pane.id.clone();
            let alive = tokio::task::spawn_blocking(move || backend.is_alive(&id))
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or(false);
            if !alive {
                break;
            }
        },
    }
    {
        // A restart may have replaced this pane already.
        let mut current = lock(&link.pane);
        if current.as_ref().map(|p| &p.id) != Some(&pane.id) {
            return;
        }
        *current = None;
    }
    // Its agreement may still sit unread in the lead's inbox: the process can end before
    // the lead's poller has read its last words.
    if let Some(secrets) = lock(&link.secrets).take() {
        // Gone already when the teammate read it; there when it died first.
        let _ = std::fs::remove_file(secrets);
    }
    let agreed = mate.exit.load(Ordering::Acquire) || agreed_in_mail(&team, &mate.name);
    if agreed {
        mate.exit.store(true, Ordering::Release);
    }
    let backend = link.backend.clone();
    let id = pane.id.clone();
    let words = tokio::task::spawn_blocking(move || {
        let words = (!agreed)
            .then(|| backend.last_words(&id, LAST_WORDS))
            .flatten();
        if let Err(err) = backend.kill(&id) {
            tracing::warn!("cannot close pane {id}: {err}");
        }
        words
    })
    .await
    .ok()
    .flatten();
    team.update_member(&mate.name, |m| {
        m.extra.insert("isActive".into(), json!(false));
    });
    let detail = (!agreed).then(|| match words.filter(|w| !w.trim().is_empty()) {
        Some(words) => format!(
            "Its process in pane {} ended; its last lines were:\n{words}",
            pane.id
        ),
        None => format!("Its process in pane {} ended.", pane.id),
    });
    if mate.state() != MateState::Stopped {
        mate.finish(&team, detail).await;
    }
}

/// Whether `name`'s `shutdown_approved` waits in the lead's inbox.
fn agreed_in_mail(team: &Team, name: &str) -> bool {
    team.lead_mailbox.unread().is_ok_and(|unread| {
        unread.entries.iter().any(|entry| {
            entry.from == name
                && matches!(
                    fleet_protocol::team::Frame::parse(&entry.text),
                    Some(fleet_protocol::team::Frame::ShutdownApproved(_))
                )
        })
    })
}

/// SIGKILL for a process that did not end when its pane closed.
fn kill_hard(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else {
        return;
    };
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
