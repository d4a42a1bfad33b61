//! What a letter says, in a person's words: prose stays prose, and a protocol frame (the JSON
//! teammates and the lead exchange) becomes one readable line — "alpha is idle — …", "task #2
//! assigned: …" — with a plan folded under it. JSON that is not a frame fleet knows, or a
//! frame missing fields, stays text: nothing is guessed.

use super::Letter;
use fleet_protocol::team::frames::{Frame, PlanApprovalResponse};

/// The sentence a teammate's copy of a shutdown request carries after its JSON.
const SHUTDOWN_HINT: &str = "This is a shutdown request.";
const PLAN_APPROVED: &str = "[Plan Approved]";
const PLAN_REJECTED: &str = "[Plan Rejected]";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shown {
    /// Prose (or JSON that is not a known frame): the body as Markdown.
    Text,
    Frame(FrameLine),
}

/// A frame as one line: its mark, the sender's name when the sentence starts with it, the
/// rest of the sentence, and Markdown folded under it (a submitted plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameLine {
    /// `✉` for mail, `◇` for an idle notice (quieter, and there are many of them).
    pub mark: &'static str,
    pub sender_first: bool,
    pub text: String,
    pub more: Option<String>,
    pub tone: Tone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Plain,
    Quiet,
    Good,
    Bad,
}

pub(crate) fn shown(letter: &Letter) -> Shown {
    if let Some(line) = verdict_text(&letter.body) {
        return Shown::Frame(line);
    }
    match frame(&letter.body) {
        Some(frame) => Shown::Frame(frame_line(&frame, &letter.from)),
        None => Shown::Text,
    }
}

/// The frame in a body: the whole body, or a shutdown request followed by the hint fleet adds
/// to a teammate's copy.
fn frame(body: &str) -> Option<Frame> {
    if let Some(frame) = Frame::parse(body) {
        return Some(frame);
    }
    let trimmed = body.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    let mut stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Frame>();
    let frame = stream.next()?.ok()?;
    let rest = trimmed[stream.byte_offset()..].trim_start();
    match frame {
        Frame::ShutdownRequest(_) if rest.starts_with(SHUTDOWN_HINT) => Some(frame),
        _ => None,
    }
}

/// `[Plan Approved] …` / `[Plan Rejected] …`: the way a plan verdict reaches a teammate.
fn verdict_text(body: &str) -> Option<FrameLine> {
    let body = body.trim();
    let (approved, rest) = match (
        body.strip_prefix(PLAN_APPROVED),
        body.strip_prefix(PLAN_REJECTED),
    ) {
        (Some(rest), _) => (true, rest),
        (_, Some(rest)) => (false, rest),
        _ => return None,
    };
    Some(verdict(approved, Some(rest.trim())))
}

fn verdict(approved: bool, feedback: Option<&str>) -> FrameLine {
    let word = if approved { "approved" } else { "rejected" };
    FrameLine {
        mark: "✉",
        sender_first: true,
        text: with_reason(&format!("{word} the plan"), feedback),
        more: None,
        tone: if approved { Tone::Good } else { Tone::Bad },
    }
}

fn mail(text: String, tone: Tone) -> FrameLine {
    FrameLine {
        mark: "✉",
        sender_first: true,
        text,
        more: None,
        tone,
    }
}

/// `what: reason`, or `what` alone when there is no reason.
fn with_reason(what: &str, reason: Option<&str>) -> String {
    match reason.map(one_line).filter(|r| !r.is_empty()) {
        Some(reason) => format!("{what}: {reason}"),
        None => what.to_string(),
    }
}

/// The first non-empty line, trimmed.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

fn frame_line(frame: &Frame, sender: &str) -> FrameLine {
    match frame {
        Frame::ShutdownRequest(request) => mail(
            with_reason("asks you to shut down", request.reason.as_deref()),
            Tone::Plain,
        ),
        Frame::ShutdownApproved(_) => mail("agreed to shut down".into(), Tone::Plain),
        Frame::ShutdownRejected(rejected) => mail(
            with_reason("declined to shut down", Some(&rejected.reason)),
            Tone::Plain,
        ),
        Frame::IdleNotification(idle) => {
            let failed = idle.idle_reason.as_deref() == Some("failed");
            let about = if failed {
                idle.failure_reason
                    .as_deref()
                    .map(|r| format!("failed: {}", one_line(r)))
            } else {
                idle.summary
                    .as_deref()
                    .or(idle.result.as_deref())
                    .map(one_line)
            };
            let text = match about.filter(|a| !a.is_empty()) {
                Some(about) => format!("is idle — {about}"),
                None => "is idle".to_string(),
            };
            FrameLine {
                mark: "◇",
                sender_first: true,
                text,
                more: None,
                tone: if failed { Tone::Bad } else { Tone::Quiet },
            }
        }
        Frame::PlanApprovalRequest(request) => FrameLine {
            more: Some(request.plan_content.clone()).filter(|p| !p.trim().is_empty()),
            ..mail("submitted a plan for approval".into(), Tone::Plain)
        },
        Frame::PlanApprovalResponse(PlanApprovalResponse {
            approved, feedback, ..
        }) => verdict(*approved, feedback.as_deref()),
        Frame::TaskAssignment(task) => FrameLine {
            sender_first: false,
            text: format!(
                "task #{} assigned: {} (by {})",
                one_line(&task.task_id),
                one_line(&task.subject),
                one_line(&task.assigned_by)
            ),
            ..mail(String::new(), Tone::Plain)
        },
        Frame::TeammateTerminated(terminated) => FrameLine {
            // `system` writes these; from anyone else the sender is named.
            sender_first: sender != "system",
            text: one_line(&terminated.message),
            ..mail(String::new(), Tone::Quiet)
        },
        Frame::PermissionRequest(request) => {
            let what = format!("asks to use {}", one_line(&request.tool_name));
            let description = Some(request.description.as_str()).filter(|d| !d.is_empty());
            mail(with_reason(&what, description), Tone::Plain)
        }
        Frame::PermissionResponse(response) => {
            let (what, tone) = if response.approved {
                ("allowed the tool call you asked about", Tone::Good)
            } else {
                ("denied the tool call you asked about", Tone::Bad)
            };
            mail(with_reason(what, response.feedback.as_deref()), tone)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(sender: &str, body: &str) -> Letter {
        Letter {
            from: sender.into(),
            color: None,
            summary: None,
            unverified: false,
            body: body.into(),
        }
    }

    fn text_of(sender: &str, body: &str) -> String {
        match shown(&from(sender, body)) {
            Shown::Frame(line) if line.sender_first => format!("{sender} {}", line.text),
            Shown::Frame(line) => line.text,
            Shown::Text => "TEXT".into(),
        }
    }

    #[test]
    fn the_teammate_copy_of_a_shutdown_request_is_still_a_request() {
        let body = "{\"type\":\"shutdown_request\",\"requestId\":\"s@a\",\"from\":\"team-lead\",\
                    \"reason\":\"work done\",\"timestamp\":\"t\"}\n\nThis is a shutdown request. \
                    To approve it, call SendMessage …";
        assert_eq!(
            text_of("team-lead", body),
            "team-lead asks you to shut down: work done"
        );
        // Other text after a frame makes it text.
        let other = "{\"type\":\"shutdown_approved\",\"requestId\":\"s\",\"from\":\"a\",\
                     \"timestamp\":\"t\",\"paneId\":\"%1\",\"backendType\":\"tmux\"} and more";
        assert_eq!(text_of("a", other), "TEXT");
    }

    #[test]
    fn plan_verdicts_in_words_and_as_frames() {
        assert_eq!(
            text_of("team-lead", "[Plan Rejected] add tests"),
            "team-lead rejected the plan: add tests"
        );
        assert_eq!(
            text_of("team-lead", "[Plan Approved] "),
            "team-lead approved the plan"
        );
        let frame = "{\"type\":\"plan_approval_response\",\"requestId\":\"r\",\"approved\":true,\
                     \"timestamp\":\"t\"}";
        assert_eq!(text_of("team-lead", frame), "team-lead approved the plan");
    }

    #[test]
    fn unknown_or_incomplete_json_is_text() {
        assert_eq!(text_of("a", "{\"type\":\"weather\"}"), "TEXT");
        assert_eq!(text_of("a", "{\"type\":\"shutdown_approved\"}"), "TEXT");
        assert_eq!(text_of("a", "{not json"), "TEXT");
    }

    #[test]
    fn a_failed_idle_says_why() {
        let body = "{\"type\":\"idle_notification\",\"from\":\"gamma\",\"timestamp\":\"t\",\
                    \"idleReason\":\"failed\",\"failureReason\":\"model error\"}";
        assert_eq!(
            text_of("gamma", body),
            "gamma is idle — failed: model error"
        );
    }
}
