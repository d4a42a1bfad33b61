//! `--permission-prompt-tool mcp__server__tool`: an MCP tool answers the "ask" decisions, as
//! in Claude Code.
//!
//! The tool is called with `{"tool_name", "input", "tool_use_id"}` and answers with a text
//! block holding JSON: `{"behavior": "allow", "updatedInput": {…}}` or
//! `{"behavior": "deny", "message": "…"}`. An answer that is not one of those, or a tool that
//! fails, is a refusal (and a warning on stderr): a broken approver must never let a call
//! through. `--permission-prompt-tool stdio` (the SDK answers over the control protocol) is
//! wired by the control module; here it leaves the approver as it was.

use crate::args::PrintArgs;
use anyhow::bail;
use fleet_runtime::approval::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::{Tool, ToolContext, Workspace};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

/// The `--permission-prompt-tool` value that means "ask the SDK".
pub const STDIO: &str = "stdio";

/// The approver the run uses: the MCP tool `--permission-prompt-tool` names, else `current`.
/// A name that is neither `stdio` nor one of the session's MCP tools is an error naming the
/// flag.
pub fn approver(
    args: &PrintArgs,
    mcp_tools: &[Arc<dyn Tool>],
    cwd: &Path,
    current: Option<Arc<dyn Approver>>,
) -> anyhow::Result<Option<Arc<dyn Approver>>> {
    let Some(name) = args.permission_prompt_tool.as_deref() else {
        return Ok(current);
    };
    if name == STDIO {
        return Ok(current);
    }
    if !name.starts_with("mcp__") {
        bail!(
            "--permission-prompt-tool {name:?}: give `stdio` (the SDK answers) or the name of \
             an MCP tool (mcp__<server>__<tool>)"
        );
    }
    let Some(tool) = mcp_tools.iter().find(|t| t.name() == name) else {
        let mut names: Vec<&str> = mcp_tools.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        bail!(
            "--permission-prompt-tool {name}: no such MCP tool in this session (the MCP tools \
             are: {}); add its server with --mcp-config",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    };
    Ok(Some(Arc::new(PromptToolApprover {
        tool: tool.clone(),
        ctx: ToolContext::new(cwd.to_path_buf(), Arc::new(Workspace::new(cwd))),
    })))
}

/// What the permission prompt tool decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAnswer {
    /// Run the call, with `updated_input` in place of the model's input when given.
    Allow {
        updated_input: Option<Value>,
    },
    Deny {
        message: String,
    },
}

impl PromptAnswer {
    /// Reads the tool's text answer; `Err` says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: Value = serde_json::from_str(text.trim())
            .map_err(|e| format!("the answer is not JSON ({e}): {text:?}"))?;
        match value.get("behavior").and_then(Value::as_str) {
            Some("allow") => Ok(Self::Allow {
                updated_input: value.get("updatedInput").filter(|v| v.is_object()).cloned(),
            }),
            Some("deny") => Ok(Self::Deny {
                message: value
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("denied by the permission prompt tool")
                    .to_string(),
            }),
            _ => Err(format!(
                "the answer has no \"behavior\" of \"allow\" or \"deny\": {text:?}"
            )),
        }
    }
}

/// Asks an MCP tool.
pub struct PromptToolApprover {
    tool: Arc<dyn Tool>,
    ctx: ToolContext,
}

impl PromptToolApprover {
    /// The tool's decision on one call; a failing tool or a bad answer is an error.
    pub async fn decide(
        &self,
        tool_name: &str,
        input: &Value,
        tool_use_id: &str,
    ) -> Result<PromptAnswer, String> {
        let args = json!({"tool_name": tool_name, "input": input, "tool_use_id": tool_use_id});
        let output = self
            .tool
            .call(args, &self.ctx)
            .await
            .map_err(|e| format!("{} failed: {e}", self.tool.name()))?;
        if output.is_error {
            return Err(format!("{} failed: {}", self.tool.name(), output.content));
        }
        PromptAnswer::parse(&output.content)
    }
}

impl Approver for PromptToolApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(async move {
            match self
                .decide(request.tool, request.input, request.tool_use_id)
                .await
            {
                Ok(PromptAnswer::Allow { updated_input }) => Approval::Allow { updated_input },
                Ok(PromptAnswer::Deny { message }) => Approval::Deny {
                    message: Some(message).filter(|m| !m.trim().is_empty()),
                },
                Err(err) => {
                    eprintln!(
                        "fleet: warning: --permission-prompt-tool: {}; the call is refused",
                        crate::visible::visible(&err)
                    );
                    Approval::deny()
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_as_claude_code_shapes_them() {
        assert_eq!(
            PromptAnswer::parse(r#"{"behavior":"allow","updatedInput":{"command":"ls"}}"#),
            Ok(PromptAnswer::Allow {
                updated_input: Some(json!({"command": "ls"}))
            })
        );
        assert_eq!(
            PromptAnswer::parse(r#" {"behavior":"deny","message":"no"} "#),
            Ok(PromptAnswer::Deny {
                message: "no".into()
            })
        );
        assert!(PromptAnswer::parse(r#"{"behavior":"maybe"}"#).is_err());
        assert!(PromptAnswer::parse("yes").is_err());
    }
}
