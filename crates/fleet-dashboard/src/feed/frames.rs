//! Team protocol frames (`idle_notification`, `shutdown_request`, `plan_approval_*`, …) as
//! the message list shows them: the frame's type as the message's kind and a line for people
//! as its summary, never the frame's raw JSON.

use fleet_protocol::team::frames::frame_type;
use fleet_protocol::team::Frame;

use super::links::cut;

/// Characters of a teammate's own words (its last reply, a reason, a plan) kept in a summary.
const QUOTE_CHARS: usize = 120;

/// `(kind, summary)` of a mailbox entry's text when it is a protocol frame; `None` for prose.
pub(crate) fn describe(text: &str) -> Option<(String, String)> {
    if let Some(frame) = Frame::parse(text) {
        return Some((frame.type_name().to_owned(), summary(&frame)));
    }
    // A frame type fleet does not model (Claude Code's): named, not shown as JSON.
    let kind = frame_type(text)?;
    let summary = by_type(&kind);
    Some((kind, summary))
}

/// A line for a frame known only by its type (a live session's event names the type only).
pub(crate) fn by_type(kind: &str) -> String {
    match kind {
        "idle_notification" => "idle",
        "task_assignment" => "task assigned",
        "shutdown_request" => "shutdown requested",
        "shutdown_approved" => "shutdown approved",
        "shutdown_rejected" => "shutdown rejected",
        "plan_approval_request" => "plan submitted for approval",
        "plan_approval_response" => "plan reviewed",
        "teammate_terminated" => "teammate ended",
        "permission_request" => "permission asked",
        "permission_response" => "permission answered",
        other => return other.replace('_', " "),
    }
    .to_owned()
}

/// `head: words`, or just `head` when there are no words.
fn with(head: &str, words: Option<&str>) -> String {
    match words.map(str::trim).filter(|w| !w.is_empty()) {
        Some(words) => format!("{head}: {}", cut(&one_line(words), QUOTE_CHARS)),
        None => head.to_owned(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn summary(frame: &Frame) -> String {
    match frame {
        Frame::IdleNotification(idle) => {
            if idle.idle_reason.as_deref() == Some("failed") {
                return with("idle, failed", idle.failure_reason.as_deref());
            }
            let words = idle.summary.as_deref().or(idle.result.as_deref());
            let head = match (&idle.completed_task_id, &idle.completed_status) {
                (Some(task), Some(status)) => format!("idle, task #{task} {status}"),
                (Some(task), None) => format!("idle, task #{task} done"),
                _ => "idle".to_owned(),
            };
            with(&head, words)
        }
        Frame::TaskAssignment(task) => with(
            &format!("task #{} assigned by {}", task.task_id, task.assigned_by),
            Some(&task.subject),
        ),
        Frame::ShutdownRequest(request) => with("shutdown requested", request.reason.as_deref()),
        Frame::ShutdownApproved(_) => "shutdown approved".to_owned(),
        Frame::ShutdownRejected(rejected) => with("shutdown rejected", Some(&rejected.reason)),
        Frame::PlanApprovalRequest(plan) => {
            with("plan submitted for approval", Some(&plan.plan_content))
        }
        Frame::PlanApprovalResponse(verdict) => {
            let head = if verdict.approved {
                "plan approved"
            } else {
                "plan rejected"
            };
            with(head, verdict.feedback.as_deref())
        }
        Frame::TeammateTerminated(ended) => one_line(&ended.message),
        Frame::PermissionRequest(asked) => with(
            &format!("permission asked for {}", asked.tool_name),
            Some(&asked.description),
        ),
        Frame::PermissionResponse(answer) => {
            let head = if answer.approved {
                "permission granted"
            } else {
                "permission denied"
            };
            with(head, answer.feedback.as_deref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_as_words_and_prose_is_left_alone() {
        let idle = r#"{"type":"idle_notification","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","idleReason":"available","result":"Wrote the notes\nand tests"}"#;
        assert_eq!(
            describe(idle),
            Some((
                "idle_notification".to_owned(),
                "idle: Wrote the notes and tests".to_owned()
            ))
        );
        let stop = r#"{"type":"shutdown_request","requestId":"shutdown-1@alpha","from":"team-lead","timestamp":"t"}"#;
        assert_eq!(
            describe(stop).map(|d| d.1),
            Some("shutdown requested".to_owned())
        );
        let other = r#"{"type":"mode_set_request","mode":"plan"}"#;
        assert_eq!(
            describe(other),
            Some(("mode_set_request".to_owned(), "mode set request".to_owned()))
        );
        assert_eq!(describe("{not json"), None);
        assert_eq!(describe("start on the parser"), None);
    }
}
