//! The hooks around one tool call, for the dispatcher: `PreToolUse` before the permission
//! check, `PostToolUse` / `PostToolUseFailure` after the call, `PermissionRequest` and
//! `Notification` when the user would be asked.
//!
//! A tool hook saying `continue: false` stops the agent: a PreToolUse hook's call is refused
//! (its result says why), a PostToolUse / PostToolUseFailure hook's call has run and keeps its
//! result; calls of the same reply not yet started are refused too, and the agent loop makes
//! no further request in this run (see [`HookStop`]).

use super::{Caller, HookEvent, Hooks, ToolCallRef, Verdict};
use crate::sink::EventSink;
use fleet_tools::{ToolError, ToolOutput};
use serde_json::Value;
use std::sync::{Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// What a `PermissionRequest` hook answered on the user's behalf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HookAnswer {
    /// Run the call.
    Allow,
    /// Refuse it, for this reason (shown to the model).
    Refuse(String),
}

/// Set by a tool hook that said `continue: false`, for the agent loop to read once the
/// reply's calls are answered: the hook's `stopReason`.
#[derive(Debug, Default)]
pub(crate) struct HookStop(Mutex<Option<String>>);

impl HookStop {
    fn record(&self, reason: &str) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert_with(|| reason.to_string());
    }

    fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The reason, once the calls are answered.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// An agent's hooks, bound to the agent for one reply's calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolHooks<'a> {
    pub hooks: &'a Hooks,
    pub caller: &'a Caller,
    pub stop: &'a HookStop,
}

impl ToolHooks<'_> {
    /// The PreToolUse hooks' verdict. After a hook stopped the agent, no other call of the
    /// reply runs (nor do its hooks): the verdict refuses it.
    pub async fn before(
        &self,
        call: ToolCallRef<'_>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        if let Some(reason) = self.stop.get() {
            return Verdict {
                blocked: Some(format!("not run: a hook stopped the agent ({reason})")),
                ..Verdict::default()
            };
        }
        let mut verdict = self
            .hooks
            .pre_tool_use(self.caller, call, sink, cancel)
            .await;
        if let Some(reason) = verdict.stop.clone() {
            self.stop.record(&reason);
            verdict.blocked = Some(format!(
                "{} hook stopped the agent: {reason}",
                HookEvent::PreToolUse
            ));
        }
        verdict
    }

    /// Whether a `PermissionRequest` hook answers for the user (`None`: ask as usual). A
    /// `Notification` goes out first when someone will be asked.
    pub async fn on_ask(
        &self,
        name: &str,
        input: &Value,
        will_ask: bool,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Option<HookAnswer> {
        let verdict = self
            .hooks
            .permission_request(self.caller, name, input, sink, cancel)
            .await;
        if let Some(reason) = verdict.refusal() {
            return Some(HookAnswer::Refuse(reason));
        }
        if verdict.allows() {
            return Some(HookAnswer::Allow);
        }
        if will_ask {
            let message = format!("fleet needs your permission to use {name}");
            self.hooks
                .notification(self.caller, &message, "permission_prompt", sink, cancel)
                .await;
        }
        None
    }

    /// `TaskCreated` / `TaskCompleted` for a task-list call about to change the list: a
    /// TaskCreate, or a TaskUpdate that marks a task completed. `Some(reason)` when a hook
    /// refuses the change (exit 2), which then does not happen.
    pub async fn task_gate(
        &self,
        name: &str,
        input: &Value,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let text = |key: &str| input.get(key).cloned().unwrap_or(Value::Null);
        let verdict = match name {
            "TaskCreate" => {
                let task = serde_json::json!({
                    "task_subject": text("subject"),
                    "task_description": text("description"),
                });
                self.hooks
                    .task_created(self.caller, task, sink, cancel)
                    .await
            }
            "TaskUpdate" if input.get("status").and_then(Value::as_str) == Some("completed") => {
                let task = serde_json::json!({
                    "task_id": text("taskId"),
                    "task_subject": text("subject"),
                });
                self.hooks
                    .task_completed(self.caller, task, sink, cancel)
                    .await
            }
            _ => return None,
        };
        verdict.refusal()
    }

    /// Runs the post-call hooks and adds what they tell the model to the result: a
    /// `PostToolUse` block reason, and any `additionalContext` (`pre_context` is the
    /// PreToolUse hooks').
    pub async fn after(
        &self,
        call: ToolCallRef<'_>,
        result: Result<ToolOutput, ToolError>,
        pre_context: Option<String>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        if cancel.is_cancelled() {
            return result;
        }
        let failed = match &result {
            Ok(output) if !output.is_error => None,
            Ok(output) => Some(output.content.clone()),
            Err(err) => Some(err.to_string()),
        };
        let verdict = match (&failed, &result) {
            (Some(error), _) => {
                self.hooks
                    .post_tool_use_failure(self.caller, call, error, sink, cancel)
                    .await
            }
            (None, Ok(output)) => {
                let response = output
                    .structured
                    .clone()
                    .unwrap_or_else(|| Value::String(output.content.clone()));
                self.hooks
                    .post_tool_use(self.caller, call, response, sink, cancel)
                    .await
            }
            (None, Err(_)) => Verdict::default(),
        };
        if let Some(reason) = &verdict.stop {
            self.stop.record(reason);
        }
        let mut notes: Vec<String> = pre_context.into_iter().collect();
        if let Some(reason) = &verdict.blocked {
            notes.push(format!(
                "{} hook feedback: {reason}",
                hook_name(failed.is_some())
            ));
        }
        notes.extend(verdict.context);
        if notes.is_empty() {
            return result;
        }
        let extra = notes.join("\n");
        match result {
            Ok(mut output) => {
                output.content = format!("{}\n\n{extra}", output.content);
                Ok(output)
            }
            Err(err) => Err(err.with_feedback(extra)),
        }
    }
}

fn hook_name(failed: bool) -> &'static str {
    if failed {
        "PostToolUseFailure"
    } else {
        "PostToolUse"
    }
}
