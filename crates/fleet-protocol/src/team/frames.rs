//! Protocol frames: the structured messages teammates exchange inside a mailbox entry's `text`.
//!
//! A frame is compact JSON with a `type` tag, field for field and in the order Claude Code
//! writes them (`idle_notification`, `task_assignment`, `shutdown_*`, `plan_approval_*`,
//! `teammate_terminated`), so inbox files read the same to users of both tools and a teammate
//! model sees the shapes its prompts describe. An entry whose text is not a frame is plain
//! prose: [`Frame::parse`] says which.
//!
//! Names from a shared vocabulary are typed: `backendType` is a [`BackendType`] (open: a
//! backend this build does not know is kept as `Other`, so the frame still reads and writes
//! back unchanged), `permissionMode` a [`PermissionMode`] read leniently (see
//! [`PlanApprovalResponse::permission_mode`]).

use serde::{Deserialize, Deserializer, Serialize};

use crate::vocab::{BackendType, PermissionMode};

/// Every frame type fleet reads or writes; `type` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Frame {
    /// A teammate's turn ended and it waits for mail (teammate → lead).
    IdleNotification(IdleNotification),
    /// A task's owner changed to the recipient (to the new owner's inbox).
    TaskAssignment(TaskAssignment),
    /// The lead asks a teammate to stop.
    ShutdownRequest(ShutdownRequest),
    /// The teammate agreed to stop and is exiting (teammate → lead).
    ShutdownApproved(ShutdownApproved),
    /// The teammate declined to stop, with its reason (teammate → lead).
    ShutdownRejected(ShutdownRejected),
    /// A plan-mode teammate submits its plan (written by ExitPlanMode, teammate → lead).
    PlanApprovalRequest(PlanApprovalRequest),
    /// The lead's verdict on a plan (lead → teammate).
    PlanApprovalResponse(PlanApprovalResponse),
    /// A teammate has ended; injected into the lead's queue from sender `system`.
    TeammateTerminated(TeammateTerminated),
    /// A pane teammate asks the lead (and its person) to decide a tool call it cannot decide
    /// itself (teammate → lead).
    PermissionRequest(PermissionRequest),
    /// The lead's answer to a permission request (lead → teammate, signed).
    PermissionResponse(PermissionResponse),
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    /// `permission-<epoch-ms>@<name>`; the answer names it.
    pub request_id: String,
    /// The asking teammate's name.
    pub from: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_use_id: String,
    /// The check's description of the call ("Bash command `rm -rf build`").
    pub description: String,
    pub input: serde_json::Value,
    /// The rule "allow always" would add, when one covers the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_rule: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionResponse {
    pub request_id: String,
    pub approved: bool,
    /// Why not, or what to do instead, for the teammate's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleNotification {
    pub from: String,
    /// ISO-8601 with milliseconds, UTC.
    pub timestamp: String,
    /// `available` after an ordinary turn; `failed` together with `failure_reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_reason: Option<String>,
    /// `[to <peer>] <summary>` when the turn's last message went to a peer, so the lead sees
    /// peer traffic without reading it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The last assistant text of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAssignment {
    pub task_id: String,
    pub subject: String,
    pub description: String,
    /// The member name that set the owner (the owner itself when it claimed the task).
    pub assigned_by: String,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRequest {
    /// `shutdown-<epoch-ms>@<recipient>` ([`shutdown_request_id`]).
    pub request_id: String,
    pub from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownApproved {
    pub request_id: String,
    pub from: String,
    pub timestamp: String,
    /// `in-process` for in-process teammates, the pane id (`%1`) for pane teammates.
    pub pane_id: String,
    /// `in-process`, `tmux`, … (a pane id is not a backend: `pane_id` stays a string).
    pub backend_type: BackendType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRejected {
    pub request_id: String,
    pub from: String,
    pub reason: String,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalRequest {
    pub from: String,
    pub timestamp: String,
    pub plan_file_path: String,
    pub plan_content: String,
    /// `plan_approval-<epoch-ms>@<name>@<team>` ([`plan_request_id`]).
    pub request_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalResponse {
    pub request_id: String,
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    pub timestamp: String,
    /// The permission mode the teammate switches to once approved (`plan` maps to `default`).
    ///
    /// Read leniently: a mode this build does not know (a newer Claude Code's) reads as
    /// `None` rather than failing the frame, which would turn the lead's verdict into prose
    /// the teammate never acts on. `None` is safe here: the teammate cannot apply a mode it
    /// does not know and falls back to `default`, and fleet never writes a frame it read back
    /// (an inbox keeps the entry's text as it came), so no name is lost from a file.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "known_mode"
    )]
    pub permission_mode: Option<PermissionMode>,
    /// sha256 hex of the approved plan text, so a teammate can tell which plan was approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeammateTerminated {
    /// `alpha has shut down.` and, when tasks were handed back, which ones
    /// ([`TeammateTerminated::new`]).
    pub message: String,
}

/// A permission mode by its exact wire name, or `None` for a name this build does not know.
/// A value that is not a string at all is still an error: that frame is malformed, not newer.
fn known_mode<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<PermissionMode>, D::Error> {
    let name = Option::<String>::deserialize(deserializer)?;
    Ok(name.and_then(|name| {
        PermissionMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name)
    }))
}

/// The frame types Claude Code knows that fleet does not model (permission forwarding, mode
/// changes, …). A string message of one of these shapes is still a frame, not prose, so a
/// model cannot forge one by sending it as text.
const OTHER_FRAME_TYPES: &[&str] = &[
    "permission_request",
    "permission_response",
    "sandbox_permission_request",
    "sandbox_permission_response",
    "task_completed",
    "mode_set_request",
    "team_permission_update",
    "shutdown_response",
];

impl Frame {
    /// The frame in `text`, or `None` when `text` is plain prose (or a frame type fleet does
    /// not model; see [`frame_type`] to recognise those).
    pub fn parse(text: &str) -> Option<Frame> {
        let trimmed = text.trim();
        if !trimmed.starts_with('{') {
            return None;
        }
        serde_json::from_str(trimmed).ok()
    }

    /// Compact JSON, keys in Claude Code's order, as stored in an entry's `text`.
    pub fn to_text(&self) -> String {
        // Every field is a string (vocabulary names included), a bool or an option of those,
        // so serializing cannot fail.
        serde_json::to_string(self).expect("a frame of strings and bools always serializes")
    }

    /// The `type` tag as written on the wire.
    pub fn type_name(&self) -> &'static str {
        match self {
            Frame::IdleNotification(_) => "idle_notification",
            Frame::TaskAssignment(_) => "task_assignment",
            Frame::ShutdownRequest(_) => "shutdown_request",
            Frame::ShutdownApproved(_) => "shutdown_approved",
            Frame::ShutdownRejected(_) => "shutdown_rejected",
            Frame::PlanApprovalRequest(_) => "plan_approval_request",
            Frame::PlanApprovalResponse(_) => "plan_approval_response",
            Frame::TeammateTerminated(_) => "teammate_terminated",
            Frame::PermissionRequest(_) => "permission_request",
            Frame::PermissionResponse(_) => "permission_response",
        }
    }
}

/// The frame type of `text` when it is a JSON object whose `type` is a protocol frame type,
/// known to fleet or only to Claude Code. SendMessage uses it to refuse a *string* message that
/// would pass for a frame (a model forging `shutdown_approved` as text, for instance).
pub fn frame_type(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(trimmed).ok()?;
    let kind = value.get("type")?.as_str()?;
    let known = Frame::parse(trimmed).is_some()
        || OTHER_FRAME_TYPES.contains(&kind)
        || [
            "idle_notification",
            "task_assignment",
            "shutdown_request",
            "shutdown_approved",
            "shutdown_rejected",
            "plan_approval_request",
            "plan_approval_response",
            "teammate_terminated",
            "permission_request",
            "permission_response",
        ]
        .contains(&kind);
    known.then(|| kind.to_string())
}

/// `permission-<epoch-ms>@<name>`, the id a forwarded permission question and its answer share.
pub fn permission_request_id(epoch_ms: u64, name: &str) -> String {
    format!("permission-{epoch_ms}@{name}")
}

/// `shutdown-<epoch-ms>@<recipient>`, the id a shutdown request and its answer share.
pub fn shutdown_request_id(epoch_ms: u64, recipient: &str) -> String {
    format!("shutdown-{epoch_ms}@{recipient}")
}

/// `plan_approval-<epoch-ms>@<name>@<team>`, the id a plan request and its verdict share.
pub fn plan_request_id(epoch_ms: u64, name: &str, team: &str) -> String {
    format!("plan_approval-{epoch_ms}@{name}@{team}")
}

impl TeammateTerminated {
    /// `<name> has shut down.` (or `was terminated.` when it was stopped without agreeing),
    /// followed, when its unfinished tasks went back to the list, by which ones and what the
    /// lead can do about them.
    pub fn new(name: &str, agreed: bool, unassigned: &[(String, String)]) -> Self {
        let mut message = if agreed {
            format!("{name} has shut down.")
        } else {
            format!("{name} was terminated.")
        };
        if !unassigned.is_empty() {
            let list: Vec<String> = unassigned
                .iter()
                .map(|(id, subject)| format!("#{id} {subject:?}"))
                .collect();
            message.push_str(&format!(
                " {} task(s) were unassigned: {}. Use TaskList to check availability and \
                 TaskUpdate with owner to reassign them to idle teammates.",
                unassigned.len(),
                list.join(", ")
            ));
        }
        Self { message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One example of every frame, exactly as in the reference `protocol-frames.json` (ids and
    /// timestamps stand in for the placeholders).
    const REFERENCE: &[&str] = &[
        r#"{"type":"idle_notification","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","result":"ALPHA-IDLE turn"}"#,
        r#"{"type":"task_assignment","taskId":"1","subject":"LEAD-TASK for beta","description":"Beta should review notes","assignedBy":"team-lead","timestamp":"2026-12-01T17:00:00.000Z"}"#,
        r#"{"type":"idle_notification","from":"beta","timestamp":"2026-12-01T17:00:00.000Z","summary":"[to alpha] hi alpha","result":"BETA-IDLE turn"}"#,
        r#"{"type":"idle_notification","from":"beta","timestamp":"2026-12-01T17:00:00.000Z","idleReason":"available","result":"BETA-IDLE turn"}"#,
        r#"{"type":"shutdown_request","requestId":"shutdown-1764608400000@alpha","from":"team-lead","reason":"LEAD-SHUTDOWN-ALPHA work done","timestamp":"2026-12-01T17:00:00.000Z"}"#,
        r#"{"type":"shutdown_rejected","requestId":"shutdown-1764608400000@beta","from":"beta","reason":"BETA-REJECTS still busy","timestamp":"2026-12-01T17:00:00.000Z"}"#,
        r#"{"type":"shutdown_approved","requestId":"shutdown-1764608400000@alpha","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","paneId":"in-process","backendType":"in-process"}"#,
        r##"{"type":"plan_approval_request","from":"planner","timestamp":"2026-12-01T17:00:00.000Z","planFilePath":"~/.claude/plans/x-agent-aplanner-0123456789abcdef.md","planContent":"# GAMMA-PLAN v1\n1. Edit hello.txt\n","requestId":"plan_approval-1764608400000@planner@session-1a2b3c4d"}"##,
        r#"{"type":"plan_approval_response","requestId":"plan_approval-1764608400000@planner@session-1a2b3c4d","approved":true,"timestamp":"2026-12-01T17:00:00.000Z","permissionMode":"default","planDigest":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}"#,
        r#"{"type":"idle_notification","from":"beta","timestamp":"2026-12-01T17:00:00.000Z","idleReason":"available","summary":"[to alpha] hi alpha","result":"BETA-IDLE turn"}"#,
        r#"{"type":"shutdown_approved","requestId":"shutdown-1764608400000@alpha","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","paneId":"%1","backendType":"tmux"}"#,
        r#"{"type":"teammate_terminated","message":"alpha has shut down."}"#,
        r#"{"type":"plan_approval_response","requestId":"plan_approval-1764608400000@planner@session-1a2b3c4d","approved":false,"feedback":"LEAD-REJECT please add tests","timestamp":"2026-12-01T17:00:00.000Z"}"#,
        r#"{"type":"idle_notification","from":"gamma","timestamp":"2026-12-01T17:00:00.000Z","idleReason":"failed","completedTaskId":"4","completedStatus":"failed","failureReason":"model error"}"#,
    ];

    #[test]
    fn every_reference_frame_round_trips_byte_for_byte() {
        for text in REFERENCE {
            let frame = Frame::parse(text).unwrap_or_else(|| panic!("not parsed: {text}"));
            assert_eq!(frame.to_text(), *text);
            assert_eq!(frame_type(text).as_deref(), Some(frame.type_name()));
        }
    }

    #[test]
    fn vocabulary_fields_read_typed() {
        let Some(Frame::ShutdownApproved(pane)) = Frame::parse(REFERENCE[10]) else {
            panic!("a shutdown_approved frame");
        };
        assert_eq!(pane.backend_type, BackendType::Tmux);
        assert_eq!(pane.pane_id, "%1");
        let Some(Frame::PlanApprovalResponse(verdict)) = Frame::parse(REFERENCE[8]) else {
            panic!("a plan_approval_response frame");
        };
        assert_eq!(verdict.permission_mode, Some(PermissionMode::Default));
    }

    #[test]
    fn a_backend_fleet_does_not_know_is_kept_and_written_back() {
        // Claude Code's shutdown_approved from a backend this build has never heard of.
        let text = r#"{"type":"shutdown_approved","requestId":"shutdown-1764608400000@alpha","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","paneId":"w7","backendType":"wezterm"}"#;
        let Some(Frame::ShutdownApproved(approved)) = Frame::parse(text) else {
            panic!("still a shutdown_approved frame");
        };
        assert_eq!(approved.backend_type, BackendType::Other("wezterm".into()));
        assert_eq!(
            Frame::ShutdownApproved(approved).to_text(),
            text,
            "written back byte for byte"
        );
    }

    #[test]
    fn a_mode_fleet_does_not_know_reads_as_none_without_failing_the_frame() {
        for mode in ["auto", "AcceptEdits", "from-a-newer-build"] {
            let text = format!(
                r#"{{"type":"plan_approval_response","requestId":"plan_approval-1@planner@t","approved":true,"timestamp":"2026-12-01T17:00:00.000Z","permissionMode":"{mode}","planDigest":"ab"}}"#
            );
            let Some(Frame::PlanApprovalResponse(verdict)) = Frame::parse(&text) else {
                panic!("{mode}: still a plan_approval_response frame");
            };
            assert!(verdict.approved);
            assert_eq!(verdict.permission_mode, None, "{mode}");
            assert_eq!(verdict.plan_digest.as_deref(), Some("ab"));
        }
        for (wire, mode) in PermissionMode::ALL.map(|m| (m.as_str(), m)) {
            let text = format!(
                r#"{{"type":"plan_approval_response","requestId":"r","approved":true,"timestamp":"t","permissionMode":"{wire}"}}"#
            );
            let Some(Frame::PlanApprovalResponse(verdict)) = Frame::parse(&text) else {
                panic!("{wire}: a plan_approval_response frame");
            };
            assert_eq!(verdict.permission_mode, Some(mode));
            assert_eq!(Frame::PlanApprovalResponse(verdict).to_text(), text);
        }
        // Not a name at all: a malformed frame, which still cannot pass for prose.
        let malformed = r#"{"type":"plan_approval_response","requestId":"r","approved":true,"timestamp":"t","permissionMode":5}"#;
        assert_eq!(Frame::parse(malformed), None);
        assert_eq!(
            frame_type(malformed).as_deref(),
            Some("plan_approval_response")
        );
        // An explicit null is no mode, as before.
        let null = r#"{"type":"plan_approval_response","requestId":"r","approved":false,"timestamp":"t","permissionMode":null}"#;
        assert!(matches!(
            Frame::parse(null),
            Some(Frame::PlanApprovalResponse(PlanApprovalResponse {
                permission_mode: None,
                ..
            }))
        ));
    }

    #[test]
    fn permission_frames_round_trip_with_camel_case_keys() {
        let texts = [
            r#"{"type":"permission_request","requestId":"permission-17@alpha","from":"alpha","toolName":"Bash","toolUseId":"toolu_1","description":"Bash command `rm -rf build`","input":{"command":"rm -rf build"},"suggestedRule":"Bash(rm:*)","timestamp":"2026-12-01T17:00:00.000Z"}"#,
            r#"{"type":"permission_request","requestId":"permission-18@beta","from":"beta","toolName":"Write","description":"Write notes.md","input":{},"timestamp":"2026-12-01T17:00:00.000Z"}"#,
            r#"{"type":"permission_response","requestId":"permission-17@alpha","approved":false,"feedback":"use cargo clean","timestamp":"2026-12-01T17:00:01.000Z"}"#,
            r#"{"type":"permission_response","requestId":"permission-18@beta","approved":true,"timestamp":"2026-12-01T17:00:01.000Z"}"#,
        ];
        for text in texts {
            let frame = Frame::parse(text).unwrap_or_else(|| panic!("not parsed: {text}"));
            assert_eq!(frame.to_text(), text);
            // A model sending this as a plain string message is caught as a frame.
            assert_eq!(frame_type(text).as_deref(), Some(frame.type_name()));
        }
        let Some(Frame::PermissionRequest(request)) = Frame::parse(texts[0]) else {
            panic!("a permission request");
        };
        assert_eq!(request.request_id, permission_request_id(17, "alpha"));
        assert_eq!(
            (
                request.tool_use_id.as_str(),
                request.input["command"].as_str()
            ),
            ("toolu_1", Some("rm -rf build"))
        );
        assert_eq!(request.suggested_rule.as_deref(), Some("Bash(rm:*)"));
    }

    #[test]
    fn prose_and_unknown_json_are_not_frames() {
        for text in [
            "hello",
            "{not json",
            r#"{"type":"weather","sky":"blue"}"#,
            r#"{"from":"x"}"#,
            "[1,2]",
        ] {
            assert_eq!(Frame::parse(text), None, "{text}");
            assert_eq!(frame_type(text), None, "{text}");
        }
        // A frame missing a required field is not a frame fleet can act on, but it still has a
        // frame's shape, so it cannot be sent as prose.
        let partial = r#"{"type":"shutdown_approved","from":"alpha"}"#;
        assert_eq!(Frame::parse(partial), None);
        assert_eq!(frame_type(partial).as_deref(), Some("shutdown_approved"));
        assert_eq!(
            frame_type(r#"{"type":"permission_request"}"#).as_deref(),
            Some("permission_request")
        );
    }

    #[test]
    fn surrounding_whitespace_is_tolerated() {
        let text = format!("\n  {}\n", REFERENCE[11]);
        assert!(matches!(
            Frame::parse(&text),
            Some(Frame::TeammateTerminated(_))
        ));
    }

    #[test]
    fn termination_message_lists_the_unassigned_tasks() {
        assert_eq!(
            TeammateTerminated::new("alpha", true, &[]).message,
            "alpha has shut down."
        );
        let with_tasks = TeammateTerminated::new(
            "beta",
            false,
            &[("2".into(), "write notes".into()), ("5".into(), "x".into())],
        );
        assert_eq!(
            with_tasks.message,
            "beta was terminated. 2 task(s) were unassigned: #2 \"write notes\", #5 \"x\". \
             Use TaskList to check availability and TaskUpdate with owner to reassign them to \
             idle teammates."
        );
    }

    #[test]
    fn request_ids_have_claude_codes_shape() {
        assert_eq!(shutdown_request_id(17, "alpha"), "shutdown-17@alpha");
        assert_eq!(
            plan_request_id(17, "planner", "session-1a2b3c4d"),
            "plan_approval-17@planner@session-1a2b3c4d"
        );
    }
}
