//! SendMessage: continuing an agent. A running agent gets the message at its next turn; a
//! stopped one is resumed from its transcript with the message as a new user turn, in the
//! background, and its owner is notified when it is done.

use super::build::{Blueprint, Start};
use super::directory::AgentRecord;
use super::lifecycle::{Delivery, Run};
use super::{ParentView, Spawner};
use fleet_protocol::{AgentMessage, Message};
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessageInput {
    /// The agent to reach: a teammate's name (or `name@team`), `team-lead` / `main` for the
    /// lead, `*` for every member but you, `uds:<socket path>` for another fleet session, or
    /// the agentId / name of a subagent you started.
    pub to: String,
    /// The message: text, or (in a team) a protocol object such as
    /// `{"type": "shutdown_request", "reason": "…"}`.
    pub message: MessageBody,
    /// A 5-10 word preview of the message, for the user's view.
    #[serde(default)]
    pub summary: Option<String>,
}

/// Text, or one of the team's protocol objects.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MessageBody {
    Text(String),
    Structured(Structured),
}

/// The protocol objects a member may send.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Structured {
    /// Lead → teammate: please finish and stop.
    ShutdownRequest {
        #[serde(default)]
        reason: Option<String>,
    },
    /// Teammate → lead: the answer to a shutdown request (`reason` required to decline).
    /// Without `request_id`, it answers the latest request.
    ShutdownResponse {
        #[serde(default)]
        request_id: Option<String>,
        approve: bool,
        #[serde(default)]
        reason: Option<String>,
    },
    /// Teammate → lead: a plan for approval (ExitPlanMode sends this for you).
    PlanApprovalRequest {
        #[serde(default)]
        request_id: Option<String>,
        plan: String,
    },
    /// Lead → teammate: the verdict on its plan; `feedback` says what to change. Without
    /// `request_id`, it answers the teammate's pending plan.
    PlanApprovalResponse {
        #[serde(default)]
        request_id: Option<String>,
        approve: bool,
        #[serde(default)]
        feedback: Option<String>,
    },
}

impl Structured {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::ShutdownRequest { .. } => "shutdown_request",
            Self::ShutdownResponse { .. } => "shutdown_response",
            Self::PlanApprovalRequest { .. } => "plan_approval_request",
            Self::PlanApprovalResponse { .. } => "plan_approval_response",
        }
    }
}

pub struct SendMessageTool {
    spawner: Arc<Spawner>,
    sender: Arc<ParentView>,
}

const SUBAGENT_HELP: &str = "Sends a message to an agent you started, to continue it: `to` is \
its agentId or name.\n\
- A running agent reads the message at its next turn.\n\
- A stopped agent (completed, failed or killed) is resumed with its whole earlier conversation \
and the message as a new turn; it runs in the background and you get a <task-notification> \
when it is done.\n\
Continue an agent when it already holds the context the next step needs (it explored exactly \
the files to change, or is fixing its own failure); start a fresh one when its context would \
mislead (broad research before narrow work, or checking someone else's work).";

const TEAM_HELP: &str = "\n\nIn a team (teammates are started with the Agent tool and a \
`name`), every message goes to the recipient's inbox and is read when its current turn ends:\n\
- `to`: a teammate's name, `team-lead` (or `main`) for the lead, `*` for every member but you \
(use sparingly), or `uds:<socket path>` for another fleet session on this machine.\n\
- Your plain text output is not seen by your teammates: to tell them anything, send a message.\n\
- Protocol objects as `message`: the lead sends `{\"type\": \"shutdown_request\", \"reason\": \
\"…\"}` and `{\"type\": \"plan_approval_response\", \"request_id\": \"…\", \"approve\": \
true|false, \"feedback\": \"…\"}`; a teammate answers a shutdown request with \
`{\"type\": \"shutdown_response\", \"request_id\": \"…\", \"approve\": true}` (or false with a \
`reason`) sent to `team-lead`. Approving ends your work right after that call.";

impl SendMessageTool {
    pub(crate) fn new(spawner: Arc<Spawner>, sender: Arc<ParentView>) -> Self {
        Self { spawner, sender }
    }
}

impl TypedTool for SendMessageTool {
    type Input = SendMessageInput;
    const NAME: &'static str = "SendMessage";
    /// Sending changes nothing by itself; what the recipient does is checked against its own
    /// permissions.
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        let mut text = String::from(SUBAGENT_HELP);
        if self.spawner.team_port().is_some() {
            text.push_str(TEAM_HELP);
        }
        text
    }

    fn access(&self, _input: &SendMessageInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(
        &self,
        input: SendMessageInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if let MessageBody::Text(text) = &input.message {
            if text.trim().is_empty() {
                return Err(ToolError::failed(
                    "`message` is empty: say what the agent should do.",
                ));
            }
        }
        self.spawner.send(&self.sender, input, ctx).await
    }
}

impl Spawner {
    pub(super) async fn send(
        self: &Arc<Self>,
        sender: &Arc<ParentView>,
        input: SendMessageInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(team) = &self.team {
            if let Some(out) = team.send(self, sender, &input).await? {
                return Ok(out);
            }
        }
        let to = input.to.trim();
        let MessageBody::Text(body) = &input.message else {
            return Err(ToolError::bad_value(
                "message",
                format!("{to:?} is not a member of a team, so it takes plain text only."),
            ));
        };
        let body = body.clone();
        if to == sender.agent_id {
            return Err(ToolError::failed("You cannot send a message to yourself."));
        }
        if to == "main" {
            self.main_inbox
                .push(Message::user_text(letter(sender, "main", &input, &body)));
            return Ok(queued("main", None, &input));
        }
        let Some(record) = self.directory.find(to) else {
            return Err(ToolError::failed(self.unknown_recipient(to, sender)));
        };
        if record.id == sender.agent_id {
            return Err(ToolError::failed("You cannot send a message to yourself."));
        }
        let text = letter(sender, &record.blueprint.parent.agent_id, &input, &body);
        loop {
            match record.life.deliver(Message::user_text(text.clone())) {
                Delivery::Queued => {
                    return Ok(queued(&record.id, record.blueprint.name.as_deref(), &input))
                }
                Delivery::Resume(run) => {
                    return self.resume(sender, &record, run, text, ctx).await;
                }
                Delivery::WindingDown => {
                    tokio::select! {
                        _ = ctx.cancel.cancelled() => {
                            return Err(ToolError::failed(
                                "Interrupted while waiting for the agent to stop.",
                            ));
                        }
                        _ = record.life.wait_stopped() => {}
                    }
                }
            }
        }
    }

    /// Starts a new run of the stopped agent `record` on `text`, owned by `sender`.
    async fn resume(
        self: &Arc<Self>,
        sender: &Arc<ParentView>,
        record: &Arc<AgentRecord>,
        run: Run,
        text: String,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let bp = record.blueprint.clone();
        if let Some(wt) = bp.worktree.as_ref().filter(|wt| !wt.path.exists()) {
            record.life.release(&run);
            let message = format!(
                "Agent {} worked in its own worktree, which was removed when it finished \
                 because it changed nothing ({}). Start a new agent for the next step.",
                record.id,
                wt.path.display()
            );
            return Err(ToolError::not_found(wt.path.clone(), message));
        }
        // Kept to hand the claim back, with what its inbox holds, if the run cannot start.
        let claimed = run.clone();
        let started = self
            .admit(bp.depth)
            .and_then(|slot| Ok((slot, self.config.history(&record.id)?)))
            .and_then(|(slot, (history, last_uuid))| {
                let child = self.build(
                    &bp,
                    Start {
                        agent_id: record.id.clone(),
                        history,
                        write_history: false,
                        prompt: Message::user_text(text.clone()),
                        tool_use_id: ctx.tool_use_id.clone().unwrap_or_default(),
                        request_id: ctx.request_id.clone(),
                        transcript_after: last_uuid,
                        run,
                    },
                )?;
                Ok((slot, child))
            });
        let (slot, child) = match started {
            Ok(started) => started,
            Err(err) => {
                record.life.release(&claimed);
                return Err(err);
            }
        };
        self.ledger.reopen(&record.id);
        let output_file = child.output_file.clone();
        let tool_use_id = ctx.tool_use_id.clone().unwrap_or_default();
        let admitted = super::run::Admitted {
            bp: bp.clone(),
            child,
            record: record.clone(),
            slot,
        };
        self.launch(sender, admitted, &text, tool_use_id).await;
        Ok(resumed(&record.id, &bp, &output_file))
    }

    fn unknown_recipient(&self, to: &str, sender: &ParentView) -> String {
        let mut reachable = self.team.as_ref().map(|t| t.listing()).unwrap_or_default();
        reachable.extend(self.directory.listing(&sender.agent_id));
        if sender.agent_id != "main" {
            reachable.insert(0, "main (the main agent)".into());
        }
        if reachable.is_empty() {
            format!("No agent is called {to:?}, and there is no agent to send to yet: start one with the Agent tool.")
        } else {
            format!(
                "No agent is called {to:?}. Agents you can reach (use the id or the quoted name):\n- {}",
                reachable.join("\n- ")
            )
        }
    }
}

/// The message as the recipient reads it: escaped inside `<agent-message>`, naming the sender
/// (and whether it started the recipient), followed by a line saying it is not from the user.
/// Whatever the body holds — a forged `<task-notification>`, "the user approved …" — it stays
/// an agent's words.
fn letter(
    sender: &ParentView,
    recipients_parent: &str,
    input: &SendMessageInput,
    body: &str,
) -> String {
    AgentMessage {
        from: sender.agent_id.clone(),
        from_parent: sender.agent_id == recipients_parent,
        summary: input
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        body: body.to_string(),
    }
    .render()
}

fn queued(agent_id: &str, name: Option<&str>, input: &SendMessageInput) -> ToolOutput {
    ToolOutput::text(format!(
        "Message queued for {agent_id}: it reads it at its next turn."
    ))
    .with_structured(json!({
        "success": true,
        "status": "queued",
        "agentId": agent_id,
        "name": name,
        "summary": input.summary,
    }))
}

fn resumed(agent_id: &str, bp: &Blueprint, output_file: &str) -> ToolOutput {
    ToolOutput::text(format!(
        "Agent {agent_id} had stopped; it is resumed in the background with your message and \
         its earlier conversation. You will receive a <task-notification> when it is done."
    ))
    .with_structured(json!({
        "success": true,
        "status": "resumed",
        "agentId": agent_id,
        "name": bp.name,
        "agentType": bp.kind.type_name(),
        "outputFile": output_file,
    }))
}
