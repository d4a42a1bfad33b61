//! SendMessage inside a team: who the sender is, where `to` leads (a member by name or
//! `name@team`, the lead as `team-lead` or `main`, `*` for everyone, `uds:<socket>` for another
//! session), and the structured frames (shutdown and plan approval) with their rules.
//!
//! Mail is written into the recipient's durable inbox before success is reported. A message to
//! a member that has stopped brings it back from its transcript.

use super::mate::{Mate, MateState};
use super::roster::{Team, Teams};
use super::{clock, uds, LEAD_NAME};
use crate::context::AgentContext;
use crate::subagent::{MessageBody, ParentView, SendMessageInput, Spawner, Structured};
use fleet_protocol::team::frames::{
    frame_type, plan_request_id, shutdown_request_id, Frame, PlanApprovalRequest,
    PlanApprovalResponse, ShutdownApproved, ShutdownRejected, ShutdownRequest,
};
use fleet_protocol::{BackendType, MailEntry, PermissionMode};
use fleet_tools::{ToolError, ToolOutput};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Who is sending, as the team knows it.
pub(super) struct Sender {
    pub(super) name: String,
    pub(super) color: Option<String>,
    /// The sending teammate, when one is.
    pub(super) mate: Option<Arc<Mate>>,
}

impl Sender {
    fn is_lead(&self) -> bool {
        self.name == LEAD_NAME
    }
}

impl Teams {
    /// Handles `input` when it is team mail; `Ok(None)` when `to` is no team address (the
    /// caller then looks among subagents). `spawner` brings a stopped member back.
    pub(crate) async fn send_in_team(
        &self,
        spawner: &Arc<Spawner>,
        parent: &ParentView,
        input: &SendMessageInput,
    ) -> Result<Option<ToolOutput>, ToolError> {
        let to = input.to.trim();
        if let Some(target) = to.strip_prefix("uds:") {
            let text = plain_text(input)?;
            let teams = self;
            let path = uds::resolve_target(&teams.settings.home, target)?;
            let from = self.sender_label(parent);
            let reply_to = teams
                .settings
                .listen
                .then(|| uds::socket_path(&teams.settings.home, &teams.settings.session_id))
                .filter(|p| p.exists())
                .map(|p| p.display().to_string());
            return uds::send(&path, &from, text, input.summary.as_deref(), reply_to)
                .await
                .map(Some)
                .map_err(ToolError::from);
        }
        // A pane teammate's own agent: its team is led from another process.
        if let Some(member) = self.membership() {
            if parent.agent_id == "main" && AgentContext::current().is_none() {
                return member.send(input);
            }
        }
        let Some(team) = self.current() else {
            if to == "*" {
                return Err(ToolError::failed(
                    "There is no team to broadcast to: start teammates with the Agent tool and \
                     a `name` first.",
                ));
            }
            return Ok(None);
        };
        let Some(sender) = sender(&team, parent) else {
            return Ok(None);
        };
        if to == "*" {
            return broadcast(&team, &sender, input).map(Some);
        }
        let lead_names = [LEAD_NAME.to_string(), team.lead_agent_id()];
        if lead_names.iter().any(|n| n == to) || (to == "main" && !sender.is_lead()) {
            if sender.is_lead() {
                return Err(ToolError::failed("You cannot send a message to yourself."));
            }
            return to_lead(&team, &sender, input).map(Some);
        }
        let Some(mate) = team.mate(to) else {
            return Ok(None);
        };
        if sender.mate.as_ref().is_some_and(|m| m.name == mate.name) {
            return Err(ToolError::failed("You cannot send a message to yourself."));
        }
        let out = to_mate(&team, &sender, &mate, input)?;
        if mate.state() == MateState::Stopped {
            let revived = self.revive(spawner, &team, &mate, None).await?;
            if revived {
                return Ok(Some(
                    ToolOutput::text(format!(
                        "Teammate {name:?} was not running; it was brought back with its earlier \
                     conversation, and reads your message as its next prompt.",
                        name = mate.name
                    ))
                    .with_structured(json!({
                        "success": true,
                        "status": "resumed",
                        "target": format!("@{}", mate.name),
                        "agent_id": mate.agent_id,
                    })),
                ));
            }
        }
        Ok(Some(out))
    }

    /// The members a sender can reach, for an unknown recipient's error.
    pub(crate) fn team_listing(&self) -> Vec<String> {
        let Some(team) = self.current() else {
            return Vec::new();
        };
        let mut lines = vec![format!("{LEAD_NAME} (the lead; also \"main\")")];
        lines.extend(team.mates().iter().map(|m| {
            let state = match m.state() {
                MateState::Busy => "running",
                MateState::Idle => "idle",
                MateState::Stopped => "stopped",
            };
            format!("{:?} ({}, {state})", m.name, m.agent_type)
        }));
        lines
    }

    fn sender_label(&self, parent: &ParentView) -> String {
        match AgentContext::current()
            .as_deref()
            .and_then(|c| c.teammate())
        {
            Some(t) => t.agent_id.clone(),
            None if parent.agent_id == "main" => match self.current() {
                Some(team) => team.lead_agent_id(),
                None => {
                    let sid8: String = self.settings.session_id.chars().take(8).collect();
                    format!("main@session-{sid8}")
                }
            },
            None => parent.agent_id.clone(),
        }
    }
}

/// The sender as a member of `team`; `None` for an agent outside it (a plain subagent).
fn sender(team: &Team, parent: &ParentView) -> Option<Sender> {
    if let Some(ctx) = AgentContext::current() {
        if let Some(t) = ctx.teammate() {
            let mate = team.mate(&t.agent_name)?;
            return Some(Sender {
                name: mate.name.clone(),
                color: Some(mate.color.clone()),
                mate: Some(mate),
            });
        }
        return None;
    }
    (parent.agent_id == "main").then(|| Sender {
        name: LEAD_NAME.into(),
        color: None,
        mate: None,
    })
}

pub(super) fn plain_text(input: &SendMessageInput) -> Result<&str, ToolError> {
    match &input.message {
        MessageBody::Text(text) => {
            if let Some(kind) = frame_type(text) {
                return Err(ToolError::Failed(format!(
                    "`message` is a string that reads as a {kind} frame; protocol frames are \
                     sent as a JSON object (`\"message\": {{\"type\": \"{kind}\", …}}`), and \
                     only some of them by you."
                )));
            }
            Ok(text)
        }
        MessageBody::Structured(_) => Err(ToolError::bad_value(
            "message",
            "This recipient takes plain text only; send the message as a string.",
        )),
    }
}

pub(super) fn entry(sender: &Sender, text: String, summary: Option<String>) -> MailEntry {
    MailEntry::new(&sender.name, text, clock::now_iso(), clock::new_msg_id())
        .with_summary(summary)
        .with_color(sender.color.clone())
}

pub(super) fn summary_of(input: &SendMessageInput, text: &str) -> Option<String> {
    input
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| {
            let first: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            (!first.is_empty()).then(|| preview(&first, 50))
        })
}

fn preview(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(chars).collect();
    format!("{cut}…")
}

pub(super) fn routing(
    sender: &Sender,
    target: &str,
    target_color: Option<&str>,
    summary: &Option<String>,
    text: &str,
) -> Value {
    let mut routing = json!({"sender": sender.name});
    if let Some(map) = routing.as_object_mut() {
        if let Some(color) = &sender.color {
            map.insert("senderColor".into(), json!(color));
        }
        map.insert("target".into(), json!(format!("@{target}")));
        if let Some(color) = target_color {
            map.insert("targetColor".into(), json!(color));
        }
        map.insert("summary".into(), json!(summary));
        map.insert("content".into(), json!(preview(text, 50)));
    }
    routing
}

pub(super) fn sent(message: String, msg_id: &str, routing: Value) -> ToolOutput {
    let value = json!({
        "success": true,
        "message": message,
        "msg_id": msg_id,
        "routing": routing,
    });
    ToolOutput::text(value.to_string()).with_structured(value)
}

pub(super) fn deliver(team: &Team, to: &str, entry: &MailEntry) -> Result<(), ToolError> {
    team.post(to, entry).map_err(ToolError::from)
}

fn to_mate(
    team: &Team,
    sender: &Sender,
    mate: &Mate,
    input: &SendMessageInput,
) -> Result<ToolOutput, ToolError> {
    match &input.message {
        MessageBody::Text(_) => {
            let text = plain_text(input)?.to_string();
            let summary = summary_of(input, &text);
            let mail = entry(sender, text.clone(), summary.clone());
            deliver(team, &mate.name, &mail)?;
            if let Some(me) = &sender.mate {
                if let Some(summary) = &summary {
                    *me.peer_summary
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Some(format!("[to {}] {summary}", mate.name));
                }
            }
            Ok(sent(
                format!("Message sent to {}'s inbox", mate.name),
                &mail.msg_id,
                routing(sender, &mate.name, Some(&mate.color), &summary, &text),
            ))
        }
        MessageBody::Structured(Structured::ShutdownRequest { reason }) => {
            lead_only(sender, "shutdown_request")?;
            let request_id = shutdown_request_id(clock::now_ms(), &mate.name);
            let frame = Frame::ShutdownRequest(ShutdownRequest {
                request_id: request_id.clone(),
                from: sender.name.clone(),
                reason: reason.clone(),
                timestamp: clock::now_iso(),
            });
            deliver(team, &mate.name, &entry(sender, frame.to_text(), None))?;
            let value = json!({
                "success": true,
                "message": format!("Shutdown request sent to {}. Request ID: {request_id}", mate.name),
                "request_id": request_id,
                "target": mate.name,
            });
            Ok(ToolOutput::text(value.to_string()).with_structured(value))
        }
        MessageBody::Structured(Structured::PlanApprovalResponse {
            request_id,
            approve,
            feedback,
        }) => {
            lead_only(sender, "plan_approval_response")?;
            let pending = mate
                .plan
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pending
                .clone();
            let request_id = match (request_id, pending) {
                (Some(id), _) => id.clone(),
                (None, Some(pending)) => pending,
                (None, None) => {
                    return Err(ToolError::Failed(format!(
                        "{} has no plan waiting for approval; give the `request_id` of the plan \
                 you mean.",
                        mate.name
                    )))
                }
            };
            let frame = Frame::PlanApprovalResponse(PlanApprovalResponse {
                request_id: request_id.clone(),
                approved: *approve,
                feedback: feedback.clone(),
                timestamp: clock::now_iso(),
                permission_mode: approve.then_some(PermissionMode::Default),
                plan_digest: None,
            });
            deliver(team, &mate.name, &entry(sender, frame.to_text(), None))?;
            let message = if *approve {
                format!("Plan approved for {}.", mate.name)
            } else {
                format!(
                    "Plan rejected for {} with feedback: {:?}",
                    mate.name,
                    feedback.as_deref().unwrap_or("Please revise your plan")
                )
            };
            let value = json!({"success": true, "message": message, "request_id": request_id});
            Ok(ToolOutput::text(value.to_string()).with_structured(value))
        }
        MessageBody::Structured(other) => Err(ToolError::bad_value(
            "message",
            format!(
                "A {} goes to the team lead (`to: \"{LEAD_NAME}\"`), not to a teammate.",
                other.type_name()
            ),
        )),
    }
}

fn to_lead(
    team: &Team,
    sender: &Sender,
    input: &SendMessageInput,
) -> Result<ToolOutput, ToolError> {
    let Some(me) = &sender.mate else {
        return Err(ToolError::failed(
            "Only teammates write to the lead's inbox.",
        ));
    };
    match &input.message {
        MessageBody::Text(_) => {
            let text = plain_text(input)?.to_string();
            let summary = summary_of(input, &text);
            let mail = entry(sender, text.clone(), summary.clone());
            deliver(team, LEAD_NAME, &mail)?;
            Ok(sent(
                format!("Message sent to {LEAD_NAME}'s inbox"),
                &mail.msg_id,
                routing(sender, LEAD_NAME, Some("red"), &summary, &text),
            ))
        }
        MessageBody::Structured(Structured::ShutdownResponse {
            request_id,
            approve,
            reason,
        }) => {
            let shown = me
                .shutdown_request
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            let request_id =
                match (request_id, shown) {
                    (Some(id), _) => id.clone(),
                    (None, Some(shown)) => shown,
                    (None, None) => return Err(ToolError::failed(
                        "You have not been asked to shut down: there is no shutdown request to \
                 answer.",
                    )),
                };
            if *approve {
                if reason.as_deref().is_some_and(|r| !r.trim().is_empty()) {
                    return Err(ToolError::failed(
                        "An approval carries no `reason`; leave it out, or set `approve: false` \
                         to decline with your reason.",
                    ));
                }
                let frame = Frame::ShutdownApproved(ShutdownApproved {
                    request_id: request_id.clone(),
                    from: me.name.clone(),
                    timestamp: clock::now_iso(),
                    pane_id: "in-process".into(),
                    backend_type: BackendType::InProcess,
                });
                deliver(team, LEAD_NAME, &entry(sender, frame.to_text(), None))?;
                me.exit.store(true, Ordering::Release);
                let value = json!({
                    "success": true,
                    "message": format!("Shutdown approved. Sent confirmation to {LEAD_NAME}. Agent {} is now exiting.", me.name),
                    "request_id": request_id,
                });
                return Ok(ToolOutput::text(value.to_string()).with_structured(value));
            }
            let reason = reason
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .ok_or_else(|| {
                    ToolError::bad_value(
                        "reason",
                        "Declining a shutdown needs a `reason`: say why you keep working.",
                    )
                })?;
            let frame = Frame::ShutdownRejected(ShutdownRejected {
                request_id: request_id.clone(),
                from: me.name.clone(),
                reason: reason.to_string(),
                timestamp: clock::now_iso(),
            });
            deliver(team, LEAD_NAME, &entry(sender, frame.to_text(), None))?;
            let value = json!({
                "success": true,
                "message": format!("Shutdown rejected. Reason: {reason:?}. Continuing to work."),
                "request_id": request_id,
            });
            Ok(ToolOutput::text(value.to_string()).with_structured(value))
        }
        MessageBody::Structured(Structured::PlanApprovalRequest { request_id, plan }) => {
            let request_id = request_id
                .clone()
                .unwrap_or_else(|| plan_request_id(clock::now_ms(), &me.name, &team.name));
            submit_plan(team, me, &request_id, plan, "")?;
            let value = json!({
                "success": true,
                "message": format!("Plan submitted to {LEAD_NAME} for approval. Request ID: {request_id}"),
                "request_id": request_id,
            });
            Ok(ToolOutput::text(value.to_string()).with_structured(value))
        }
        MessageBody::Structured(other) => Err(ToolError::Failed(format!(
            "Only the lead sends a {}.",
            other.type_name()
        ))),
    }
}

/// Writes a plan request to the lead and remembers it as the one waiting for a verdict.
pub(crate) fn submit_plan(
    team: &Team,
    mate: &Mate,
    request_id: &str,
    plan: &str,
    plan_file: &str,
) -> Result<(), ToolError> {
    let frame = Frame::PlanApprovalRequest(PlanApprovalRequest {
        from: mate.name.clone(),
        timestamp: clock::now_iso(),
        plan_file_path: plan_file.to_string(),
        plan_content: plan.to_string(),
        request_id: request_id.to_string(),
    });
    let mail = MailEntry::new(
        &mate.name,
        frame.to_text(),
        clock::now_iso(),
        clock::new_msg_id(),
    );
    deliver(team, LEAD_NAME, &mail)?;
    mate.plan
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .pending = Some(request_id.to_string());
    Ok(())
}

fn lead_only(sender: &Sender, kind: &str) -> Result<(), ToolError> {
    if sender.is_lead() {
        Ok(())
    } else {
        Err(ToolError::Failed(format!(
            "Only the team lead sends a {kind}."
        )))
    }
}

fn broadcast(
    team: &Team,
    sender: &Sender,
    input: &SendMessageInput,
) -> Result<ToolOutput, ToolError> {
    let text = plain_text(input)?.to_string();
    let summary = summary_of(input, &text);
    let mut recipients: Vec<String> = team
        .mates()
        .iter()
        .filter(|m| {
            m.state() != MateState::Stopped
                && Some(&m.name) != sender.mate.as_ref().map(|s| &s.name)
        })
        .map(|m| m.name.clone())
        .collect();
    if !sender.is_lead() {
        recipients.insert(0, LEAD_NAME.to_string());
    }
    if recipients.is_empty() {
        return Err(ToolError::failed(
            "Nobody else is in the team to receive a broadcast.",
        ));
    }
    let mut ids = Vec::new();
    for to in &recipients {
        let mail = entry(sender, text.clone(), summary.clone());
        deliver(team, to, &mail)?;
        ids.push(mail.msg_id);
    }
    let value = json!({
        "success": true,
        "message": format!("Message broadcast to {} member(s): {}", recipients.len(), recipients.join(", ")),
        "recipients": recipients,
        "msg_ids": ids,
    });
    Ok(ToolOutput::text(value.to_string()).with_structured(value))
}
