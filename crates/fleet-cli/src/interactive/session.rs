//! Building the interactive session, and building it again: at start (a new session, or
//! `-c` / `-r`), after `/clear` (a new conversation) and on `/resume <id>`. Every build goes
//! the way `-p` goes (`headless::setup::agent`, `fleet_session::launch`), with the UI as the
//! approver and [`SessionControls`] always attached; the MCP servers are started once and
//! shared by every build.

use super::approver::UiApprover;
use crate::args::PrintArgs;
use crate::dashboard_cmd::tui::{Tap, TuiDashboard};
use crate::headless::setup;
use crate::model_choice::Choice;
use crate::settings::{repo_root, Settings};
use fleet_model::{Catalog, ModelClient};
use fleet_protocol::Message;
use fleet_runtime::controls::{ControlOptions, SessionControls};
use fleet_runtime::subagent::McpSession;
use fleet_runtime::teams::member::Membership;
use fleet_runtime::{SessionHandle, Spawner};
use fleet_session::build::orchestration::Scratchpad;
use fleet_session::launch::{self, Ready, Running, Steer};
use fleet_session::{OpSender, SessionFile};
use fleet_tools::permissions::{PermissionMode, Permissions};
use std::path::PathBuf;
use std::sync::Arc;

/// What every build of the session starts from.
pub struct Spec {
    pub args: PrintArgs,
    pub cwd: PathBuf,
    pub settings: Settings,
    pub client: Arc<dyn ModelClient>,
    pub catalog: Catalog,
    /// The model id to start with.
    pub model: String,
    /// Whether sessions are written under `$FLEET_HOME`.
    pub persist: bool,
    /// Set when this process is a pane teammate: who it is in its team.
    pub member: Option<fleet_runtime::teams::member::Identity>,
}

/// Which conversation a build carries on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// As the command line says: new, `-c`, `-r`, `--session-id`, `--fork-session`.
    CommandLine,
    /// A new, empty conversation (`/clear`).
    Fresh,
    /// This session of the folder (`/resume <id>`).
    Resume(String),
}

/// Builds sessions: the spec, the shared MCP servers and the UI's approver.
pub struct Builder {
    pub spec: Spec,
    pub servers: Arc<McpSession>,
    /// What the servers give the agents, worked out once.
    pub mcp: setup::McpTools,
    pub approver: Arc<UiApprover>,
    /// `--dashboard`: the page that follows each session built.
    pub dashboard: Option<Arc<TuiDashboard>>,
}

/// A running session and the handles the driver steers it by.
pub struct Live {
    pub handle: SessionHandle,
    /// The session's way in (prompts, interrupts, model and mode, tasks); dropped to let
    /// the session end after its turn.
    pub ops: OpSender,
    /// What the session's steering reads back (model, mode, context) and the rule edits.
    pub controls: SessionControls,
    pub spawner: Arc<Spawner>,
    /// The main agent's permissions: its rules, for `/permissions`.
    pub permissions: Arc<Permissions>,
    pub file: SessionFile,
    pub socket: Option<PathBuf>,
    /// The conversation it carries on from (empty for a new one), for the UI.
    pub history: Vec<Message>,
    /// Its membership of a team another session leads (a pane teammate).
    pub member: Option<Arc<Membership>>,
    /// `--dashboard`: where its events go for the page.
    pub dashboard: Option<Tap>,
    _scratchpad: Option<Scratchpad>,
}

impl Live {
    /// Hands `event` to the dashboard's page, with `--dashboard`.
    pub fn tap(&self, event: &fleet_protocol::AgentEvent) {
        if let Some(tap) = &self.dashboard {
            tap.push(event);
        }
    }
}

impl Builder {
    /// Builds and starts a session carrying on `which`, with `model` and `mode` when given
    /// (so `/clear` keeps what the person chose).
    pub async fn start(
        &self,
        which: &Which,
        model: Option<String>,
        mode: Option<PermissionMode>,
    ) -> anyhow::Result<Live> {
        let spec = &self.spec;
        let mut args = spec.args.clone();
        if *which != Which::CommandLine {
            args.continue_session = false;
            args.session_id = None;
            args.fork_session = false;
            args.resume = match which {
                Which::Resume(id) => Some(id.clone()),
                _ => None,
            };
        }
        if let Some(mode) = mode {
            args.permission_mode = Some(mode);
            args.dangerously_skip_permissions = false;
        }
        let mut file = SessionFile::open(
            &setup::conversation(&args),
            &spec.cwd,
            spec.persist,
            &crate::headless::report::Stderr,
        )?;
        let controls = SessionControls::new(ControlOptions {
            allow_bypass: args.allow_dangerously_skip_permissions
                || args.mode() == Some(PermissionMode::BypassPermissions),
            project_dir: repo_root(&spec.cwd).or_else(|| Some(spec.cwd.clone())),
            home_dir: None,
        });
        let choice = Choice {
            client: spec.client.clone(),
            catalog: spec.catalog.clone(),
            model: model.unwrap_or_else(|| spec.model.clone()),
        };
        let model_id = choice.model.clone();
        let asks_page = self
            .dashboard
            .as_ref()
            .map(|d| d.approver(file.id(), self.approver.clone()));
        let approver: Arc<dyn fleet_runtime::Approver> = match &asks_page {
            Some(both) => both.clone(),
            None => self.approver.clone(),
        };
        let built = setup::agent(
            &args,
            &spec.cwd,
            &spec.settings,
            choice,
            file.id(),
            setup::Host {
                approver: Some(approver),
                hooks: None,
                controls: Some(controls.clone()),
            },
            spec.persist,
            &self.mcp,
        )?;
        let mut agent = built.agent;
        // A pane teammate's turn ends right after it agrees to shut down.
        let exit = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if spec.member.is_some() {
            agent.end_after_tools(exit.clone());
        }
        let permissions = agent.config().tools.permissions.clone();
        let spawner = built.spawner.clone();
        let history = file.peek_history().to_vec();
        let Running {
            ops,
            handle,
            socket,
        } = launch::run(
            Ready {
                agent,
                spawner: built.spawner,
                sink: built.sink,
                events: built.events,
                attended: true,
            },
            &mut file,
            Steer {
                controls: Some(controls.clone()),
                answers: None,
            },
        )
        .await?;
        let dashboard = self.dashboard.as_ref().zip(asks_page).map(|(d, approver)| {
            d.follow(
                file.id(),
                &spec.cwd,
                Some(&model_id),
                controls.clone(),
                approver,
            )
        });
        let member = match &spec.member {
            Some(identity) => Some(fleet_runtime::teams::join_team(
                &spawner,
                identity.clone(),
                exit,
            )?),
            None => None,
        };
        Ok(Live {
            member,
            handle,
            ops,
            controls,
            spawner,
            permissions,
            file,
            socket,
            history,
            dashboard,
            _scratchpad: built.scratchpad,
        })
    }
}
