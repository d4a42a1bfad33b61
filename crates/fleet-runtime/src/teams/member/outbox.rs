//! SendMessage from a pane teammate's own agent, and the permission questions it hands to
//! its lead.

use super::{lock, Membership};
use crate::subagent::{MessageBody, SendMessageInput, Structured};
use crate::teams::send::{self, Sender};
use crate::teams::{clock, RosterError, LEAD_NAME};
use fleet_protocol::team::frames::{
    permission_request_id, Frame, PermissionRequest, PermissionResponse, ShutdownApproved,
    ShutdownRejected,
};
use fleet_protocol::MailEntry;
use fleet_store::team::MemberStatus;
use fleet_tools::{ToolError, ToolOutput};
use serde_json::json;
use std::sync::atomic::Ordering;
use tokio::sync::oneshot;

impl Membership {
    /// Hands a permission question to the lead (and its person); the answer comes back by
    /// mail, signed.
    pub fn ask_lead(
        &self,
        tool: &str,
        input: &serde_json::Value,
        tool_use_id: &str,
        description: &str,
        suggested_rule: Option<String>,
    ) -> Result<oneshot::Receiver<PermissionResponse>, RosterError> {
        let request_id = permission_request_id(clock::now_ms(), &self.identity.name);
        let request_id = format!("{request_id}-{}", &clock::new_msg_id()[..8]);
        let frame = Frame::PermissionRequest(PermissionRequest {
            request_id: request_id.clone(),
            from: self.identity.name.clone(),
            tool_name: tool.to_string(),
            tool_use_id: tool_use_id.to_string(),
            description: description.to_string(),
            input: input.clone(),
            suggested_rule,
            timestamp: clock::now_iso(),
        });
        let (tx, rx) = oneshot::channel();
        lock(&self.asked).insert(request_id.clone(), tx);
        if let Err(err) = self
            .team
            .post(LEAD_NAME, &self.entry(frame.to_text(), None))
        {
            lock(&self.asked).remove(&request_id);
            return Err(err);
        }
        Ok(rx)
    }

    fn sender(&self) -> Sender {
        Sender {
            name: self.identity.name.clone(),
            color: Some(self.identity.color.clone()),
            mate: None,
        }
    }

    pub(super) fn entry(&self, text: String, summary: Option<String>) -> MailEntry {
        send::entry(&self.sender(), text, summary)
    }

    /// SendMessage from this teammate's main agent; `Ok(None)` when `to` is nobody in the
    /// team (the caller then says so).
    pub(crate) fn send(&self, input: &SendMessageInput) -> Result<Option<ToolOutput>, ToolError> {
        let to = input.to.trim();
        let me = &self.identity.name;
        if to == "*" {
            return Err(ToolError::failed(
                "broadcast (to: \"*\") is not available to a teammate — send a message per \
                 recipient",
            ));
        }
        let lead_id = self.team.lead_agent_id();
        if to == LEAD_NAME || to == lead_id || to == "main" {
            return self.to_lead(input).map(Some);
        }
        let to = to
            .strip_suffix(&format!("@{}", self.team.name))
            .unwrap_or(to);
        if to == me.as_str() {
            return Err(ToolError::failed("You cannot send a message to yourself."));
        }
        let config = self.team.config()?;
        let Some(peer) = config.members.iter().find(|m| m.name == to) else {
            return Ok(None);
        };
        if peer.status == MemberStatus::Stopped {
            return Ok(Some(not_reachable(to)));
        }
        let text = send::plain_text(input)?.to_string();
        let summary = send::summary_of(input, &text);
        let mail = self.entry(text.clone(), summary.clone());
        send::deliver(&self.team, to, &mail)?;
        *lock(&self.peer_summary) = summary.as_ref().map(|s| format!("[to {to}] {s}"));
        let sender = self.sender();
        Ok(Some(send::sent(
            format!("Message sent to {to}'s inbox"),
            &mail.msg_id,
            send::routing(&sender, to, peer.color.as_deref(), &summary, &text),
        )))
    }

    fn to_lead(&self, input: &SendMessageInput) -> Result<ToolOutput, ToolError> {
        let sender = self.sender();
        match &input.message {
            MessageBody::Text(_) => {
                let text = send::plain_text(input)?.to_string();
                let summary = send::summary_of(input, &text);
                let mail = self.entry(text.clone(), summary.clone());
                send::deliver(&self.team, LEAD_NAME, &mail)?;
                Ok(send::sent(
                    format!("Message sent to {LEAD_NAME}'s inbox"),
                    &mail.msg_id,
                    send::routing(&sender, LEAD_NAME, Some("red"), &summary, &text),
                ))
            }
            MessageBody::Structured(Structured::ShutdownResponse {
                request_id,
                approve,
                reason,
            }) => {
                let shown = lock(&self.shutdown_request).clone();
                let request_id = request_id.clone().or(shown).ok_or_else(|| {
                    ToolError::failed(
                        "You have not been asked to shut down: there is no shutdown request to \
                         answer.",
                    )
                })?;
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let me = &self.identity.name;
                let (frame, message) = if *approve {
                    if reason.is_some() {
                        return Err(ToolError::failed(
                            "An approval carries no `reason`; leave it out, or set `approve: \
                             false` to decline with your reason.",
                        ));
                    }
                    let frame = Frame::ShutdownApproved(ShutdownApproved {
                        request_id: request_id.clone(),
                        from: me.clone(),
                        timestamp: clock::now_iso(),
                        pane_id: self.pane_id.clone(),
                        backend_type: self.backend.clone(),
                    });
                    let message = format!(
                        "Shutdown approved. Sent confirmation to {LEAD_NAME}. Agent {me} is now \
                         exiting."
                    );
                    (frame, message)
                } else {
                    let reason = reason.ok_or_else(|| {
                        ToolError::bad_value(
                            "reason",
                            "Declining a shutdown needs a `reason`: say why you keep working.",
                        )
                    })?;
                    let frame = Frame::ShutdownRejected(ShutdownRejected {
                        request_id: request_id.clone(),
                        from: me.clone(),
                        reason: reason.to_string(),
                        timestamp: clock::now_iso(),
                    });
                    (
                        frame,
                        format!("Shutdown rejected. Reason: {reason:?}. Continuing to work."),
                    )
                };
                send::deliver(&self.team, LEAD_NAME, &self.entry(frame.to_text(), None))?;
                if *approve {
                    self.exit.store(true, Ordering::Release);
                }
                let value = json!({"success": true, "message": message, "request_id": request_id});
                Ok(ToolOutput::text(value.to_string()).with_structured(value))
            }
            MessageBody::Structured(other) => Err(ToolError::bad_value(
                "message",
                format!(
                    "A teammate in its own pane does not send a {}.",
                    other.type_name()
                ),
            )),
        }
    }
}

fn not_reachable(to: &str) -> ToolOutput {
    let value = json!({
        "success": false,
        "message": format!("No agent named '{to}' is reachable.\nUse ListAgents to see everyone you can message."),
    });
    ToolOutput::text(value.to_string()).with_structured(value)
}
