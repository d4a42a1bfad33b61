//! ExitPlanMode for a teammate that must have its plan approved: the plan goes to the lead as
//! a `plan_approval_request`, and the teammate keeps working read-only until the verdict
//! arrives in its inbox (`[Plan Approved]` lifts plan mode; `[Plan Rejected]` carries what to
//! change, and it submits again).

use crate::context::AgentContext;
use crate::teams::send::submit_plan;
use crate::teams::Teams;
use crate::teams::{clock, LEAD_NAME};
use fleet_protocol::team::frames::plan_request_id;
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitPlanModeInput {
    /// The plan, in Markdown: what you will change, file by file, and how you will check it.
    /// Left out, the plan file you wrote is sent.
    #[serde(default)]
    pub plan: Option<String>,
}

pub struct ExitPlanModeTool {
    teams: Arc<Teams>,
}

impl ExitPlanModeTool {
    pub(crate) fn new(teams: Arc<Teams>) -> Self {
        Self { teams }
    }
}

impl TypedTool for ExitPlanModeTool {
    type Input = ExitPlanModeInput;
    const NAME: &'static str = "ExitPlanMode";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "You are in plan mode: you may read and explore, but not change anything, until the \
         team lead approves your plan. When the plan is ready, call this with it in `plan`. It \
         is sent to the lead; wait for the verdict in your mail. `[Plan Approved]` means you \
         may now implement it; `[Plan Rejected]` comes with feedback: revise the plan and call \
         this again."
            .into()
    }

    fn access(&self, _input: &ExitPlanModeInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: ExitPlanModeInput,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let ctx = AgentContext::current();
        let Some(me) = ctx.as_deref().and_then(|c| c.teammate()) else {
            return Err(ToolError::failed(
                "ExitPlanMode is for teammates whose lead approves their plan.",
            ));
        };
        let team = self
            .teams
            .current()
            .ok_or_else(|| ToolError::failed("Your team has ended."))?;
        let mate = team
            .mate(&me.agent_name)
            .ok_or_else(|| ToolError::failed("You are no longer a member of the team."))?;
        let plan_file = team
            .settings
            .home
            .root()
            .join("plans")
            .join(format!("{}-{}.md", team.name, mate.name));
        let plan = match input.plan.filter(|p| !p.trim().is_empty()) {
            Some(plan) => plan,
            None => std::fs::read_to_string(&plan_file).map_err(|_| {
                ToolError::Failed(format!(
                    "No plan given: pass it in `plan`, or write it to {} first.",
                    plan_file.display()
                ))
            })?,
        };
        if let Some(dir) = plan_file.parent() {
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&plan_file, &plan))
                .map_err(|err| ToolError::io("Cannot write", &plan_file, err))?;
        }
        let request_id = plan_request_id(clock::now_ms(), &mate.name, &team.name);
        submit_plan(
            &team,
            &mate,
            &request_id,
            &plan,
            &plan_file.display().to_string(),
        )?;
        Ok(ToolOutput::text(format!(
            "Your plan has been submitted to the team lead for approval.\nPlan file: {}\n\n\
             **What happens next:**\n1. Wait: the verdict arrives as a message from {LEAD_NAME}.\n\
             2. If it reads [Plan Approved], you are out of plan mode: implement the plan.\n\
             3. If it reads [Plan Rejected], revise the plan as the feedback says and call \
             ExitPlanMode again.\nDo not make changes before the approval.\n\nRequest ID: {request_id}",
            plan_file.display()
        ))
        .with_structured(json!({"request_id": request_id, "plan_file": plan_file.display().to_string()})))
    }
}
