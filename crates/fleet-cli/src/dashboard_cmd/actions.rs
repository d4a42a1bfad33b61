//! The dashboard's actions, with the command line's rights. Any dashboard messages a team
//! member as `fleet team send` does (the same code: signed with the user's team-mail key).
//! Stopping a task and answering a permission question need the process that runs the
//! session, so only a session started with `--dashboard` offers them, for itself.
//!
//! The session is steered through its [`SessionControls`] (what `Op::StopTask` does) rather
//! than an `OpSender`: a sender held by the server would keep the session from ever ending.

use super::approver::DashboardApprover;
use crate::team_cmd::send::{deliver, Outgoing};
use fleet_dashboard::actions::{ActionError, ActionFuture, Actions};
use fleet_dashboard::api::{self, ActionResult, PermissionAnswer, SendMessage};
use fleet_runtime::controls::{ControlError, SessionControls};
use fleet_runtime::tasks::TaskError;
use fleet_store::team::{TeamError, TeamStore};
use fleet_store::FleetHome;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// How long a message waits for a running teammate that screens its mail to take it.
const SEND_WAIT: Duration = Duration::from_secs(10);

/// The session this process runs, when it was started with `--dashboard`.
#[derive(Clone)]
pub struct LiveSession {
    pub session_id: String,
    pub controls: SessionControls,
    pub approver: Arc<DashboardApprover>,
}

/// Which session this process runs now: the terminal UI starts a new one on `/clear` and
/// `/resume`, and the page's actions follow it.
pub type LiveSlot = Arc<RwLock<Option<LiveSession>>>;

/// The actions of `fleet dashboard` (no live session) and of `--dashboard` (one).
pub struct CliActions {
    home: FleetHome,
    live: LiveSlot,
}

/// `fleet dashboard`'s: messages only.
pub type StoreActions = CliActions;

impl CliActions {
    pub fn new(home: FleetHome) -> Self {
        Self {
            home,
            live: LiveSlot::default(),
        }
    }

    /// The actions of the session in `live` (whichever it holds when asked).
    pub fn with_session(home: FleetHome, live: LiveSlot) -> Self {
        Self { home, live }
    }

    fn current(&self) -> Option<LiveSession> {
        self.live.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The live session when `session_id` is it; else why the action is not available.
    fn live(&self, session_id: &str, what: &str) -> Result<LiveSession, ActionError> {
        match self.current() {
            Some(live) if live.session_id == session_id => Ok(live),
            Some(_) => Err(ActionError::Unavailable(format!(
                "cannot {what} here: session {session_id} is not the one this dashboard's \
                 process runs"
            ))),
            None => Err(ActionError::Unavailable(format!(
                "cannot {what} from `fleet dashboard`: it only reads the store. Start the \
                 session with `--dashboard` (`fleet -p … --dashboard`, or `fleet --dashboard`) \
                 and use the URL it prints"
            ))),
        }
    }
}

impl Actions for CliActions {
    fn available(&self, session_id: &str) -> api::Actions {
        let live = self.current().is_some_and(|l| l.session_id == session_id);
        api::Actions {
            stop_task: live,
            answer_permission: live,
            message_member: true,
        }
    }

    fn stop_task(&self, session_id: String, task_id: String) -> ActionFuture<'_> {
        Box::pin(async move {
            let live = self.live(&session_id, "stop a task")?;
            match live.controls.stop_task(&task_id).await {
                Ok(stopped) => Ok(ActionResult {
                    ok: true,
                    message: format!("stopped {} ({})", stopped.task_id, stopped.status),
                }),
                Err(ControlError::Task(err @ TaskError::Unknown { .. })) => {
                    Err(ActionError::NotFound(err.to_string()))
                }
                // Ended already, or ending now; or the session itself is over.
                Err(
                    err @ (ControlError::Task(
                        TaskError::NotRunning { .. } | TaskError::Transition(_),
                    )
                    | ControlError::NoTasks),
                ) => Err(ActionError::Unavailable(err.to_string())),
                Err(err) => Err(ActionError::Failed(err.to_string())),
            }
        })
    }

    fn message_member(
        &self,
        team: String,
        member: String,
        message: SendMessage,
    ) -> ActionFuture<'_> {
        Box::pin(async move {
            if message.text.trim().is_empty() {
                return Err(ActionError::Invalid("the message is empty".into()));
            }
            let home = self.home.clone();
            let sent = tokio::task::spawn_blocking(move || {
                let store = TeamStore::new(&home);
                match store.load(&team) {
                    Err(TeamError::NotFound { .. }) => {
                        return Err(ActionError::NotFound(format!("no team {team:?}")));
                    }
                    // A name that could reach outside the teams folder is the request's fault.
                    Err(err @ TeamError::InvalidTeamName { .. }) => {
                        return Err(ActionError::Invalid(err.to_string()));
                    }
                    // Someone the team does not have (or a name no member could have).
                    Ok(config) => {
                        if let Err(err) = crate::team_cmd::addressee(&config, &member) {
                            return Err(ActionError::NotFound(format!("{err:#}")));
                        }
                    }
                    Err(_) => {}
                }
                let outgoing = Outgoing {
                    team,
                    member,
                    text: message.text,
                    from: "user".into(),
                    summary: message.summary,
                    wait: SEND_WAIT,
                };
                deliver(&home, &store, outgoing)
                    .map_err(|err| ActionError::Failed(crate::render(&err)))
            })
            .await
            .map_err(|err| ActionError::Failed(format!("sending the message failed: {err}")))??;
            Ok(ActionResult {
                ok: true,
                message: match sent.note {
                    Some(note) => format!("sent {}; {note}", sent.msg_id),
                    None => format!("sent {}", sent.msg_id),
                },
            })
        })
    }

    fn answer_permission(
        &self,
        session_id: String,
        request_id: String,
        answer: PermissionAnswer,
    ) -> ActionFuture<'_> {
        Box::pin(async move {
            let live = self.live(&session_id, "answer a permission question")?;
            if live.approver.answer(&request_id, &answer) {
                Ok(ActionResult {
                    ok: true,
                    message: format!("answered {request_id}"),
                })
            } else {
                Err(ActionError::NotFound(format!(
                    "no permission question {request_id} waits (answered already, or \
                     withdrawn)"
                )))
            }
        })
    }
}
