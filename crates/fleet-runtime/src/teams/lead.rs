//! The lead's side of the team's mail: entries in `team-lead`'s inbox become one user turn of
//! the main agent's conversation, read between its runs, and acknowledged in the mailbox only
//! after the run that read them — so mail that arrived before a crash is read after the resume,
//! not lost; and mail the lead's transcript says it read (`mailIds`) is not read twice.
//!
//! The poller wakes on the mailbox (never a timer) and also acts on the frames the lead's
//! side handles by itself: with auto-approval on, a plan request is approved at once (the lead
//! still reads it).

use super::clock;
use super::handed::Handed;
use super::roster::{Team, Teams};
use crate::subagent::Spawner;
use fleet_protocol::team::frames::{Frame, PlanApprovalResponse};
use fleet_protocol::team::render;
use fleet_protocol::{MailEntry, Message, PermissionMode};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Arc;

impl Teams {
    /// Starts the team's lead poller unless one runs: it hands the lead's mail to
    /// `spawner`'s team inbox.
    pub(crate) fn ensure_lead_poller(&self, spawner: &Arc<Spawner>, team: &Arc<Team>) {
        let mut poller = team
            .poller
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if poller.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let team = team.clone();
        let inbox = spawner.team_inbox().clone();
        let spawner = Arc::downgrade(spawner);
        // Mail a resumed lead's transcript says it already read: acknowledged, not repeated.
        let delivered = self.lead_delivered();
        *poller = Some(tokio::spawn(async move {
            // Mail handed to the main agent but not yet taken in: not handed over twice.
            let handed = Handed::default();
            // Frames the poller acted on itself (a pane teammate's permission question): not
            // acted on twice while they wait to be acknowledged with the rest.
            let mut consumed: HashSet<String> = HashSet::new();
            loop {
                let mut seen_upto = None;
                match team.lead_mailbox.unread_async().await {
                    Ok(unread) => {
                        seen_upto = Some(unread.upto);
                        for warning in &unread.warnings {
                            tracing::warn!(team = %team.name, "lead inbox: {warning}");
                        }
                        let entries: Vec<MailEntry> = unread
                            .entries
                            .into_iter()
                            .filter(|e| !consumed.contains(&e.msg_id))
                            .collect();
                        let entries =
                            super::pane_mail::take_frames(&spawner, &team, entries, &mut consumed);
                        let fresh: Vec<MailEntry> = entries
                            .into_iter()
                            .filter(|e| !delivered.contains(&e.msg_id))
                            .filter(|e| handed.insert(&e.msg_id))
                            .collect();
                        let nothing_handed = handed.is_empty();
                        // Only mail already read, or lines that are not mail: consumed now, or
                        // they would count as unread forever.
                        if nothing_handed {
                            if let Err(err) = team.lead_mailbox.ack_async(unread.upto).await {
                                tracing::warn!("cannot mark the lead's mail read: {err}");
                            }
                            consumed.clear();
                        }
                        if !fresh.is_empty() {
                            auto_approve(&team, &fresh);
                            let ids: Vec<String> = fresh.iter().map(|e| e.msg_id.clone()).collect();
                            let activity = team.clone();
                            handed.hand_over(
                                &inbox,
                                &team.lead_mailbox,
                                unread.upto,
                                Message::user_text(render::for_lead(&fresh)),
                                ids,
                                move || activity.poke(),
                            );
                            team.poke();
                        }
                    }
                    Err(err) => {
                        tracing::error!(team = %team.name, "cannot read the lead's inbox: {err}")
                    }
                }
                // Mail handed over stays unread until the main agent takes it in, so wait for
                // what comes after it, not for the file to be empty.
                match seen_upto {
                    Some(upto) => team.lead_mailbox.wait_past(&upto).await,
                    None => team.lead_mailbox.wait().await,
                }
            }
        }));
    }
}

/// With auto-approval on, answers each plan request in `entries` with an approval.
fn auto_approve(team: &Team, entries: &[MailEntry]) {
    if !team.settings.auto_approve_plans {
        return;
    }
    for entry in entries {
        let Some(Frame::PlanApprovalRequest(request)) = Frame::parse(&entry.text) else {
            continue;
        };
        let digest = hex(&Sha256::digest(request.plan_content.as_bytes()));
        let verdict = Frame::PlanApprovalResponse(PlanApprovalResponse {
            request_id: request.request_id.clone(),
            approved: true,
            feedback: None,
            timestamp: clock::now_iso(),
            permission_mode: Some(PermissionMode::Default),
            plan_digest: Some(digest),
        });
        let reply = MailEntry::new(
            super::LEAD_NAME,
            verdict.to_text(),
            clock::now_iso(),
            clock::new_msg_id(),
        );
        if let Err(err) = team.post(&request.from, &reply) {
            tracing::warn!("cannot auto-approve the plan of {}: {err}", request.from);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
