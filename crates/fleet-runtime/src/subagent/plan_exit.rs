//! ExitPlanMode for the main agent of a session started in plan mode: the agent hands its
//! plan to the person, who approves it (the session leaves plan mode) or refuses it with
//! feedback (the agent reads the feedback as the call's error and revises).
//!
//! Whether to leave plan mode is always the person's decision, so every call asks
//! ([`Tool::asks_always`]): in `-p` with `--permission-prompt-tool stdio` that is a
//! `can_use_tool` request naming `ExitPlanMode` with the plan in its input, which is how a
//! remote Ultraplan worker learns that a plan is ready. A teammate's ExitPlanMode, which goes
//! to its lead instead, is the team service's own ExitPlanMode tool (`teams/tools/plan.rs`).

use fleet_tools::permissions::{PermissionMode, Permissions};
use fleet_tools::tool::{parse_input, schema_for};
use fleet_tools::{Access, Parallelism, Tool, ToolContext, ToolFuture, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// What the model reads back once the person approved.
pub const APPROVED: &str = "User has approved your plan. You can now start coding.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanInput {
    /// The plan, in Markdown: what you will change, file by file, and how you will check it.
    pub plan: String,
}

/// The main agent's ExitPlanMode; it holds the session's permissions to change their mode.
pub struct MainExitPlanMode {
    permissions: Arc<Permissions>,
}

impl MainExitPlanMode {
    pub fn new(permissions: Arc<Permissions>) -> Self {
        Self { permissions }
    }
}

impl Tool for MainExitPlanMode {
    fn name(&self) -> &str {
        "ExitPlanMode"
    }

    fn description(&self) -> String {
        "You are in plan mode: you may read and explore, but not change anything. When your \
         plan is ready, call this with the whole plan in `plan` (Markdown) to present it to the \
         user for approval. If they approve, you leave plan mode and may carry it out; if they \
         refuse, their answer says what to change: revise the plan and call this again. Use it \
         only to present a plan for a task that needs code changes, not after research alone."
            .into()
    }

    fn input_schema(&self) -> Value {
        schema_for::<PlanInput>()
    }

    /// It changes nothing in the project, so plan mode lets it through to the question.
    fn is_read_only(&self) -> bool {
        true
    }

    fn parallelism(&self) -> Parallelism {
        Parallelism::Exclusive
    }

    fn access(&self, _input: &Value, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    fn asks_always(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input = parse_input::<PlanInput>("ExitPlanMode", input)?;
            // The answer may have set a mode already (`updatedPermissions` with setMode,
            // e.g. acceptEdits); only a session still in plan mode is moved out of it.
            if self.permissions.mode() == PermissionMode::Plan {
                self.permissions.change_mode(PermissionMode::Default);
            }
            Ok(ToolOutput::text(APPROVED).with_structured(json!({
                "plan": input.plan,
                "isAgent": false,
                "mode": self.permissions.mode().as_str(),
            })))
        })
    }
}
