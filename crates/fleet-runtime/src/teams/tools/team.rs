//! TeamCreate and TeamDelete: the lead names its team, and ends it.

use super::team_for;
use crate::teams::mate::MateState;
use crate::teams::Teams;
use fleet_protocol::TeamEvent;
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamCreateInput {
    /// The team's name; made unique (`-2`, `-3`, …) when taken.
    pub team_name: String,
    /// What the team is for.
    #[serde(default)]
    pub description: Option<String>,
    /// The lead's agent type, recorded in the team file.
    #[serde(default)]
    pub agent_type: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamDeleteInput {}

pub struct TeamCreateTool {
    teams: Arc<Teams>,
}

impl TeamCreateTool {
    pub(crate) fn new(teams: Arc<Teams>) -> Self {
        Self { teams }
    }
}

impl TypedTool for TeamCreateTool {
    type Input = TeamCreateInput;
    const NAME: &'static str = "TeamCreate";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Creates a team with you as its lead. Then add teammates with the Agent tool and a \
         `name`: each is a long-lived agent that works on its own, reads its mail between \
         turns, and talks to you and the others with SendMessage. Share work through the task \
         list (TaskCreate, TaskList, TaskUpdate). Without TeamCreate the session has an \
         implicit team, so this is only needed to give the team a name and a description."
            .into()
    }

    fn access(&self, _input: &TeamCreateInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: TeamCreateInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let teams = &self.teams;
        if input.team_name.trim().is_empty() {
            return Err(ToolError::bad_value(
                "team_name",
                "`team_name` is empty: name the team.",
            ));
        }
        let team = teams
            .create(
                input.team_name.trim(),
                input.description.as_deref(),
                &ctx.cwd,
            )
            .map_err(ToolError::from)?;
        if let Some(agent_type) = input.agent_type.filter(|t| !t.trim().is_empty()) {
            team.update_member(crate::teams::LEAD_NAME, |m| m.agent_type = agent_type);
        }
        let value = json!({
            "team_name": team.name,
            "lead_agent_id": team.lead_agent_id(),
            "team_file": team.store.dir(&team.name).join("config.json").display().to_string(),
        });
        Ok(ToolOutput::text(format!(
            "Team {:?} created with you as lead ({}). Add teammates with the Agent tool and a \
             `name`.",
            team.name,
            team.lead_agent_id()
        ))
        .with_structured(value))
    }
}

pub struct TeamDeleteTool {
    teams: Arc<Teams>,
}

impl TeamDeleteTool {
    pub(crate) fn new(teams: Arc<Teams>) -> Self {
        Self { teams }
    }
}

impl TypedTool for TeamDeleteTool {
    type Input = TeamDeleteInput;
    const NAME: &'static str = "TeamDelete";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Ends your team: every teammate still running is stopped first, then the team's files \
         are removed (its task list is kept). Prefer asking teammates to shut down with a \
         shutdown_request so they can finish what they are doing."
            .into()
    }

    fn access(&self, _input: &TeamDeleteInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        _input: TeamDeleteInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let team = team_for(&self.teams, &ctx.cwd)?;
        let stopped = self.teams.shutdown_team(&team).await;
        self.teams.clear();
        team.store.delete(&team.name).map_err(|err| {
            ToolError::Failed(format!("Cannot remove team {:?}: {err}", team.name))
        })?;
        team.emit(TeamEvent::TeamDeleted {
            team: team.name.clone(),
        })
        .await;
        Ok(ToolOutput::text(format!(
            "Team {:?} ended; {} teammate(s) were stopped.",
            team.name, stopped
        )))
    }
}

impl Teams {
    /// Stops the running teammate `name` (TaskStop by name): it ends without agreeing, and its
    /// unfinished tasks go back to the list.
    pub(crate) fn stop_teammate(&self, name: &str) -> Option<serde_json::Value> {
        let team = self.current()?;
        let mate = team.mate(name)?;
        if mate.state() == MateState::Stopped {
            return None;
        }
        mate.stop();
        Some(json!({
            "message": format!("Successfully stopped teammate {} ({}).", mate.name, mate.agent_id),
            "task_id": mate.agent_id,
            "task_type": "in_process_teammate",
        }))
    }

    /// Stops every running member of `team` and waits for each to end; returns how many were
    /// running.
    pub(crate) async fn shutdown_team(&self, team: &crate::teams::Team) -> usize {
        let running: Vec<_> = team
            .mates()
            .into_iter()
            .filter(|m| m.state() != MateState::Stopped)
            .collect();
        for mate in &running {
            mate.stop();
        }
        for mate in &running {
            mate.wait_stopped().await;
        }
        let members = team
            .mates()
            .iter()
            .map(|m| fleet_protocol::team::MemberSummary {
                name: m.name.clone(),
                agent_id: m.agent_id.clone(),
                agent_type: m.agent_type.clone(),
                model: m.model.clone(),
                status: "stopped".into(),
                cost_usd: m.cost_usd(),
                turns: m.turns(),
            })
            .collect();
        team.emit(TeamEvent::TeamSummary {
            team: team.name.clone(),
            members,
        })
        .await;
        if let Some(poller) = team
            .poller
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            poller.abort();
        }
        running.len()
    }
}
