//! `fleet --dashboard` in the terminal UI: one server for the whole run, following whichever
//! session the UI runs now (a new one after `/clear` or `/resume`). Its URL goes to stderr
//! before the UI starts, and is shown as a notice in the UI.

use super::actions::{CliActions, LiveSession, LiveSlot};
use super::approver::DashboardApprover;
use anyhow::Context;
use fleet_dashboard::{Hub, LiveFeed, ServeOptions, Serving};
use fleet_protocol::AgentEvent;
use fleet_runtime::controls::SessionControls;
use fleet_runtime::Approver;
use fleet_store::FleetHome;
use std::path::Path;
use std::sync::Arc;

pub struct TuiDashboard {
    hub: Hub,
    slot: LiveSlot,
    serving: Serving,
}

impl TuiDashboard {
    /// The dashboard when the command line asks for it (`--dashboard`).
    pub async fn if_asked(args: &crate::args::PrintArgs) -> anyhow::Result<Option<Arc<Self>>> {
        match args.dashboard {
            true => Ok(Some(Self::start().await?)),
            false => Ok(None),
        }
    }

    /// Opens the hub on `$FLEET_HOME` and starts serving on a free loopback port.
    pub async fn start() -> anyhow::Result<Arc<Self>> {
        let home = FleetHome::from_env()?;
        let hub = Hub::open(home.root().to_path_buf())
            .with_context(|| format!("--dashboard: reading {}", home.root().display()))?;
        hub.watch()
            .context("--dashboard: watching the fleet home for changes")?;
        super::remote::follow_broker(&hub, &std::env::current_dir()?);
        let slot = LiveSlot::default();
        let actions = CliActions::with_session(home, slot.clone());
        let serving =
            fleet_dashboard::serve(hub.clone(), Arc::new(actions), ServeOptions::default())
                .await
                .context("--dashboard")?;
        // Before the UI takes the screen (and again as a notice in it).
        eprintln!("fleet: dashboard: {}", serving.url());
        Ok(Arc::new(Self { hub, slot, serving }))
    }

    pub fn url(&self) -> String {
        self.serving.url()
    }

    /// The approver of session `session_id`: its questions in the UI and on the page.
    pub fn approver(&self, session_id: &str, ui: Arc<dyn Approver>) -> Arc<DashboardApprover> {
        Arc::new(DashboardApprover::new(
            Some(ui),
            self.hub.clone(),
            session_id.to_string(),
        ))
    }

    /// Makes `session_id` the session the page follows and steers; its events go through
    /// the returned tap.
    pub fn follow(
        &self,
        session_id: &str,
        folder: &Path,
        model: Option<&str>,
        controls: SessionControls,
        approver: Arc<DashboardApprover>,
    ) -> Tap {
        let feed = self.hub.attach_live(session_id, folder, model);
        *self.slot.write().unwrap_or_else(|e| e.into_inner()) = Some(LiveSession {
            session_id: session_id.to_string(),
            controls,
            approver,
        });
        Tap(feed)
    }
}

/// One session's events into the hub; the session shows as ended once this is dropped.
pub struct Tap(LiveFeed);

impl Tap {
    pub fn push(&self, event: &AgentEvent) {
        self.0.push(event);
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.0.ended();
    }
}
