//! `fleet … --dashboard`: the dashboard served from the session's own process, on a free
//! loopback port, its URL on stderr. The hub shows this session only (past sessions are
//! `fleet dashboard`'s): its events as they happen, its team's files and mailboxes; the page
//! may stop its tasks and answer its permission questions.
//!
//! Without `--dashboard` none of this exists: no hub, no server, no event copied.

use super::actions::{CliActions, LiveSession};
use super::approver::DashboardApprover;
use anyhow::Context;
use fleet_dashboard::{Hub, LiveFeed, ServeOptions, Serving};
use fleet_protocol::AgentEvent;
use fleet_runtime::controls::SessionControls;
use fleet_store::FleetHome;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// The first half, before the session is built: the hub, and the approver that asks on the
/// page (it goes into the build).
pub struct Prepared {
    home: FleetHome,
    hub: Hub,
    session_id: String,
    pub approver: Arc<DashboardApprover>,
}

/// Opens the hub on `$FLEET_HOME` and wraps the session's approver (if any) so that its
/// questions are asked on the page too.
pub fn prepare(
    session_id: &str,
    inner: Option<Arc<dyn fleet_runtime::Approver>>,
) -> anyhow::Result<Prepared> {
    let home = FleetHome::from_env()?;
    let hub = Hub::open_session(home.root().to_path_buf(), session_id)
        .with_context(|| format!("--dashboard: reading {}", home.root().display()))?;
    hub.watch()
        .context("--dashboard: watching the fleet home for changes")?;
    super::remote::follow_broker(&hub, &std::env::current_dir()?);
    let approver = Arc::new(DashboardApprover::new(
        inner,
        hub.clone(),
        session_id.to_string(),
    ));
    Ok(Prepared {
        home,
        hub,
        session_id: session_id.to_string(),
        approver,
    })
}

/// A session's dashboard, serving until dropped.
pub struct LiveDashboard {
    feed: LiveFeed,
    _serving: Serving,
}

impl Prepared {
    /// The second half, once the session is built: attaches the session to the hub, starts
    /// the server and prints its URL on stderr.
    pub async fn serve(
        self,
        folder: &Path,
        model: Option<&str>,
        controls: SessionControls,
    ) -> anyhow::Result<LiveDashboard> {
        let feed = self.hub.attach_live(&self.session_id, folder, model);
        let live = LiveSession {
            session_id: self.session_id,
            controls,
            approver: self.approver,
        };
        let actions = CliActions::with_session(self.home, Arc::new(RwLock::new(Some(live))));
        let serving = fleet_dashboard::serve(self.hub, Arc::new(actions), ServeOptions::default())
            .await
            .context("--dashboard")?;
        eprintln!("fleet: dashboard: {}", serving.url());
        Ok(LiveDashboard {
            feed,
            _serving: serving,
        })
    }
}

impl LiveDashboard {
    /// Hands one of the session's events to the page.
    pub fn push(&self, event: &AgentEvent) {
        self.feed.push(event);
    }

    /// The session has ended: the page shows it ended (the server serves on until dropped),
    /// and a page following it gets that last batch before the process exits.
    pub async fn ended(&self) {
        self.feed.ended();
        self.feed.let_pages_see_the_end().await;
    }
}
