//! `fleet team inbox`: what is in a member's inbox, for a person or a script. It reads with
//! [`Mailbox::all`], which reports each entry as read or unread without touching the cursor:
//! looking must never take a message away from the member it is for.

use super::{
    addressee, age, existing_inbox, inbox_owners, load_team, print_for_people, print_json,
};
use fleet_protocol::team::frames::{frame_type, Frame};
use fleet_protocol::MailEntry;
use fleet_store::TeamStore;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::SystemTime;

#[derive(Debug, clap::Args)]
pub struct InboxArgs {
    /// The team's name.
    team: String,
    /// The member: its name, `name@team`, or `team-lead` / `main` for the lead.
    member: String,
    /// One JSON object: team, member, inbox (the owner's file name), unread (count), and
    /// entries: each mail entry exactly as stored (from, text, summary, timestamp, color,
    /// msgV, msg_id, type, read) plus `frame`: the parsed protocol frame or null.
    #[arg(long)]
    json: bool,
    /// Only the messages the member has not consumed yet.
    #[arg(long)]
    unread: bool,
}

pub fn inbox(store: &TeamStore, args: InboxArgs) -> anyhow::Result<()> {
    let config = load_team(store, &args.team)?;
    let to = addressee(&config, &args.member)?;
    let dir = store.inboxes_dir(&config.name);
    let owners = inbox_owners(&dir)?;
    let mut entries = match existing_inbox(&dir, &owners, &to.owner)? {
        Some(mailbox) => mailbox.all()?,
        None => Vec::new(),
    };
    if args.unread {
        entries.retain(|e| !e.read);
    }
    let unread = entries.iter().filter(|e| !e.read).count();
    if args.json {
        let entries: Vec<Value> = entries.iter().map(entry_json).collect::<Result<_, _>>()?;
        return print_json(&json!({
            "team": config.name,
            "member": to.member.map(|m| m.name.as_str()),
            "inbox": to.owner,
            "unread": unread,
            "entries": entries,
        }));
    }
    let now = SystemTime::now();
    let mut out = String::new();
    let what = if args.unread {
        "unread message"
    } else {
        "message"
    };
    if entries.is_empty() {
        let _ = writeln!(out, "no {what}s for {}@{}", to.owner, config.name);
        return print_for_people(&out);
    }
    let plural = if entries.len() == 1 { "" } else { "s" };
    let _ = writeln!(
        out,
        "{} {what}{plural} for {}@{} ({unread} unread)",
        entries.len(),
        to.owner,
        config.name
    );
    for entry in &entries {
        out.push('\n');
        out.push_str(&entry_text(entry, now));
    }
    print_for_people(&out)
}

/// The entry as stored, with `frame` added.
fn entry_json(entry: &MailEntry) -> serde_json::Result<Value> {
    let mut value = serde_json::to_value(entry)?;
    let frame = frame_type(&entry.text)
        .and_then(|_| serde_json::from_str::<Value>(entry.text.trim()).ok())
        .unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.insert("frame".into(), frame);
    }
    Ok(value)
}

/// One entry for people:
///
/// ```text
/// [unread] alpha, 2026-12-01T17:00:00.000Z (5m ago) — parser done
///     The parser is done; tests pass.
/// ```
///
/// A protocol frame's body is its type and key fields instead of its JSON.
fn entry_text(entry: &MailEntry, now: SystemTime) -> String {
    let mark = if entry.read { "read" } else { "unread" };
    let when = match humantime::parse_rfc3339_weak(&entry.timestamp) {
        Ok(time) => format!("{} ({})", entry.timestamp, age(time, now)),
        Err(_) => entry.timestamp.clone(),
    };
    let mut out = format!("[{mark}] {}, {when}", entry.from);
    if let Some(summary) = entry.summary.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(out, " — {summary}");
    }
    out.push('\n');
    let body = match frame_type(&entry.text) {
        Some(kind) => frame_line(&kind, &entry.text),
        None => entry.text.clone(),
    };
    for line in body.trim_end().lines() {
        let _ = writeln!(out, "    {line}");
    }
    out
}

/// `frame shutdown_request  requestId=… reason="…"`: the type and the fields a person needs
/// to follow the exchange (long ones, like a plan, by their first line).
fn frame_line(kind: &str, text: &str) -> String {
    let mut fields: Vec<(&str, String)> = Vec::new();
    let mut add = |name: &'static str, value: Option<&str>| {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            fields.push((name, format!("{:?}", first_line(value))));
        }
    };
    match Frame::parse(text) {
        Some(Frame::IdleNotification(f)) => {
            add("idleReason", f.idle_reason.as_deref());
            add("summary", f.summary.as_deref());
            add("completedTaskId", f.completed_task_id.as_deref());
            add("completedStatus", f.completed_status.as_deref());
            add("failureReason", f.failure_reason.as_deref());
        }
        Some(Frame::TaskAssignment(f)) => {
            add("taskId", Some(&f.task_id));
            add("subject", Some(&f.subject));
            add("assignedBy", Some(&f.assigned_by));
        }
        Some(Frame::ShutdownRequest(f)) => {
            add("requestId", Some(&f.request_id));
            add("reason", f.reason.as_deref());
        }
        Some(Frame::ShutdownApproved(f)) => {
            add("requestId", Some(&f.request_id));
            add("backendType", Some(f.backend_type.as_str()));
        }
        Some(Frame::ShutdownRejected(f)) => {
            add("requestId", Some(&f.request_id));
            add("reason", Some(&f.reason));
        }
        Some(Frame::PlanApprovalRequest(f)) => {
            add("requestId", Some(&f.request_id));
            add("planFilePath", Some(&f.plan_file_path));
            add("plan", Some(&f.plan_content));
        }
        Some(Frame::PlanApprovalResponse(f)) => {
            add("requestId", Some(&f.request_id));
            add("approved", Some(if f.approved { "true" } else { "false" }));
            add("feedback", f.feedback.as_deref());
        }
        Some(Frame::TeammateTerminated(f)) => add("message", Some(&f.message)),
        Some(Frame::PermissionRequest(f)) => {
            add("requestId", Some(&f.request_id));
            add("tool", Some(&f.tool_name));
            add("description", Some(&f.description));
        }
        Some(Frame::PermissionResponse(f)) => {
            add("requestId", Some(&f.request_id));
            add("approved", Some(if f.approved { "true" } else { "false" }));
            add("feedback", f.feedback.as_deref());
        }
        // A frame type only Claude Code writes: its JSON is all there is to show.
        None => return format!("frame {kind}\n{}", text.trim()),
    }
    let mut line = format!("frame {kind}");
    for (name, value) in fields {
        let _ = write!(line, "  {name}={value}");
    }
    line
}

/// The first line of `text`, with `…` when more follows.
fn first_line(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed.split_once('\n') {
        Some((first, _)) => format!("{}…", first.trim_end()),
        None => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_protocol::team::frames::{ShutdownRequest, TaskAssignment};

    fn entry(text: &str) -> MailEntry {
        MailEntry::new("alpha", text, "2026-12-01T17:00:00.000Z", "m1")
    }

    #[test]
    fn prose_is_shown_indented_under_its_header() {
        let now = humantime::parse_rfc3339("2026-12-01T17:05:00Z").unwrap_or(SystemTime::now());
        let mut e = entry("line one\nline two");
        e.summary = Some("two lines".into());
        assert_eq!(
            entry_text(&e, now),
            "[unread] alpha, 2026-12-01T17:00:00.000Z (5m ago) — two lines\n    line one\n    line two\n"
        );
    }

    #[test]
    fn frames_are_shown_by_type_and_key_fields() {
        let request = Frame::ShutdownRequest(ShutdownRequest {
            request_id: "shutdown-1@beta".into(),
            from: "team-lead".into(),
            reason: Some("done\nfor today".into()),
            timestamp: "t".into(),
        });
        assert_eq!(
            frame_line("shutdown_request", &request.to_text()),
            "frame shutdown_request  requestId=\"shutdown-1@beta\"  reason=\"done…\""
        );
        let assignment = Frame::TaskAssignment(TaskAssignment {
            task_id: "3".into(),
            subject: "Write notes".into(),
            description: "long".into(),
            assigned_by: "team-lead".into(),
            timestamp: "t".into(),
        });
        let shown = entry_text(&entry(&assignment.to_text()), SystemTime::now());
        assert!(
            shown.contains("frame task_assignment  taskId=\"3\"  subject=\"Write notes\"  assignedBy=\"team-lead\""),
            "{shown}"
        );
        let foreign = r#"{"type":"permission_request","tool":"Bash"}"#;
        assert_eq!(
            frame_line("permission_request", foreign),
            format!("frame permission_request\n{foreign}")
        );
    }

    #[test]
    fn json_entries_keep_the_stored_fields_and_add_the_frame() {
        let plain = entry_json(&entry("hello")).unwrap_or_default();
        assert_eq!(plain["text"], "hello");
        assert_eq!(plain["msg_id"], "m1");
        assert_eq!(plain["read"], false);
        assert_eq!(plain["frame"], Value::Null);
        let framed = entry_json(&entry(
            r#"{"type":"teammate_terminated","message":"alpha has shut down."}"#,
        ))
        .unwrap_or_default();
        assert_eq!(framed["frame"]["type"], "teammate_terminated");
    }
}
