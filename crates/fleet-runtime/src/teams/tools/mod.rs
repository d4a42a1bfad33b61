//! The tools only a team has: TeamCreate and TeamDelete for the lead, the shared task list's
//! tools for every member, and ExitPlanMode for a teammate that must have its plan approved.

mod plan;
mod task_list;
mod team;

pub use plan::ExitPlanModeTool;
pub use task_list::{TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool};
pub use team::{TeamCreateTool, TeamDeleteTool};

use super::roster::{Team, Teams};
use super::LEAD_NAME;
use crate::context::AgentContext;
use fleet_tools::ToolError;
use std::sync::Arc;

/// The calling member's name: the teammate running the call, else the lead.
pub(crate) fn caller_name() -> String {
    AgentContext::current()
        .as_deref()
        .and_then(|c| c.teammate())
        .map(|t| t.agent_name.clone())
        .unwrap_or_else(|| LEAD_NAME.to_string())
}

/// The session's team, made implicitly for the lead when there is none yet.
pub(crate) fn team_for(teams: &Teams, cwd: &std::path::Path) -> Result<Arc<Team>, ToolError> {
    teams.get_or_create(cwd).map_err(ToolError::from)
}
