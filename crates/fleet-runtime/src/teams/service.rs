//! The team service as the spawner and the session see it: [`Teams`] behind the spawner's
//! [`TeamPort`], and the session's entry points (taking up a resumed session's team,
//! listening for other sessions, joining a team as a pane teammate).
//!
//! The spawner holds the service only as the port, since `subagent/` does not know `teams/`;
//! [`Teams::of`] gets the service back from a spawner.

use super::member::{Identity, Membership};
use super::{mate, TeamSetupError, Teams, TEAM_TOOLS};
use crate::subagent::{AgentInput, ParentView, SendMessageInput, Spawner, TeamPort};
use fleet_tools::{Tool, ToolContext, ToolError, ToolOutput};
use futures::future::BoxFuture;
use std::any::Any;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

impl Teams {
    /// The team service `spawner` was made with; `None` when teams are off.
    pub fn of(spawner: &Spawner) -> Option<Arc<Teams>> {
        let port = spawner.team_port()?.clone();
        port.into_any().downcast::<Teams>().ok()
    }
}

impl TeamPort for Teams {
    fn spawn_teammate<'a>(
        &'a self,
        spawner: &'a Arc<Spawner>,
        parent: &'a Arc<ParentView>,
        input: AgentInput,
        name: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(Teams::spawn_teammate(
            self, spawner, parent, input, name, ctx,
        ))
    }

    fn send<'a>(
        &'a self,
        spawner: &'a Arc<Spawner>,
        sender: &'a ParentView,
        input: &'a SendMessageInput,
    ) -> BoxFuture<'a, Result<Option<ToolOutput>, ToolError>> {
        Box::pin(self.send_in_team(spawner, sender, input))
    }

    fn listing(&self) -> Vec<String> {
        self.team_listing()
    }

    fn tools(self: Arc<Self>, keep: &dyn Fn(&str) -> bool) -> Vec<Arc<dyn Tool>> {
        use super::tools::*;
        let team_tools: [(&str, Arc<dyn Tool>); 6] = [
            ("TeamCreate", Arc::new(TeamCreateTool::new(self.clone()))),
            ("TeamDelete", Arc::new(TeamDeleteTool::new(self.clone()))),
            ("TaskCreate", Arc::new(TaskCreateTool::new(self.clone()))),
            ("TaskGet", Arc::new(TaskGetTool::new(self.clone()))),
            ("TaskList", Arc::new(TaskListTool::new(self.clone()))),
            ("TaskUpdate", Arc::new(TaskUpdateTool::new(self.clone()))),
        ];
        let mut tools: Vec<Arc<dyn Tool>> = team_tools
            .into_iter()
            .filter(|(name, _)| keep(name))
            .map(|(_, tool)| tool)
            .collect();
        if keep("ExitPlanMode") {
            tools.push(Arc::new(ExitPlanModeTool::new(self)));
        }
        tools
    }

    fn is_team_tool(&self, tool: &str) -> bool {
        TEAM_TOOLS.contains(&tool)
    }

    fn member_notes(&self) -> &'static str {
        mate::TEAMMATE_NOTES
    }

    fn stop_member(&self, name: &str) -> Option<serde_json::Value> {
        self.stop_teammate(name)
    }

    fn busy(&self) -> bool {
        self.current().is_some_and(|team| team.busy())
    }

    fn version(&self) -> u64 {
        self.current().map_or(0, |team| team.version())
    }

    fn changed_since(&self, seen: u64) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            match self.current() {
                Some(team) => team.changed_since(seen).await,
                None => std::future::pending().await,
            }
        })
    }

    fn stop_all(&self) -> BoxFuture<'_, usize> {
        Box::pin(async move {
            match self.current() {
                Some(team) => {
                    let stopped = self.shutdown_team(&team).await;
                    self.lead_ended(&team);
                    stopped
                }
                None => 0,
            }
        })
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// Takes up the team a resumed session led (see [`Teams::restore_team`]); `Ok(None)` when
/// teams are off or the session led none.
pub async fn restore_team(
    spawner: &Arc<Spawner>,
    lead_read: HashSet<String>,
) -> Result<Option<String>, TeamSetupError> {
    match Teams::of(spawner) {
        Some(teams) => teams.restore_team(spawner, lead_read).await,
        None => Ok(None),
    }
}

/// Starts listening for other sessions' messages (see [`Teams::listen_uds`]).
pub fn listen_uds(spawner: &Arc<Spawner>) -> Result<PathBuf, TeamSetupError> {
    let teams = Teams::of(spawner).ok_or(TeamSetupError::TeamsOff)?;
    Ok(teams.listen_uds(spawner)?)
}

/// Makes this session a pane teammate of the team `identity` names (see
/// [`Teams::join_team`]).
pub fn join_team(
    spawner: &Arc<Spawner>,
    identity: Identity,
    exit: Arc<AtomicBool>,
) -> Result<Arc<Membership>, TeamSetupError> {
    Teams::of(spawner)
        .ok_or(TeamSetupError::TeamsOff)?
        .join_team(spawner, identity, exit)
}

/// The team this session is a pane teammate of, if it is one.
pub fn membership(spawner: &Spawner) -> Option<Arc<Membership>> {
    Teams::of(spawner)?.membership().cloned()
}
