//! A pane teammate's inbox: read as its prompts, each entry screened first — what claims to
//! come from the lead must carry the lead's signature.

use super::{lock, Membership, MAIL_BATCH};
use crate::teams::handed::Handed;
use crate::teams::receipts::{self, Receipt};
use crate::teams::signing::{Verdict, USER_SENDER};
use fleet_protocol::team::frames::Frame;
use fleet_protocol::team::render;
use fleet_protocol::{MailEntry, Message, TeamEvent};
use std::sync::Arc;

/// Reads the inbox for as long as the membership lasts.
pub(super) async fn read_mail(member: Arc<Membership>, inbox: Arc<crate::inbox::Inbox>) {
    // Mail handed to the session but not yet committed: not handed over twice.
    let handed = Handed::default();
    loop {
        let unread = match member.mailbox.unread_at_most_async(MAIL_BATCH).await {
            Ok(unread) => unread,
            Err(err) => {
                tracing::error!("cannot read the inbox: {err}");
                member.leave(format!("Its inbox cannot be read: {err}"));
                return;
            }
        };
        for warning in &unread.warnings {
            tracing::warn!("inbox: {warning}");
        }
        let upto = unread.upto;
        let mut deliver = Vec::new();
        for entry in unread.entries {
            if handed.contains(&entry.msg_id) {
                continue;
            }
            if let Some(entry) = member.screen(entry).await {
                deliver.push(entry);
            }
        }
        if deliver.is_empty() {
            if handed.is_empty() {
                // Refused, answered or stale entries only: consumed now.
                if let Err(err) = member.mailbox.ack_async(upto).await {
                    tracing::warn!("cannot mark mail read: {err}");
                }
            }
        } else {
            let ids: Vec<String> = deliver.iter().map(|e| e.msg_id.clone()).collect();
            handed.hand_over(
                &inbox,
                &member.mailbox,
                upto,
                Message::user_text(render::for_teammate(&deliver)),
                ids,
                || {},
            );
        }
        tokio::select! {
            _ = member.mailbox.wait_past(&upto) => {}
            _ = member.gone.cancelled() => return,
        }
    }
}

impl Membership {
    /// What to do with one entry: `Some` to show the model; `None` when refused (not the
    /// lead's, though it says so) or handled here (an answer to a permission question).
    async fn screen(&self, entry: MailEntry) -> Option<MailEntry> {
        let verdict = self.verifier.check(&entry);
        // The user speaks through the lead (the lead's key) or from a terminal with
        // `fleet team send` (the user's own key).
        let by_user = entry.from == USER_SENDER && !verdict.trusted();
        let verdict = match (&self.user_verifier, by_user) {
            (Ok(user), true) => user.check(&entry),
            _ => verdict,
        };
        let refusal: Option<String> = match verdict {
            Verdict::Unsigned => Some("it is not signed".into()),
            Verdict::BadSignature if by_user => match &self.user_verifier {
                Ok(_) => Some(
                    "its signature matches neither the lead's key nor the user's team-mail key \
                     (as it was when this teammate started)"
                        .into(),
                ),
                Err(why) => Some(format!(
                    "its signature does not match the lead's key, and the user's key cannot \
                     be used here: {why}"
                )),
            },
            Verdict::BadSignature => Some("its signature does not match the lead's key".into()),
            // Only the lead speaks as the lead, whatever the spelling, and only the lead
            // sends what changes a teammate's life or permissions.
            Verdict::Peer if looks_like_lead(&entry.from) => Some("it is not signed".into()),
            Verdict::Peer if lead_only(&entry.text) => {
                Some("only the lead sends that, and the lead signs what it sends".into())
            }
            _ => None,
        };
        if let Some(why) = refusal {
            self.receipt(&entry, Some(why.clone()));
            tracing::warn!(
                from = %entry.from, msg_id = %entry.msg_id,
                "refused a message that claims to come from {}: {why}", entry.from
            );
            self.team
                .emit(TeamEvent::MailRefused {
                    team: self.team.name.clone(),
                    to: self.identity.name.clone(),
                    from: entry.from.clone(),
                    reason: format!(
                        "A message claiming to come from {:?} was refused: {why}. It was not \
                         shown to the agent.",
                        entry.from
                    ),
                })
                .await;
            return None;
        }
        if entry.from == USER_SENDER {
            self.receipt(&entry, None);
        }
        match Frame::parse(&entry.text) {
            Some(Frame::PermissionResponse(answer)) => {
                match lock(&self.asked).remove(&answer.request_id) {
                    Some(waiter) => {
                        let _ = waiter.send(answer);
                    }
                    None => tracing::info!("an answer to no question: {}", answer.request_id),
                }
                None
            }
            Some(Frame::ShutdownRequest(request)) => {
                *lock(&self.shutdown_request) = Some(request.request_id);
                Some(entry)
            }
            _ => Some(entry),
        }
    }
}

impl Membership {
    /// Tells whoever sent `entry` from outside (`fleet team send`) that it was taken, or
    /// refused and why. A receipt that cannot be written only costs the sender its answer.
    fn receipt(&self, entry: &MailEntry, refused: Option<String>) {
        let receipt = Receipt {
            msg_id: entry.msg_id.clone(),
            to: self.identity.name.clone(),
            accepted: refused.is_none(),
            reason: refused,
        };
        let team_dir = self.team.store.dir(&self.team.name);
        let written = crate::teams::roster::off_worker(|| receipts::write(&team_dir, &receipt));
        match written {
            Ok(()) => {}
            // Ids that are no file names come from writers that do not wait for a receipt.
            Err(receipts::ReceiptError::BadId(_)) => {}
            Err(err) => tracing::warn!("no receipt for message {}: {err}", entry.msg_id),
        }
    }
}

/// A sender name that reads as the lead's (`Team-Lead`, `SYSTEM`, `main`, …).
fn looks_like_lead(from: &str) -> bool {
    crate::teams::signing::LEAD_SENDERS
        .iter()
        .chain(std::iter::once(&"main"))
        .any(|name| from.trim().eq_ignore_ascii_case(name))
}

/// Frames only the lead sends.
fn lead_only(text: &str) -> bool {
    matches!(
        Frame::parse(text),
        Some(
            Frame::ShutdownRequest(_)
                | Frame::PlanApprovalResponse(_)
                | Frame::PermissionResponse(_)
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_spelled_otherwise_is_still_the_lead() {
        for name in [
            "team-lead",
            "Team-Lead",
            "SYSTEM",
            "user",
            "Main",
            " team-lead ",
        ] {
            assert!(looks_like_lead(name), "{name}");
        }
        for name in ["alpha", "team-leader", "lead"] {
            assert!(!looks_like_lead(name), "{name}");
        }
    }

    #[test]
    fn only_the_lead_sends_what_changes_a_teammates_life() {
        let shutdown = r#"{"type":"shutdown_request","requestId":"shutdown-1@alpha","from":"team-lead","timestamp":"t"}"#;
        let answer =
            r#"{"type":"permission_response","requestId":"p-1","approved":true,"timestamp":"t"}"#;
        assert!(lead_only(shutdown));
        assert!(lead_only(answer));
        assert!(!lead_only("please shut down"));
        let idle = r#"{"type":"idle_notification","from":"beta","timestamp":"t"}"#;
        assert!(!lead_only(idle));
    }
}
