//! `--permission-prompt-tool stdio`: every "ask" decision, the main agent's and every
//! subagent's, becomes a `can_use_tool` request to the SDK host, whose `canUseTool` callback
//! answers allow (perhaps with a corrected input and permission updates) or deny (perhaps
//! stopping the turn).

use super::link::ControlLink;
use fleet_protocol::control::{
    CanUseTool, CanUseToolAnswer, ControlRequest, Destination, PermissionUpdate, RuleBehavior,
    RuleValue,
};
use fleet_runtime::approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use fleet_runtime::controls::ControlError;
use fleet_tools::permissions::Decision;
use fleet_tools::Access;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the approver does with the parts of an answer that reach beyond the call.
pub trait AnswerEffects: Send + Sync {
    /// `updatedPermissions` of an allow: rules, mode or folders to change from now on.
    fn apply_updates(&self, updates: &[Value]) -> Result<(), ControlError>;
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
        let asked = ControlRequest::CanUseTool(Box::new(request_body(&request)));
        let tool = request.tool.to_string();
        Box::pin(async move {
            // Dropped unanswered when the agent is cancelled: the link withdraws it then.
            match self.link.request(asked, &self.cancel).await {
                Ok(answer) => self.read_answer(answer, &tool),
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
    fn read_answer(&self, answer: Value, tool: &str) -> Approval {
        match serde_json::from_value::<CanUseToolAnswer>(answer) {
            Ok(CanUseToolAnswer::Allow {
                updated_input,
                updated_permissions,
            }) => {
                if let Some(updates) = updated_permissions {
                    if let Err(err) = self.effects.apply_updates(&updates) {
                        eprintln!(
                            "fleet: the SDK host's permission updates were not applied: {err}"
                        );
                    }
                }
                let updated_input = updated_input.filter(Value::is_object);
                Approval::Allow { updated_input }
            }
            Ok(CanUseToolAnswer::Deny { message, interrupt }) => {
                if interrupt == Some(true) {
                    self.effects.interrupt();
                }
                let message = message.filter(|m| !m.trim().is_empty());
                Approval::Deny {
                    message: Some(message.unwrap_or_else(|| {
                        format!("The user refused this {tool} call. Do not retry it; ask the user what to do instead.")
                    })),
                }
            }
            Err(_) => Approval::Deny {
                message: Some(format!(
                    "This {tool} call was not run: the SDK host's answer had no \"behavior\" \
                     of \"allow\" or \"deny\"."
                )),
            },
        }
    }
}

/// The `can_use_tool` request for one call, as Claude Code words it.
fn request_body(request: &ApprovalRequest<'_>) -> CanUseTool {
    let blocked_path = match &request.decision.access {
        Access::Read(path) | Access::Write(path) => Some(path.display().to_string()),
        _ => None,
    };
    CanUseTool {
        tool_name: request.tool.to_string(),
        display_name: request.tool.to_string(),
        input: request.input.clone(),
        description: request
            .input
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        permission_suggestions: suggestions(request.decision),
        blocked_path,
        decision_reason: request.decision.message(),
        tool_use_id: request.tool_use_id.to_string(),
        // Subagents' questions say whose they are; the main agent's carry no agent.
        agent_id: (request.agent_id != "main").then(|| request.agent_id.to_string()),
    }
}

/// The updates a host could give back to stop being asked: the exact allow rules (kept in
/// `.claude/settings.local.json`), and for file edits, the acceptEdits mode for the session.
fn suggestions(decision: &Decision) -> Vec<PermissionUpdate> {
    let rules: Vec<RuleValue> = decision
        .suggested_rules()
        .iter()
        .map(|rule| RuleValue::from_rule_string(rule))
        .collect();
    let mut out = Vec::new();
    if !rules.is_empty() {
        out.push(PermissionUpdate::AddRules {
            rules,
            behavior: RuleBehavior::Allow,
            destination: Destination::LocalSettings,
        });
    }
    if matches!(decision.access, Access::Write(_)) {
        out.push(PermissionUpdate::SetMode {
            mode: fleet_protocol::PermissionMode::AcceptEdits,
            destination: Destination::Session,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn rules_split_into_tool_and_content() {
        let value = |rule: &str| serde_json::to_value(RuleValue::from_rule_string(rule)).unwrap();
        assert_eq!(
            value("Bash(git status)"),
            json!({"toolName": "Bash", "ruleContent": "git status"})
        );
        assert_eq!(
            value("Edit(/p/a(1).rs)"),
            json!({"toolName": "Edit", "ruleContent": "/p/a(1).rs"})
        );
        assert_eq!(
            value("mcp__calc__add"),
            json!({"toolName": "mcp__calc__add"})
        );
    }
}
