//! Running the tool calls of one assistant reply.
//!
//! Consecutive read-only calls run together (up to the configured concurrency); any other call
//! runs alone, after everything before it. Results come back in call order, and every call
//! gets exactly one result — refused, failed, panicked or cancelled ones included — because
//! the API rejects a conversation with a tool_use left unanswered.

use crate::approval::{Approval, ApprovalRequest, Approver};
use crate::hooks::tool::HookAnswer;
use crate::sink::EventSink;
use crate::watchdog::WaitingFor;
use fleet_protocol::PermissionDecision::{self, Accept, Reject};
use fleet_protocol::PermissionReasonType as ReasonType;
use fleet_protocol::{ContentBlock, EventKind, PermissionDenial, PermissionNote, ToolResultEvent};
use fleet_tools::permissions::{Behavior, Decision, DecisionReason, Permissions};
use fleet_tools::{Parallelism, Tool, ToolContext, ToolError, ToolPool};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One tool_use block to answer.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl Call {
    /// The call as its tool hooks see it.
    fn hook_ref(&self) -> crate::hooks::ToolCallRef<'_> {
        crate::hooks::ToolCallRef {
            name: &self.name,
            input: &self.input,
            id: &self.id,
        }
    }
}

/// The answer to one call: the block for the conversation, and what went wrong with
/// permissions, if anything.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub block: ContentBlock,
    pub structured: Option<Arc<Value>>,
    pub denial: Option<PermissionDenial>,
}

pub(crate) struct Dispatcher<'a> {
    pub tools: &'a ToolPool,
    pub permissions: &'a Permissions,
    pub ctx: &'a ToolContext,
    pub sink: &'a EventSink,
    pub cancel: &'a CancellationToken,
    pub concurrency: usize,
    pub approver: Option<&'a dyn Approver>,
    /// The API request id of the reply whose calls these are.
    pub request_id: Option<&'a str>,
    /// The agent's hooks (PreToolUse, PostToolUse, PermissionRequest, …), if it has any.
    pub hooks: Option<crate::hooks::tool::ToolHooks<'a>>,
}

impl Dispatcher<'_> {
    pub async fn run(&self, calls: Vec<Call>) -> Vec<Outcome> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut pending = calls.into_iter().peekable();
        while let Some(first) = pending.next() {
            let mut batch = vec![first];
            if self.parallelism(&batch[0]) != Parallelism::Exclusive {
                while let Some(next) =
                    pending.next_if(|c| self.parallelism(c) != Parallelism::Exclusive)
                {
                    batch.push(next);
                }
            }
            // Shared calls take a permit of the tool concurrency; unbounded ones (subagents,
            // limited by the spawn limits instead) do not, so one reply can start many.
            let permits = tokio::sync::Semaphore::new(self.concurrency.max(1));
            let width = batch.len();
            let mut results = futures::stream::iter(batch.into_iter().map(|c| {
                let permits = &permits;
                async move {
                    let _permit = match self.parallelism(&c) {
                        Parallelism::Unbounded => None,
                        _ => permits.acquire().await.ok(),
                    };
                    self.answer(c).await
                }
            }))
            .buffered(width.max(1));
            report(self.sink, &mut results, &mut outcomes).await;
        }
        outcomes
    }

    fn parallelism(&self, call: &Call) -> Parallelism {
        self.tools
            .get(&call.name)
            .map_or(Parallelism::Exclusive, |t| t.parallelism())
    }

    /// Answers one call. Everything on its way — the permission check, hooks, the question,
    /// the tool — runs under one panic guard: a panic anywhere becomes an error result for the
    /// model, so the call is never left without an answer and the agent goes on.
    async fn answer(&self, call: Call) -> (Outcome, ToolResultEvent) {
        // A subagent's call is watched as the wait for that child, which says more.
        let wait = (self.parallelism(&call) != Parallelism::Unbounded).then(|| {
            self.sink.waiting_for(WaitingFor::Tool {
                name: call.name.clone(),
                tool_use_id: call.id.clone(),
            })
        });
        let guarded = AssertUnwindSafe(self.execute(&call)).catch_unwind().await;
        drop(wait);
        let (result, note, denied) = guarded.unwrap_or_else(|_| {
            (
                Err(ToolError::Internal {
                    message: format!(
                        "{} failed unexpectedly (internal error while checking or running the \
                         call). Try a different approach.",
                        call.name
                    ),
                    source: None,
                }),
                self::note(Reject, ReasonType::InternalError, None),
                false,
            )
        });
        let (mut content, is_error, structured, images) = match result {
            Ok(output) => (
                output.content,
                output.is_error,
                output.structured.map(Arc::new),
                output.images,
            ),
            Err(err) => (
                format!("<tool_use_error>{err}</tool_use_error>"),
                true,
                None,
                Vec::new(),
            ),
        };
        // Tools build their output by appending, which leaves spare capacity (up to half of
        // it); the conversation keeps this text for the agent's whole life.
        content.shrink_to_fit();
        let event = ToolResultEvent {
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: content.clone(),
            is_error,
            structured: structured.clone(),
            permission: note,
        };
        let outcome = Outcome {
            block: if images.is_empty() {
                ContentBlock::tool_result(&call.id, content, is_error)
            } else {
                ContentBlock::tool_result_with_images(&call.id, content, images, is_error)
            },
            structured,
            denial: denied.then(|| PermissionDenial {
                tool_name: call.name,
                tool_use_id: call.id,
                tool_input: call.input,
            }),
        };
        (outcome, event)
    }

    async fn execute(
        &self,
        call: &Call,
    ) -> (
        Result<fleet_tools::ToolOutput, ToolError>,
        PermissionNote,
        bool,
    ) {
        let Some(tool) = self.tools.get(&call.name) else {
            let err = ToolError::UnknownTool {
                name: call.name.clone(),
                available: self.tools.names().join(", "),
            };
            return (Err(err), note(Reject, ReasonType::UnknownTool, None), false);
        };
        if self.cancel.is_cancelled() {
            return (
                Err(ToolError::Cancelled),
                note(Reject, ReasonType::Cancelled, None),
                false,
            );
        }
        let hooked = match &self.hooks {
            Some(hooks) => {
                Some(Box::pin(hooks.before(call.hook_ref(), self.sink, self.cancel)).await)
            }
            None => None,
        };
        if let Some(reason) = hooked.as_ref().and_then(|v| v.refusal()) {
            let err = ToolError::HookRefused {
                hook: "PreToolUse",
                message: format!("PreToolUse hook refused this call: {reason}"),
                reason: reason.to_string(),
            };
            return (Err(err), note(Reject, ReasonType::Hook, None), true);
        }
        // A hook's `updatedInput` replaces the model's input for the check and the call.
        let rewritten = hooked
            .as_ref()
            .and_then(|v| v.updated_input.clone())
            .map(|input| Call {
                input,
                ..call.clone()
            });
        let call = rewritten.as_ref().unwrap_or(call);
        let hook_allows = hooked.as_ref().is_some_and(|v| v.allows());
        let pre_context = hooked.and_then(|v| v.context_text());
        let access = tool.access(&call.input, self.ctx);
        let read_only = tool.is_read_only_call(&call.input, self.ctx);
        let sandboxed = !read_only && tool.is_sandboxed_call(&call.input, self.ctx);
        let mut decision =
            self.permissions
                .check_call(tool.name(), read_only, sandboxed, &access, &self.ctx.cwd);
        if tool.asks_always() && decision.is_allowed() {
            decision = always_asks(decision, &self.ctx.cwd);
        }
        let reason = note_for(&decision.reason);
        let run = |call| self.call_hooked(tool, call, pre_context.clone());
        // A hook's allow answers the question a prompt would ask (in dontAsk too, where that
        // question became a refusal); it never lifts a deny rule, plan mode or the workspace
        // boundary, and the call still runs in the agent's sandbox.
        if hook_allows && decision.is_approvable() {
            return (run(call).await, note(Accept, ReasonType::Hook, None), false);
        }
        // Someone is about to be asked: a call that would fail is answered with its error
        // now (it did not run, so `reject`; not a permission denial), and one that would
        // succeed is shown as the change it makes.
        let asking = self.approver.is_some() || self.hooks.is_some();
        let change = if decision.behavior == Behavior::Ask && asking {
            match tool.propose(&call.input, self.ctx).await {
                Ok(change) => change,
                Err(err) => return (Err(err), reason(Reject), false),
            }
        } else {
            None
        };
        let hook_answer = match (&self.hooks, decision.behavior) {
            (Some(hooks), Behavior::Ask) => {
                let will_ask = self.approver.is_some();
                Box::pin(hooks.on_ask(&call.name, &call.input, will_ask, self.sink, self.cancel))
                    .await
            }
            _ => None,
        };
        match hook_answer {
            Some(HookAnswer::Allow) => {
                return (run(call).await, note(Accept, ReasonType::Hook, None), false)
            }
            Some(HookAnswer::Refuse(why)) => {
                let err = ToolError::HookRefused {
                    hook: "PermissionRequest",
                    message: format!("PermissionRequest hook refused: {why}"),
                    reason: why,
                };
                return (Err(err), note(Reject, ReasonType::Hook, None), true);
            }
            None => {}
        }
        match decision.behavior {
            Behavior::Allow => (run(call).await, reason(Accept), false),
            Behavior::Ask => match Box::pin(self.ask(call, &decision, change.as_ref())).await {
                Some(Approval::Allow { updated_input }) => {
                    let corrected = updated_input.map(|input| Call {
                        input,
                        ..call.clone()
                    });
                    let call = corrected.as_ref().unwrap_or(call);
                    (run(call).await, note(Accept, ReasonType::User, None), false)
                }
                Some(Approval::Deny { message }) => {
                    let err = ToolError::UserRefused {
                        tool: call.name.clone(),
                        message: message.unwrap_or_else(|| {
                            format!(
                                "The user refused this {} call. Do not retry it; ask the user \
                                 what to do instead.",
                                call.name
                            )
                        }),
                    };
                    (Err(err), note(Reject, ReasonType::User, None), true)
                }
                // Nobody to ask: "ask" is a refusal the caller sees in `permission_denials`
                // and can lift with an allow rule.
                None => {
                    let err = ToolError::denied(decision.clone());
                    (Err(err), reason(Reject), true)
                }
            },
            Behavior::Deny => {
                let err = ToolError::denied(decision.clone());
                (Err(err), reason(Reject), true)
            }
        }
    }

    /// The person's answer, or `None` when there is nobody to ask. Cancelling the agent while
    /// it waits counts as a no.
    async fn ask(
        &self,
        call: &Call,
        decision: &Decision,
        change: Option<&fleet_protocol::ProposedChange>,
    ) -> Option<Approval> {
        let approver = self.approver?;
        let request = ApprovalRequest {
            agent_id: &self.sink.agent().agent_id,
            tool: &call.name,
            input: &call.input,
            tool_use_id: &call.id,
            decision,
            change,
        };
        // Readers (the SDKs) learn that the session waits on someone, and when it no longer does.
        let approval = |waiting| EventKind::Approval {
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            waiting,
        };
        self.sink.emit(approval(true)).await;
        let answer = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Approval::deny(),
            answer = approver.approve(request) => answer,
        };
        self.sink.emit(approval(false)).await;
        Some(answer)
    }

    /// Runs the tool, then its PostToolUse hooks, whose feedback joins the result.
    ///
    /// Hooks, questions and proposals are boxed where they are awaited (here and in
    /// `execute`): a call's future is as large as its largest await, and a 10,000-agent
    /// fan-out holds 10,000 of them at once, nearly all on the plain path.
    async fn call_hooked(
        &self,
        tool: &Arc<dyn Tool>,
        call: &Call,
        pre_context: Option<String>,
    ) -> Result<fleet_tools::ToolOutput, ToolError> {
        if let Some(hooks) = &self.hooks {
            let refused =
                Box::pin(hooks.task_gate(&call.name, &call.input, self.sink, self.cancel)).await;
            if let Some(reason) = refused {
                return Err(ToolError::HookRefused {
                    hook: "TaskCreated/TaskCompleted",
                    message: format!("A task hook refused this change: {reason}"),
                    reason,
                });
            }
        }
        let result = self.call_tool(tool, call).await;
        match &self.hooks {
            Some(hooks) => {
                Box::pin(hooks.after(call.hook_ref(), result, pre_context, self.sink, self.cancel))
                    .await
            }
            None => result,
        }
    }

    /// Runs the tool with its own child token, so an interrupt reaches it, and turns a panic
    /// into an error result instead of taking the agent down.
    async fn call_tool(
        &self,
        tool: &Arc<dyn Tool>,
        call: &Call,
    ) -> Result<fleet_tools::ToolOutput, ToolError> {
        let ctx = self
            .ctx
            .for_call(self.cancel.child_token(), &call.id, self.request_id);
        let run = AssertUnwindSafe(tool.call(call.input.clone(), &ctx)).catch_unwind();
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(ToolError::Cancelled),
            result = run => match result {
                Ok(result) => result,
                Err(_) => Err(ToolError::Internal {
                    message: format!(
                        "{} failed unexpectedly (internal error). Try a different approach.",
                        call.name
                    ),
                    source: None,
                }),
            },
        }
    }
}

/// The `PermissionDenied` event for a refused call's result.
/// Reports the batch's results in call order, as they go back to the model.
///
/// The calls run inside `results`, which makes progress only while it is polled, so it is
/// polled while a result waits for room on the event stream too. Waiting on the stream
/// alone deadlocked a 10,000-agent fan-out: the stream's room went, in turn, to calls
/// inside `results` (a subagent announcing its start), which held it without being polled
/// to use it, until no room was left for the result this loop was waiting to send.
async fn report<S>(sink: &EventSink, results: &mut S, outcomes: &mut Vec<Outcome>)
where
    S: futures::Stream<Item = (Outcome, ToolResultEvent)> + Unpin,
{
    let mut waiting: VecDeque<EventKind> = VecDeque::new();
    let mut exhausted = false;
    loop {
        let (room, next) = match (waiting.is_empty(), exhausted) {
            (true, true) => return,
            (true, false) => (None, results.next().await),
            (false, _) => tokio::select! {
                room = sink.reserve() => (Some(room), None),
                next = results.next(), if !exhausted => (None, next),
            },
        };
        if let Some(room) = room {
            // Nobody listens any more: the event goes nowhere, as with `emit`.
            if let (Some(room), Some(kind)) = (room, waiting.pop_front()) {
                room.send(kind);
            } else {
                waiting.pop_front();
            }
            continue;
        }
        match next {
            Some((outcome, event)) => {
                if outcome.denial.is_some() {
                    waiting.push_back(denied(&event));
                }
                waiting.push_back(EventKind::ToolResult(event));
                outcomes.push(outcome);
            }
            None => exhausted = true,
        }
    }
}

fn denied(result: &ToolResultEvent) -> EventKind {
    EventKind::PermissionDenied(fleet_protocol::DeniedCall {
        tool_name: result.tool_name.clone(),
        tool_use_id: result.tool_use_id.clone(),
        message: result.content.clone(),
        reason_type: result.permission.reason_type.clone(),
    })
}

fn note(
    decision: PermissionDecision,
    reason_type: ReasonType,
    rule: Option<String>,
) -> PermissionNote {
    PermissionNote {
        decision,
        reason_type,
        rule,
    }
}

/// The printer's view of why a call was decided: `mode`, `rule` (with its text) or
/// `workspace`.
fn note_for(reason: &DecisionReason) -> impl Fn(PermissionDecision) -> PermissionNote + '_ {
    move |decision| match reason {
        DecisionReason::Rule(rule) => note(decision, ReasonType::Rule, Some(rule.to_string())),
        DecisionReason::Mode(_) => note(decision, ReasonType::Mode, None),
        DecisionReason::OutsideWorkspace(_) => note(decision, ReasonType::Workspace, None),
        DecisionReason::Protected(_) => note(decision, ReasonType::Protected, None),
        DecisionReason::Sandboxed => note(decision, ReasonType::Sandbox, None),
    }
}

/// The question a tool that always asks puts (ExitPlanMode): an ask rule naming the tool,
/// so the person reads why they are asked.
fn always_asks(decision: Decision, cwd: &std::path::Path) -> Decision {
    let rule = fleet_tools::permissions::Rule::parse(
        fleet_tools::permissions::RuleKind::Ask,
        &decision.tool,
        cwd.to_path_buf(),
        "fleet (this tool always asks the user)",
    );
    Decision {
        behavior: Behavior::Ask,
        reason: match rule {
            Ok(rule) => DecisionReason::Rule(Arc::new(rule)),
            Err(_) => decision.reason,
        },
        ..decision
    }
}

#[cfg(test)]
mod report_tests;
