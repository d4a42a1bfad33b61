//! TaskCreate, TaskGet, TaskList and TaskUpdate: the team's shared task list
//! (`$FLEET_HOME/tasks/<team>/<id>.json`). Separate from TaskStop and TaskOutput, which are
//! about background agents.
//!
//! Claiming is checked under the list's lock: a task another member owns, or one still blocked
//! by an unfinished task, is refused, naming who or what. Giving a task an owner leaves a
//! `task_assignment` in that member's inbox.

use super::{caller_name, team_for};
use crate::teams::Teams;
use crate::teams::{clock, LEAD_NAME};
use fleet_protocol::team::frames::{Frame, TaskAssignment};
use fleet_protocol::{MailEntry, TeamEvent};
use fleet_store::tasklist::{Actor, NewTask, PatchStatus, Task, TaskPatch};
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// A brief title, in the imperative ("Write the notes").
    pub subject: String,
    /// What needs to be done, and how to tell it is done.
    pub description: String,
    /// The present-continuous form shown while it is in progress ("Writing the notes").
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
    /// Anything else to keep with the task.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskGetInput {
    /// The task's id (the number TaskCreate reported).
    #[serde(rename = "taskId")]
    pub task_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusInput {
    Pending,
    InProgress,
    Completed,
    Deleted,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
    /// `deleted` removes the task (its id is never reused).
    #[serde(default)]
    pub status: Option<StatusInput>,
    /// The member who does it (your own name to claim it; "" to unassign).
    #[serde(default)]
    pub owner: Option<String>,
    /// Tasks that cannot start until this one is completed.
    #[serde(default, rename = "addBlocks")]
    pub add_blocks: Option<Vec<String>>,
    /// Tasks that must be completed before this one can start.
    #[serde(default, rename = "addBlockedBy")]
    pub add_blocked_by: Option<Vec<String>>,
    /// Merged into the task's metadata; a null value removes that key.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

macro_rules! team_tool {
    ($name:ident) => {
        pub struct $name {
            teams: Arc<Teams>,
        }
        impl $name {
            pub(crate) fn new(teams: Arc<Teams>) -> Self {
                Self { teams }
            }
        }
    };
}

team_tool!(TaskCreateTool);
team_tool!(TaskGetTool);
team_tool!(TaskListTool);
team_tool!(TaskUpdateTool);

fn store_error(err: impl std::fmt::Display) -> ToolError {
    ToolError::Failed(err.to_string())
}

impl TypedTool for TaskCreateTool {
    type Input = TaskCreateInput;
    const NAME: &'static str = "TaskCreate";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Adds a task to the team's shared task list, as `pending` with no owner. Every member \
         sees it in TaskList; claim it with TaskUpdate (owner: your name, status: \
         in_progress). Use tasks to split work that several teammates share."
            .into()
    }

    fn access(&self, _input: &TaskCreateInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: TaskCreateInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if input.subject.trim().is_empty() {
            return Err(ToolError::bad_value(
                "subject",
                "`subject` is empty: give the task a short title.",
            ));
        }
        let team = team_for(&self.teams, &ctx.cwd)?;
        let task = team
            .tasks
            .create(NewTask {
                subject: input.subject.trim().to_string(),
                description: input.description,
                active_form: input.active_form,
                metadata: input.metadata,
            })
            .map_err(store_error)?;
        changed(&team, &task, "created").await;
        Ok(ToolOutput::text(format!(
            "Task #{} created successfully: {}",
            task.id, task.subject
        ))
        .with_structured(serde_json::to_value(&task).unwrap_or(Value::Null)))
    }
}

impl TypedTool for TaskGetTool {
    type Input = TaskGetInput;
    const NAME: &'static str = "TaskGet";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Shows one task of the team's list in full: subject, status, owner, description, and \
         which tasks it blocks or is blocked by."
            .into()
    }

    fn access(&self, _input: &TaskGetInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: TaskGetInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let team = team_for(&self.teams, &ctx.cwd)?;
        let id = input.task_id.trim().trim_start_matches('#');
        let Some(task) = team.tasks.get(id).map_err(store_error)? else {
            return Ok(ToolOutput::text("Task not found"));
        };
        let text = task.details();
        Ok(ToolOutput::text(text)
            .with_structured(serde_json::to_value(&task).unwrap_or(Value::Null)))
    }
}

impl TypedTool for TaskListTool {
    type Input = TaskListInput;
    const NAME: &'static str = "TaskList";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Lists the team's tasks, one line each: `#id [status] subject (owner)`, with what \
         blocks a task. Look here for your next task: a pending one with no owner and nothing \
         unfinished blocking it."
            .into()
    }

    fn access(&self, _input: &TaskListInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, _input: TaskListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let team = team_for(&self.teams, &ctx.cwd)?;
        let tasks = team.tasks.list().map_err(store_error)?;
        if tasks.is_empty() {
            return Ok(ToolOutput::text("No tasks found"));
        }
        let lines: Vec<String> = tasks
            .iter()
            .map(|t| {
                let mut line = t.list_line();
                if !t.blocked_by.is_empty() {
                    line.push_str(&format!(" [blocked by {}]", hashes(&t.blocked_by)));
                }
                line
            })
            .collect();
        Ok(ToolOutput::text(lines.join("\n")))
    }
}

impl TypedTool for TaskUpdateTool {
    type Input = TaskUpdateInput;
    const NAME: &'static str = "TaskUpdate";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Changes a task of the team's list. Claim a task with `owner` set to your name and \
         `status: in_progress` (refused when another member owns it or an unfinished task \
         blocks it); mark it `completed` when done, then check TaskList for the next one. \
         The lead can assign a task by setting `owner`; the new owner is told. `deleted` \
         removes a task. `addBlocks` / `addBlockedBy` link tasks both ways."
            .into()
    }

    fn access(&self, _input: &TaskUpdateInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: TaskUpdateInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let team = team_for(&self.teams, &ctx.cwd)?;
        let me = caller_name();
        let actor = Actor {
            name: me.clone(),
            is_lead: me == LEAD_NAME,
        };
        let id = input.task_id.trim().trim_start_matches('#').to_string();
        let completing = matches!(input.status, Some(StatusInput::Completed));
        let patch = TaskPatch {
            subject: input.subject,
            description: input.description,
            active_form: input.active_form,
            status: input.status.map(|s| match s {
                StatusInput::Pending => PatchStatus::Pending,
                StatusInput::InProgress => PatchStatus::InProgress,
                StatusInput::Completed => PatchStatus::Completed,
                StatusInput::Deleted => PatchStatus::Deleted,
            }),
            owner: input
                .owner
                .map(|o| Some(o.trim().to_string()).filter(|o| !o.is_empty())),
            add_blocks: input.add_blocks.unwrap_or_default(),
            add_blocked_by: input.add_blocked_by.unwrap_or_default(),
            metadata: input.metadata,
        };
        let updated = team.tasks.update(&id, patch, &actor).map_err(store_error)?;
        match &updated.task {
            Some(task) => changed(&team, task, "updated").await,
            None => {
                team.emit(TeamEvent::TaskListUpdated {
                    team: team.name.clone(),
                    task_id: id.clone(),
                    subject: String::new(),
                    action: "deleted".into(),
                    status: "deleted".into(),
                    owner: None,
                })
                .await
            }
        }
        if let (Some(owner), Some(task)) = (&updated.new_owner, &updated.task) {
            let frame = Frame::TaskAssignment(TaskAssignment {
                task_id: task.id.clone(),
                subject: task.subject.clone(),
                description: task.description.clone(),
                assigned_by: me.clone(),
                timestamp: clock::now_iso(),
            });
            let mail = MailEntry::new(&me, frame.to_text(), clock::now_iso(), clock::new_msg_id());
            // Claiming a task yourself needs no letter to yourself.
            if owner != &me {
                if let Err(err) = team.post(owner, &mail) {
                    tracing::warn!(
                        "task #{} assigned, but {owner:?} was not told: {err}",
                        task.id
                    );
                }
            }
        }
        let mut text = if updated.task.is_none() {
            format!("Updated task #{id} deleted")
        } else {
            format!("Updated task #{id} {}", updated.changed.join(", "))
        };
        if completing {
            text.push_str(
                "\n\nTask completed. Call TaskList now to find your next available task or see \
                 if your work unblocked others.",
            );
        }
        Ok(ToolOutput::text(text))
    }
}

async fn changed(team: &crate::teams::Team, task: &Task, action: &str) {
    team.emit(TeamEvent::TaskListUpdated {
        team: team.name.clone(),
        task_id: task.id.clone(),
        subject: task.subject.clone(),
        action: action.into(),
        status: task.status.as_str().to_string(),
        owner: task.owner.clone(),
    })
    .await;
}

fn hashes(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}
