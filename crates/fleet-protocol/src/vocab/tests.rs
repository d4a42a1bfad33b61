//! Every vocabulary's wire names, spelled out once more: a renamed variant or a changed
//! serde name fails here before it changes a transcript, a team file or a stream-json line.

#![allow(clippy::unwrap_used)]

use super::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;
use std::str::FromStr;

/// Each value writes exactly its wire string, reads back from it, and `KNOWN` lists exactly
/// these names in this order (so a value added without a test fails too).
fn wire_names<T>(known: &[&str], cases: &[(T, &str)])
where
    T: Serialize + DeserializeOwned + Debug + PartialEq + FromStr + ToString,
    <T as FromStr>::Err: Debug,
{
    let names: Vec<&str> = cases.iter().map(|(_, wire)| *wire).collect();
    assert_eq!(known, names.as_slice(), "KNOWN and the tested names differ");
    for (value, wire) in cases {
        let json = format!("\"{wire}\"");
        assert_eq!(
            serde_json::to_string(value).unwrap(),
            json,
            "{value:?} writes"
        );
        assert_eq!(
            &serde_json::from_str::<T>(&json).unwrap(),
            value,
            "{json} reads"
        );
        assert_eq!(&wire.parse::<T>().unwrap(), value, "{wire} parses");
        assert_eq!(value.to_string(), *wire, "{value:?} displays");
    }
}

/// An open vocabulary keeps a name it does not know, writes it back unchanged, and refuses it
/// as input with an error naming the value and every known one.
fn open_keeps_unknown<T>(known: &[&str], unknown: T, vocabulary: &str)
where
    T: Serialize + DeserializeOwned + Debug + PartialEq + FromStr<Err = UnknownValue>,
{
    let read: T = serde_json::from_str("\"from-a-newer-build\"").unwrap();
    assert_eq!(read, unknown);
    assert_eq!(
        serde_json::to_string(&read).unwrap(),
        "\"from-a-newer-build\""
    );
    let err = "from-a-newer-build".parse::<T>().unwrap_err();
    assert_eq!(err.value, "from-a-newer-build");
    assert_eq!(err.expected, known);
    let message = err.to_string();
    assert!(message.contains(vocabulary), "{message}");
    assert!(message.contains("`from-a-newer-build`"), "{message}");
    for name in known {
        assert!(message.contains(name), "{message} lacks {name}");
    }
}

#[test]
fn permission_mode_wire_names() {
    use PermissionMode::*;
    let cases = [
        (Default, "default"),
        (AcceptEdits, "acceptEdits"),
        (Plan, "plan"),
        (BypassPermissions, "bypassPermissions"),
        (DontAsk, "dontAsk"),
    ];
    let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
    wire_names(&known, &cases);
}

#[test]
fn permission_mode_is_closed_and_its_parse_error_names_the_choices() {
    assert!(serde_json::from_str::<PermissionMode>("\"auto\"").is_err());
    assert_eq!(
        "AcceptEdits".parse::<PermissionMode>(),
        Ok(PermissionMode::AcceptEdits),
        "the CLI has always taken any case"
    );
    let err = "auto".parse::<PermissionMode>().unwrap_err();
    assert_eq!(
        err,
        "unknown permission mode `auto`; expected one of default, acceptEdits, plan, \
         bypassPermissions, dontAsk"
    );
}

#[test]
fn permission_decision_wire_names() {
    use PermissionDecision::*;
    wire_names(
        PermissionDecision::KNOWN,
        &[(Accept, "accept"), (Reject, "reject")],
    );
    open_keeps_unknown(
        PermissionDecision::KNOWN,
        Other("from-a-newer-build".into()),
        "permission decision",
    );
}

#[test]
fn permission_reason_type_wire_names() {
    use PermissionReasonType::*;
    wire_names(
        PermissionReasonType::KNOWN,
        &[
            (Mode, "mode"),
            (Rule, "rule"),
            (Workspace, "workspace"),
            (Protected, "protected"),
            (Sandbox, "sandbox"),
            (Hook, "hook"),
            (User, "user"),
            (UnknownTool, "unknown_tool"),
            (Cancelled, "cancelled"),
            (InternalError, "internal_error"),
            (SubcommandResults, "subcommandResults"),
        ],
    );
    open_keeps_unknown(
        PermissionReasonType::KNOWN,
        Other("from-a-newer-build".into()),
        "permission reason type",
    );
}

#[test]
fn hook_decisions_wire_names() {
    use HookPermissionDecision::*;
    wire_names(
        HookPermissionDecision::KNOWN,
        &[(Allow, "allow"), (Deny, "deny"), (Ask, "ask")],
    );
    open_keeps_unknown(
        HookPermissionDecision::KNOWN,
        Other("from-a-newer-build".into()),
        "hook permission decision",
    );
    wire_names(
        HookDecision::KNOWN,
        &[
            (HookDecision::Block, "block"),
            (HookDecision::Approve, "approve"),
        ],
    );
    open_keeps_unknown(
        HookDecision::KNOWN,
        HookDecision::Other("from-a-newer-build".into()),
        "hook decision",
    );
}

#[test]
fn terminal_reason_wire_names() {
    use TerminalReason::*;
    wire_names(
        TerminalReason::KNOWN,
        &[
            (Completed, "completed"),
            (MaxTurns, "max_turns"),
            (MaxBudgetUsd, "max_budget_usd"),
            (
                StructuredOutputRetryExhausted,
                "structured_output_retry_exhausted",
            ),
            (ModelError, "model_error"),
            (ApiError, "api_error"),
            (Error, "error"),
            (HookStopped, "hook_stopped"),
            (Crashed, "crashed"),
        ],
    );
    open_keeps_unknown(
        TerminalReason::KNOWN,
        Other("from-a-newer-build".into()),
        "terminal reason",
    );
}

#[test]
fn mcp_server_state_wire_names() {
    use McpServerState::*;
    wire_names(
        McpServerState::KNOWN,
        &[
            (Connected, "connected"),
            (Failed, "failed"),
            (NeedsAuth, "needs-auth"),
            (Pending, "pending"),
            (Disabled, "disabled"),
        ],
    );
    open_keeps_unknown(
        McpServerState::KNOWN,
        Other("from-a-newer-build".into()),
        "MCP server status",
    );
}

#[test]
fn backend_type_wire_names() {
    use BackendType::*;
    wire_names(
        BackendType::KNOWN,
        &[
            (InProcess, "in-process"),
            (Tmux, "tmux"),
            (ITerm2, "iterm2"),
        ],
    );
    open_keeps_unknown(
        BackendType::KNOWN,
        Other("from-a-newer-build".into()),
        "backend type",
    );
}

#[test]
fn from_never_puts_a_known_name_in_other() {
    assert_eq!(BackendType::from("tmux"), BackendType::Tmux);
    assert_eq!(BackendType::from(String::from("tmux")), BackendType::Tmux);
    assert!(BackendType::from("tmux").is_known());
    assert!(!BackendType::from("wezterm").is_known());
    assert_eq!(BackendType::from("wezterm").as_str(), "wezterm");
}

#[test]
fn names_are_case_sensitive_on_the_wire() {
    // A file that says `Tmux` is not the `tmux` fleet writes: it is kept, not corrected.
    let read: BackendType = serde_json::from_str("\"Tmux\"").unwrap();
    assert_eq!(read, BackendType::Other("Tmux".into()));
    assert!("Tmux".parse::<BackendType>().is_err());
}

#[test]
fn a_field_of_a_vocabulary_keeps_the_bytes_it_had_as_a_string() {
    #[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Note {
        decision: PermissionDecision,
        reason_type: PermissionReasonType,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        terminal_reason: Option<TerminalReason>,
    }
    let json = r#"{"decision":"reject","reason_type":"workspace"}"#;
    let note: Note = serde_json::from_str(json).unwrap();
    assert_eq!(note.decision, PermissionDecision::Reject);
    assert_eq!(note.reason_type, PermissionReasonType::Workspace);
    assert_eq!(serde_json::to_string(&note).unwrap(), json);
    let null: Note = serde_json::from_str(
        r#"{"decision":"accept","reason_type":"mode","terminal_reason":null}"#,
    )
    .unwrap();
    assert_eq!(null.terminal_reason, None);
}
