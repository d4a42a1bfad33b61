//! What hooks decided: each run's exit code and stdout read as Claude Code reads them, then
//! all matching hooks' answers combined into one [`Verdict`].
//!
//! - exit 0: fine. Stdout may be JSON (`continue`, `stopReason`, `systemMessage`,
//!   `suppressOutput`, `decision` + `reason`, `hookSpecificOutput` with `permissionDecision`,
//!   `permissionDecisionReason`, `updatedInput`, `additionalContext`); plain stdout of
//!   `UserPromptSubmit` and `SessionStart` hooks is context for the model.
//! - exit 2: block; stderr is the reason (for the model, or the user for `UserPromptSubmit`).
//! - any other exit, a timeout, a failure to start: a non-blocking error shown to the user.

use super::config::HookEvent;
use super::run::{Ending, HookRun};
use fleet_protocol::{HookDecision, HookPermissionDecision};
use serde::Deserialize;
use serde_json::Value;

/// A PreToolUse hook's say on the permission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionVerdict {
    /// Run it without asking (a deny rule still refuses it).
    Allow,
    /// Go through the usual check and prompt.
    Ask,
    /// Refuse it.
    Deny,
}

/// Everything the matching hooks of one event said, combined.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Set when a hook blocked (exit 2, `decision: "block"`): the reason.
    pub blocked: Option<String>,
    /// PreToolUse / PermissionRequest: the strictest permission decision (deny over ask over
    /// allow) and its reason.
    pub permission: Option<(PermissionVerdict, String)>,
    /// A replacement tool input (the last hook's that gave one).
    pub updated_input: Option<Value>,
    /// Text for the model (`additionalContext`, or plain stdout where that counts).
    pub context: Vec<String>,
    /// Set when a hook said `continue: false`: the agent stops, with this reason for the user.
    pub stop: Option<String>,
    /// Messages for the user: `systemMessage`s and non-blocking errors (each without the
    /// hook's name, which the engine adds when it shows them).
    pub messages: Vec<String>,
}

impl Verdict {
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// The reason a tool call must be refused: a block or a deny decision.
    pub fn refusal(&self) -> Option<String> {
        if let Some(reason) = &self.blocked {
            return Some(reason.clone());
        }
        match &self.permission {
            Some((PermissionVerdict::Deny, reason)) => Some(reason.clone()),
            _ => None,
        }
    }

    /// Whether a hook allowed the call outright (and none denied it or asked).
    pub fn allows(&self) -> bool {
        matches!(self.permission, Some((PermissionVerdict::Allow, _)))
    }

    /// The context joined for the model, if any.
    pub fn context_text(&self) -> Option<String> {
        (!self.context.is_empty()).then(|| self.context.join("\n\n"))
    }

    fn set_permission(&mut self, verdict: PermissionVerdict, reason: String) {
        let rank = |v: PermissionVerdict| match v {
            PermissionVerdict::Allow => 0,
            PermissionVerdict::Ask => 1,
            PermissionVerdict::Deny => 2,
        };
        let stronger = self
            .permission
            .as_ref()
            .is_none_or(|(current, _)| rank(verdict) > rank(*current));
        if stronger {
            self.permission = Some((verdict, reason));
        }
    }

    /// Adds one hook's answer.
    pub fn add(&mut self, event: HookEvent, run: &HookRun) {
        match run.ending {
            Ending::Exited(0) => self.add_success(event, run),
            Ending::Exited(2) => {
                let reason = run.stderr.trim();
                let reason = if reason.is_empty() {
                    "blocked by a hook (no reason given)".to_string()
                } else {
                    reason.to_string()
                };
                if self.blocked.is_none() {
                    self.blocked = Some(reason);
                } else if let Some(blocked) = &mut self.blocked {
                    blocked.push('\n');
                    blocked.push_str(&reason);
                }
            }
            Ending::Exited(code) => self
                .messages
                .push(format!("error (exit {code}): {}", first_line(&run.stderr))),
            Ending::TimedOut => self.messages.push("timed out and was killed".to_string()),
            Ending::Cancelled => {}
            Ending::Failed(ref why) => self.messages.push(format!("failed: {why}")),
        }
    }

    fn add_success(&mut self, event: HookEvent, run: &HookRun) {
        let text = run.stdout.trim();
        let output = text
            .starts_with('{')
            .then(|| serde_json::from_str::<HookOutput>(text).ok())
            .flatten();
        let Some(output) = output else {
            if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
                && !text.is_empty()
            {
                self.context.push(text.to_string());
            }
            return;
        };
        if output.continue_ == Some(false) {
            self.stop = Some(
                output
                    .stop_reason
                    .clone()
                    .unwrap_or_else(|| format!("stopped by a {event} hook")),
            );
        }
        if let Some(message) = output.system_message.filter(|m| !m.is_empty()) {
            self.messages.push(message);
        }
        let reason = output.reason.unwrap_or_default();
        match output.decision {
            Some(HookDecision::Block) => {
                let reason = if reason.is_empty() {
                    format!("blocked by a {event} hook")
                } else {
                    reason.clone()
                };
                self.blocked.get_or_insert(reason);
            }
            // The older spelling of a PreToolUse allow.
            Some(HookDecision::Approve) if event == HookEvent::PreToolUse => {
                self.set_permission(PermissionVerdict::Allow, reason.clone())
            }
            _ => {}
        }
        let Some(specific) = output.hook_specific_output else {
            return;
        };
        if let Some(decision) = specific.permission_decision {
            let reason = specific
                .permission_decision_reason
                .clone()
                .unwrap_or_default();
            match decision {
                HookPermissionDecision::Allow => {
                    self.set_permission(PermissionVerdict::Allow, reason)
                }
                HookPermissionDecision::Deny => self.set_permission(
                    PermissionVerdict::Deny,
                    if reason.is_empty() {
                        "denied by a PreToolUse hook".into()
                    } else {
                        reason
                    },
                ),
                HookPermissionDecision::Ask => self.set_permission(PermissionVerdict::Ask, reason),
                // An answer this build does not know is ignored, as Claude Code ignores it.
                HookPermissionDecision::Other(_) => {}
            }
        }
        // PermissionRequest answers with {"decision": {"behavior": "allow"|"deny", …}}.
        if let Some(Value::Object(d)) = &specific.decision {
            let message = d
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            match d.get("behavior").and_then(Value::as_str) {
                Some("allow") => self.set_permission(PermissionVerdict::Allow, message),
                Some("deny") => self.set_permission(
                    PermissionVerdict::Deny,
                    if message.is_empty() {
                        "denied by a PermissionRequest hook".into()
                    } else {
                        message
                    },
                ),
                _ => {}
            }
            if let Some(input) = d.get("updatedInput").filter(|v| v.is_object()) {
                self.updated_input = Some(input.clone());
            }
        }
        if let Some(input) = specific.updated_input.filter(Value::is_object) {
            self.updated_input = Some(input);
        }
        if let Some(context) = specific.additional_context.filter(|c| !c.is_empty()) {
            self.context.push(context);
        }
    }
}

/// A hook's JSON answer; unknown keys are ignored, as a newer hook may send some.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookOutput {
    #[serde(rename = "continue")]
    continue_: Option<bool>,
    stop_reason: Option<String>,
    system_message: Option<String>,
    suppress_output: Option<bool>,
    decision: Option<HookDecision>,
    reason: Option<String>,
    hook_specific_output: Option<SpecificOutput>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecificOutput {
    permission_decision: Option<HookPermissionDecision>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
    decision: Option<Value>,
}

/// Whether a run's JSON answer says `suppressOutput: true`: its stdout is then not shown to
/// the user (in `hook_response` lines and wherever hook output is displayed). What the stdout
/// decides is still read.
pub fn suppresses_output(run: &HookRun) -> bool {
    if run.ending != Ending::Exited(0) {
        return false;
    }
    let text = run.stdout.trim();
    text.starts_with('{')
        && serde_json::from_str::<HookOutput>(text)
            .is_ok_and(|output| output.suppress_output == Some(true))
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or("(no output)")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run(code: i32, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            ending: Ending::Exited(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    fn verdict(event: HookEvent, runs: &[HookRun]) -> Verdict {
        let mut v = Verdict::default();
        for r in runs {
            v.add(event, r);
        }
        v
    }

    #[test]
    fn exit_two_blocks_with_stderr() {
        let v = verdict(HookEvent::PreToolUse, &[run(2, "", "no rm please\n")]);
        assert_eq!(v.refusal().as_deref(), Some("no rm please"));
    }

    #[test]
    fn other_exit_codes_are_messages_not_blocks() {
        let v = verdict(HookEvent::PreToolUse, &[run(1, "", "boom")]);
        assert!(v.refusal().is_none());
        assert_eq!(v.messages, ["error (exit 1): boom"]);
    }

    #[test]
    fn deny_wins_over_allow_and_input_is_replaced() {
        let allow = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "updatedInput": {"command": "echo safe"}}}"#;
        let deny = r#"{"hookSpecificOutput": {"permissionDecision": "deny",
            "permissionDecisionReason": "not today"}}"#;
        let v = verdict(HookEvent::PreToolUse, &[run(0, allow, "")]);
        assert!(v.allows());
        assert_eq!(v.updated_input.as_ref().unwrap()["command"], "echo safe");
        let v = verdict(
            HookEvent::PreToolUse,
            &[run(0, allow, ""), run(0, deny, "")],
        );
        assert_eq!(v.refusal().as_deref(), Some("not today"));
        assert!(!v.allows());
    }

    #[test]
    fn json_fields_are_read() {
        let out = r#"{"continue": false, "stopReason": "enough", "systemMessage": "hi",
            "decision": "block", "reason": "tests fail",
            "hookSpecificOutput": {"additionalContext": "ctx"}}"#;
        let v = verdict(HookEvent::Stop, &[run(0, out, "")]);
        assert_eq!(v.blocked.as_deref(), Some("tests fail"));
        assert_eq!(v.stop.as_deref(), Some("enough"));
        assert_eq!(v.messages, ["hi"]);
        assert_eq!(v.context_text().as_deref(), Some("ctx"));
    }

    #[test]
    fn suppress_output_is_read_from_a_successful_answer_only() {
        assert!(suppresses_output(&run(
            0,
            r#"{"suppressOutput": true}"#,
            ""
        )));
        assert!(!suppresses_output(&run(
            0,
            r#"{"suppressOutput": false}"#,
            ""
        )));
        assert!(!suppresses_output(&run(0, "plain text", "")));
        assert!(!suppresses_output(&run(
            2,
            r#"{"suppressOutput": true}"#,
            ""
        )));
    }

    #[test]
    fn plain_stdout_is_context_only_where_claude_code_says_so() {
        let v = verdict(
            HookEvent::UserPromptSubmit,
            &[run(0, "today is Monday", "")],
        );
        assert_eq!(v.context, ["today is Monday"]);
        let v = verdict(HookEvent::PreToolUse, &[run(0, "chatter", "")]);
        assert!(v.context.is_empty());
    }
}
