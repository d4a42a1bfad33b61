//! `--permission-prompt-tool stdio`: every "ask" decision, the main agent's and every
//! subagent's, becomes a `can_use_tool` request to the SDK host, whose `canUseTool` callback
//! answers allow (perhaps with a corrected input and permission updates) or deny (perhaps
//! stopping the turn).

use super::link::ControlLink;
use fleet_runtime::approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::permissions::Decision;
use fleet_tools::Access;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the approver does with the parts of an answer that reach beyond the call.
pub trait AnswerEffects: Send + Sync {
    /// `updatedPermissions` of an allow: rules, mode or folders to change from now on.
    fn apply_updates(&self, updates: &[Value]) -> Result<(), String>;
    /// `interrupt: true` on a deny: the host wants the whole turn stopped.
    fn interrupt(&self);
}

pub struct SdkApprover {
    link: Arc<ControlLink>,
    effects: Arc<dyn AnswerEffects>,
    /// Requests still waiting when the session ends are withdrawn.
    cancel: CancellationToken,
}

impl SdkApprover {
    pub fn new(
        link: Arc<ControlLink>,
        effects: Arc<dyn AnswerEffects>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            link,
            effects,
            cancel,
        }
    }
}

impl Approver for SdkApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let body = request_body(&request);
        let tool = request.tool.to_string();
        Box::pin(async move {
            // Dropped unanswered when the agent is cancelled: the link withdraws it then.
            match self.link.request("can_use_tool", body, &self.cancel).await {
                Ok(answer) => self.read_answer(&answer, &tool),
                Err(err) => Approval::Deny {
                    message: Some(format!(
                        "This {tool} call was not run: {err}. Do not retry it."
                    )),
                },
            }
        })
    }
}

impl SdkApprover {
    fn read_answer(&self, answer: &Value, tool: &str) -> Approval {
        match answer.get("behavior").and_then(Value::as_str) {
            Some("allow") => {
                if let Some(Value::Array(updates)) = answer.get("updatedPermissions") {
                    if let Err(err) = self.effects.apply_updates(updates) {
                        eprintln!(
                            "fleet: the SDK host's permission updates were not applied: {err}"
                        );
                    }
                }
                let updated_input = answer
                    .get("updatedInput")
                    .filter(|input| input.is_object())
                    .cloned();
                Approval::Allow { updated_input }
            }
            Some("deny") => {
                if answer.get("interrupt").and_then(Value::as_bool) == Some(true) {
                    self.effects.interrupt();
                }
                let message = answer
                    .get("message")
                    .and_then(Value::as_str)
                    .filter(|m| !m.trim().is_empty())
                    .map(str::to_string);
                Approval::Deny {
                    message: Some(message.unwrap_or_else(|| {
                        format!("The user refused this {tool} call. Do not retry it; ask the user what to do instead.")
                    })),
                }
            }
            _ => Approval::Deny {
                message: Some(format!(
                    "This {tool} call was not run: the SDK host's answer had no \"behavior\" \
                     of \"allow\" or \"deny\"."
                )),
            },
        }
    }
}

/// The `can_use_tool` request for one call, as Claude Code words it.
fn request_body(request: &ApprovalRequest<'_>) -> Value {
    let mut body = Map::new();
    body.insert("subtype".into(), json!("can_use_tool"));
    body.insert("tool_name".into(), json!(request.tool));
    body.insert("display_name".into(), json!(request.tool));
    body.insert("input".into(), request.input.clone());
    if let Some(description) = request.input.get("description").and_then(Value::as_str) {
        body.insert("description".into(), json!(description));
    }
    body.insert(
        "permission_suggestions".into(),
        Value::Array(suggestions(request.decision)),
    );
    if let Access::Read(path) | Access::Write(path) = &request.decision.access {
        body.insert("blocked_path".into(), json!(path.display().to_string()));
    }
    body.insert("decision_reason".into(), json!(request.decision.message()));
    body.insert("tool_use_id".into(), json!(request.tool_use_id));
    // Subagents' questions say whose they are; the main agent's carry no agent.
    if request.agent_id != "main" {
        body.insert("agent_id".into(), json!(request.agent_id));
    }
    Value::Object(body)
}

/// The updates a host could give back to stop being asked: the exact allow rules (kept in
/// `.claude/settings.local.json`), and for file edits, the acceptEdits mode for the session.
fn suggestions(decision: &Decision) -> Vec<Value> {
    let rules: Vec<Value> = decision
        .suggested_rules()
        .iter()
        .map(|rule| rule_value(rule))
        .collect();
    let mut out = Vec::new();
    if !rules.is_empty() {
        out.push(json!({
            "type": "addRules", "rules": rules, "behavior": "allow",
            "destination": "localSettings",
        }));
    }
    if matches!(decision.access, Access::Write(_)) {
        out.push(json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}));
    }
    out
}

/// `Bash(git status)` as `{"toolName": "Bash", "ruleContent": "git status"}`.
fn rule_value(rule: &str) -> Value {
    match rule.split_once('(') {
        Some((tool, rest)) if rest.ends_with(')') => {
            json!({"toolName": tool, "ruleContent": &rest[..rest.len() - 1]})
        }
        _ => json!({"toolName": rule}),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn rules_split_into_tool_and_content() {
        assert_eq!(
            rule_value("Bash(git status)"),
            json!({"toolName": "Bash", "ruleContent": "git status"})
        );
        assert_eq!(
            rule_value("Edit(/p/a(1).rs)"),
            json!({"toolName": "Edit", "ruleContent": "/p/a(1).rs"})
        );
        assert_eq!(
            rule_value("mcp__calc__add"),
            json!({"toolName": "mcp__calc__add"})
        );
    }
}
