//! What the lead's poller does itself with pane teammates' frames: their state follows their
//! idle notifications and shutdown answers (their turns run in another process), and a
//! permission question they hand over is put to the lead's person, the answer written back
//! into their inbox, signed.

use super::mate::MateState;
use super::roster::Team;
use super::{clock, LEAD_NAME};
use crate::approval::{Approval, ApprovalRequest};
use crate::subagent::Spawner;
use fleet_protocol::team::frames::{Frame, PermissionRequest, PermissionResponse};
use fleet_protocol::{MailEntry, TeamEvent};
use fleet_tools::permissions::{Behavior, Decision, DecisionReason};
use fleet_tools::Access;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

/// Acts on the pane teammates' frames in `entries`, and returns what the lead's model reads:
/// everything but the permission questions, which are the person's to answer.
pub(super) fn take_frames(
    spawner: &Weak<Spawner>,
    team: &Arc<Team>,
    entries: Vec<MailEntry>,
    consumed: &mut HashSet<String>,
) -> Vec<MailEntry> {
    let mut keep = Vec::with_capacity(entries.len());
    for entry in entries {
        let mate = team.mate(&entry.from).filter(|m| m.pane.is_some());
        let Some(mate) = mate else {
            keep.push(entry);
            continue;
        };
        match Frame::parse(&entry.text) {
            Some(Frame::IdleNotification(idle)) => {
                if mate.state() == MateState::Busy {
                    mate.set_state(team, MateState::Idle);
                }
                team.emit_sync(TeamEvent::TeammateIdle {
                    team: team.name.clone(),
                    name: mate.name.clone(),
                    agent_id: mate.agent_id.clone(),
                    summary: idle.summary,
                });
                keep.push(entry);
            }
            Some(Frame::ShutdownApproved(_)) => {
                // Its process ends by itself; the watcher then reports it as agreed.
                mate.exit.store(true, Ordering::Release);
                keep.push(entry);
            }
            Some(Frame::PermissionRequest(request)) => {
                consumed.insert(entry.msg_id.clone());
                if request.from != mate.name {
                    tracing::warn!(
                        "a permission question in {}'s name from {}",
                        request.from,
                        mate.name
                    );
                    continue;
                }
                if let Some(spawner) = spawner.upgrade() {
                    tokio::spawn(answer(
                        spawner,
                        team.clone(),
                        mate.agent_id.clone(),
                        request,
                    ));
                }
            }
            _ => keep.push(entry),
        }
    }
    keep
}

/// Puts a pane teammate's permission question to the lead's person and mails the answer.
async fn answer(
    spawner: Arc<Spawner>,
    team: Arc<Team>,
    agent_id: String,
    request: PermissionRequest,
) {
    let view = spawner.main_view();
    let approval = match view.as_ref().and_then(|v| v.approver.clone()) {
        Some(approver) => {
            let mode = view
                .as_ref()
                .map(|v| v.permissions.mode())
                .unwrap_or_default();
            let decision = Decision {
                behavior: Behavior::Ask,
                reason: DecisionReason::Mode(mode),
                tool: request.tool_name.clone(),
                access: access_of(&request),
            };
            approver
                .approve(ApprovalRequest {
                    agent_id: &agent_id,
                    tool: &request.tool_name,
                    input: &request.input,
                    tool_use_id: &request.tool_use_id,
                    decision: &decision,
                    change: None,
                })
                .await
        }
        None => Approval::Deny {
            message: Some(
                "The team lead runs without anyone to ask, so it cannot approve this call.".into(),
            ),
        },
    };
    let (approved, feedback) = match approval {
        Approval::Allow { .. } => (true, None),
        Approval::Deny { message } => (false, message),
    };
    let frame = Frame::PermissionResponse(PermissionResponse {
        request_id: request.request_id,
        approved,
        feedback,
        timestamp: clock::now_iso(),
    });
    let reply = MailEntry::new(
        LEAD_NAME,
        frame.to_text(),
        clock::now_iso(),
        clock::new_msg_id(),
    );
    if let Err(err) = team.post(&request.from, &reply) {
        tracing::warn!(
            "the answer to {}'s permission question was not delivered: {err}",
            request.from
        );
    }
}

/// What the call touches, for the question's wording and the rule it suggests.
fn access_of(request: &PermissionRequest) -> Access {
    let field = |name: &str| request.input.get(name).and_then(|v| v.as_str());
    match request.tool_name.as_str() {
        "Bash" => field("command").map_or(Access::Other, |c| Access::Command(c.to_string())),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => field("file_path")
            .or_else(|| field("notebook_path"))
            .map_or(Access::Other, |p| Access::Write(p.into())),
        "Read" => field("file_path").map_or(Access::Other, |p| Access::Read(p.into())),
        _ => Access::Other,
    }
}
