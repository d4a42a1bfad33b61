//! Whether the session has teams, and their settings.

use crate::error::{Result, SessionError};
use crate::options::SessionOptions;
use fleet_protocol::env;
use fleet_runtime::subagent::Orchestration;
use fleet_runtime::teams::TeamSettings;
use fleet_store::FleetHome;

/// Teams are on unless `FLEET_AGENT_TEAMS=0`, in coordinator mode (workers are the
/// coordinator's own scheme), or when nothing may be written under `$FLEET_HOME` (mailboxes and
/// team files live there).
pub(super) fn settings(
    mode: Orchestration,
    session_id: &str,
    options: &SessionOptions,
) -> Result<Option<TeamSettings>> {
    let wanted = env::FLEET_AGENT_TEAMS.get()?.unwrap_or(true);
    if !wanted || !options.persist || mode == Orchestration::Coordinator {
        return Ok(None);
    }
    let Ok(home) = FleetHome::from_env() else {
        return Ok(None);
    };
    let sid8: String = session_id.chars().take(8).collect();
    let panes = match &options.panes {
        Some(factory) => factory(&format!("session-{sid8}")).map_err(SessionError::Panes)?,
        None => None,
    };
    Ok(Some(TeamSettings {
        home,
        session_id: session_id.to_string(),
        auto_approve_plans: env::FLEET_TEAM_AUTO_APPROVE_PLANS.is_on()?,
        listen: true,
        panes,
    }))
}
