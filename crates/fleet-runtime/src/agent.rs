//! The agent loop: one conversation, driven turn by turn.
//!
//! A turn sends the conversation, streams the reply (forwarding text as it arrives), commits
//! the reply, answers its tool calls and commits the results. The loop ends when a reply asks
//! for no tools, or a limit (turns, budget), an API error or cancellation stops it. Whatever
//! stops it, the conversation is left valid for the API: a reply's tool calls are always
//! answered before the loop looks at its limits.

mod calls;
mod context_fit;
mod live;
mod partial;
mod request;

use crate::accounting::Accounting;
use crate::config::AgentConfig;
use crate::context::{AgentContext, INVOKING_REQUEST_HEADER};
use crate::dispatch::{Call, Dispatcher};
use crate::sink::EventSink;
use crate::subagent::{ForkBase, ForkPoint};
use fleet_model::{Catalog, ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse};
use fleet_protocol::{
    CommittedMessage, ContentBlock, EventKind, Message, MessagesRequest, PermissionDenial,
    ReplyMeta, ResultSubtype, Role, RunOrigin, RunResult, SessionInfo, SystemBlock, SystemPrompt,
    ToolDefinition,
};
use fleet_protocol::{Shared, TaskStatus};
use fleet_tools::ToolContext;
use futures::StreamExt;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

pub struct Agent {
    client: Arc<dyn ModelClient>,
    catalog: Arc<Catalog>,
    config: AgentConfig,
    ctx: ToolContext,
    /// Shared with the request in flight, so that sending it copies nothing.
    messages: Shared<Message>,
    session_id: String,
    /// The tools as the model is shown them, derived once: deriving every schema on every
    /// turn would be wasted work, and the bytes must not change between turns anyway or the
    /// prompt cache misses.
    tool_definitions: Arc<Vec<ToolDefinition>>,
    /// Set for the next run only: what started it, when not a prompt.
    origin: Option<RunOrigin>,
    /// The unchanging part of this agent's requests, made once when it may be forked.
    fork_base: Option<Arc<ForkBase>>,
    /// Called once the next run's prompt is committed: a teammate acknowledges the mail the
    /// prompt was made of only when it is in the conversation (and its transcript).
    prompt_ack: Option<Box<dyn FnOnce() + Send + Sync>>,
    /// The team mail the next run's prompt delivers, recorded with it.
    prompt_mail_ids: Vec<String>,
    /// The conversation's size as the API last reported it (see [`crate::compact`]).
    context: crate::compact::ContextTracker,
    /// What skills loaded in this run changed (allow rules, model), undone when it ends.
    skills: crate::skills::SkillEffects,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.config.model)
            .field("session_id", &self.session_id)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
}

/// How often one turn's request is made when its reply breaks off, and the pause before the
/// next try (growing with each).
const TURN_ATTEMPTS: u32 = 3;
const TURN_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// Why one request produced no reply.
enum Failure {
    Interrupted,
    /// The error, and whether part of the reply reached the agent's readers (with the reply's
    /// id when it was known).
    Model(ModelError, Option<Option<String>>),
}

/// Why a run stopped early, before it is turned into a result.
struct Stop {
    subtype: ResultSubtype,
    message: String,
    /// The HTTP status of the API error that stopped it, if one did.
    status: Option<u16>,
    /// The API refused the request as longer than the model's window.
    too_long: Option<crate::compact::TooLong>,
}

impl Agent {
    pub fn new(
        client: Arc<dyn ModelClient>,
        catalog: Arc<Catalog>,
        config: AgentConfig,
        mut ctx: ToolContext,
        session_id: impl Into<String>,
    ) -> Self {
        // The controls' Ctrl+B reaches this agent's foreground calls through its context.
        if let Some(controls) = &config.controls {
            ctx.background = Some(controls.move_signal());
        }
        let tool_definitions = config
            .tool_definitions
            .clone()
            .unwrap_or_else(|| Arc::new(config.tools.definitions()));
        let fork_base = config.fork_source.as_ref().map(|_| {
            Arc::new(ForkBase {
                model: config.model.clone(),
                max_tokens: config.max_tokens,
                system: config.system.clone(),
                tools: tool_definitions.clone(),
                thinking: config.thinking.clone(),
            })
        });
        let agent = Self {
            client,
            catalog,
            tool_definitions,
            origin: None,
            fork_base,
            prompt_ack: None,
            prompt_mail_ids: Vec::new(),
            context: Default::default(),
            skills: Default::default(),
            config,
            ctx,
            messages: Shared::new(),
            session_id: session_id.into(),
        };
        agent.bind_controls();
        agent
    }

    /// Continues an earlier conversation (`--continue`, `--resume`).
    pub fn with_history(mut self, messages: Vec<Message>) -> Self {
        self.messages = messages.into();
        self
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Ends each run right after a tool call that sets `flag` (a pane teammate that agreed
    /// to shut down makes no further request).
    pub fn end_after_tools(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        self.config.end_after_tools = Some(flag);
    }

    /// Marks the next run as started by something other than a prompt (task notifications).
    pub fn set_origin(&mut self, origin: RunOrigin) {
        self.origin = Some(origin);
    }

    /// Runs `ack` once the next run's prompt is committed.
    pub fn on_prompt_committed(&mut self, ack: impl FnOnce() + Send + Sync + 'static) {
        self.prompt_ack = Some(Box::new(ack));
    }

    /// Records that the next run's prompt delivers the team mail `ids`.
    pub fn set_prompt_mail_ids(&mut self, ids: Vec<String>) {
        self.prompt_mail_ids = ids;
    }

    /// Changes the permission mode, and with it how Bash is confined (a teammate whose plan
    /// the lead approved leaves plan mode). The tools keep their definitions, so the prompt
    /// cache holds.
    pub fn set_permission_mode(&mut self, mode: fleet_tools::permissions::PermissionMode) {
        let mut permissions =
            fleet_tools::permissions::Permissions::clone(&self.config.permissions);
        permissions.set_own_mode(mode);
        let permissions = Arc::new(permissions);
        let kind = fleet_tools::sandbox::AgentSandbox::kind_for_mode(
            mode,
            fleet_tools::sandbox::SandboxKind::Standard,
        );
        let sandbox = self.ctx.sandbox.with_kind(kind, Some(permissions.clone()));
        self.ctx = self.ctx.clone().with_sandbox(Arc::new(sandbox));
        self.config.permissions = permissions;
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn session_info(&self) -> SessionInfo {
        SessionInfo {
            session_id: self.session_id.clone(),
            cwd: self.ctx.cwd.display().to_string(),
            model: self.config.model.clone(),
            tools: self
                .config
                .tools
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            permission_mode: self.config.permissions.mode().as_str().to_string(),
            additional_directories: self
                .ctx
                .workspace
                .additional
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            agents: Vec::new(),
            mcp_servers: self.config.mcp_servers.clone(),
            skills: Vec::new(),
        }
    }

    /// Runs `prompt` to the end and returns the result, which is also the last event sent.
    ///
    /// The larger steps are boxed where they are awaited: an async fn's state is as large as
    /// its largest step, and every idle agent of a fan-out holds that state, so inline steps
    /// made each agent carry the size of the biggest one for its whole life.
    pub async fn run(
        &mut self,
        prompt: Message,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        let started = Instant::now();
        let mut totals = Accounting::default();
        let mut denials = Vec::new();
        let mut turns = 0u32;
        let mut last_stop_reason = None;
        let origin = self.origin.take();
        let mail_ids = std::mem::take(&mut self.prompt_mail_ids);
        if let Some(hooks) = self.config.hooks.clone() {
            let slot = crate::hooks::turn::pre_compact_slot(
                hooks,
                self.hook_caller(),
                sink.clone(),
                cancel.clone(),
            );
            self.config.compact.pre_compact = Some(slot);
        }
        // `/compact [focus]` is a command to the session, never sent to the model (nor to the
        // UserPromptSubmit hooks, which see prompts).
        let mut manual_compact = crate::compact::manual_command(&prompt.text()).map(str::to_owned);
        let mut prompt = prompt;
        let mut refused = match (self.config.hooks.clone(), &manual_compact) {
            (Some(hooks), None) => {
                let typed = origin.is_none() && mail_ids.is_empty();
                let caller = self.hook_caller();
                Box::pin(crate::hooks::turn::on_run_start(
                    &hooks,
                    &caller,
                    &mut prompt,
                    typed,
                    sink,
                    cancel,
                ))
                .await
            }
            _ => None,
        };
        if manual_compact.is_none() && refused.is_none() {
            self.commit_mail(sink, prompt, mail_ids).await;
        }
        if let Some(ack) = self.prompt_ack.take() {
            ack();
        }
        self.sync_controls_for_run();
        let mut stop_hook_active = false;
        let mut terminal_reason = None;
        let mut recovering: Option<(crate::compact::TooLong, Stop)> = None;

        let outcome = loop {
            if let Some(reason) = refused.take() {
                break Err(Stop {
                    subtype: ResultSubtype::ErrorDuringExecution,
                    message: format!("UserPromptSubmit hook blocked the prompt: {reason}"),
                    status: None,
                    too_long: None,
                });
            }
            if let Some(focus) = manual_compact.take() {
                break Box::pin(self.compact_now(&focus, sink, cancel, &mut totals)).await;
            }
            if cancel.is_cancelled() {
                break Err(interrupted());
            }
            Box::pin(self.deliver_inbox(sink)).await;
            self.sync_controls();
            Box::pin(self.refresh_mcp_tools()).await;
            let need = match &recovering {
                Some((refusal, _)) => crate::compact::Need::TooLong(*refusal),
                None => crate::compact::Need::Check,
            };
            let fitted = Box::pin(self.fit_context(need, sink, cancel, &mut totals)).await;
            if let Err(stop) = fitted {
                // After a refusal, the API's error is what the user needs to see.
                break Err(match recovering.take() {
                    Some((_, refused)) if stop.status.is_none() => Stop {
                        message: format!("{} ({})", refused.message, stop.message),
                        ..refused
                    },
                    _ => stop,
                });
            }
            let response =
                match Box::pin(self.request_with_retries(sink, cancel, &mut totals)).await {
                    Ok(response) => response,
                    // Once per turn: make room and ask again rather than fail the run.
                    Err(stop) if recovering.is_none() && stop.too_long.is_some() => {
                        recovering = stop.too_long.map(|refusal| (refusal, stop));
                        continue;
                    }
                    Err(stop) => break Err(stop),
                };
            recovering = None;
            turns += 1;
            self.account(&response, sink, &mut totals);
            let reply = response.message;
            let request_id = response.request_id.clone();
            last_stop_reason = reply.stop_reason.as_ref().map(|r| r.as_str().to_string());
            let final_text = reply.text();
            let calls: Vec<Call> = reply
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolUse {
                        id, name, input, ..
                    } => Some(Call {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    }),
                    _ => None,
                })
                .collect();
            let meta = ReplyMeta {
                id: reply.id.clone(),
                model: reply.model.clone(),
                usage: reply.usage.clone(),
                stop_reason: last_stop_reason.clone(),
            };
            let usage = reply.usage.clone();
            self.commit(sink, sendable(reply.content), Some(meta), Vec::new())
                .await;
            self.context.observe(&usage, self.messages.len());
            self.publish_context(Some(&usage));
            if calls.is_empty() {
                match crate::structured::next(self.config.structured.as_deref(), false) {
                    crate::structured::Next::Remind(reminder) => {
                        if let Some(stop) = self.limit_reached(turns, totals.cost_usd) {
                            break Err(stop);
                        }
                        self.commit(sink, reminder, None, Vec::new()).await;
                        continue;
                    }
                    crate::structured::Next::GiveUp(message) => {
                        break Err(structured_stop(message))
                    }
                    _ => {}
                }
                if let Some(hooks) = self.config.hooks.clone() {
                    let caller = self.hook_caller();
                    let active = &mut stop_hook_active;
                    let more = Box::pin(crate::hooks::turn::on_stop(
                        &hooks,
                        &caller,
                        active,
                        &final_text,
                        sink,
                        cancel,
                    ))
                    .await;
                    if let Some(more) = more {
                        if let Some(stop) = self.limit_reached(turns, totals.cost_usd) {
                            break Err(stop);
                        }
                        self.commit(sink, more, None, Vec::new()).await;
                        continue;
                    }
                }
                break Ok(final_text);
            }

            if let Some(ledger) = &self.config.ledger {
                ledger.record_tool_uses(&sink.agent().agent_id, calls.len() as u64);
            }
            self.publish_fork_point(&calls);
            // The reply's calls are committed and unanswered: the worst moment to crash.
            crate::failpoint::hit("before-tool-calls");
            let hook_stop =
                Box::pin(self.answer(calls, request_id.as_deref(), sink, cancel, &mut denials))
                    .await;
            if cancel.is_cancelled() {
                break Err(interrupted());
            }
            // A tool hook said `continue: false`: the results are in, no further request.
            if hook_stop.is_some() {
                terminal_reason = Some("hook_stopped".to_string());
                break Ok(final_text);
            }
            if self
                .config
                .end_after_tools
                .as_ref()
                .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Acquire))
            {
                break Ok(final_text);
            }
            match crate::structured::next(self.config.structured.as_deref(), true) {
                crate::structured::Next::Delivered => break Ok(final_text),
                crate::structured::Next::GiveUp(message) => break Err(structured_stop(message)),
                _ => {}
            }
            let spent = match &self.config.ledger {
                Some(ledger) => ledger.total_cost_usd(),
                None => totals.cost_usd,
            };
            if let Some(stop) = self.limit_reached(turns, spent) {
                break Err(stop);
            }
        };

        self.skills.revert(&mut self.config);
        let (subtype, result, api_error_status) = match outcome {
            Ok(text) => (ResultSubtype::Success, text, None),
            Err(stop) => {
                // A run cut short while it waited past the watchdog's bound says on what.
                let waited = sink.watchdog().overdue_for(&sink.agent().agent_id);
                let message = match waited {
                    Some(waited) => format!("{} ({waited})", stop.message),
                    None => stop.message,
                };
                (stop.subtype, message, stop.status)
            }
        };
        let mut result = RunResult {
            subtype,
            result,
            num_turns: turns,
            duration_ms: millis(started.elapsed()),
            duration_api_ms: millis(totals.api_time),
            total_cost_usd: totals.cost_usd,
            usage: totals.usage,
            model_usage: totals.per_model,
            permission_denials: denials,
            stop_reason: last_stop_reason,
            api_error_status,
            session_id: self.session_id.clone(),
            origin,
            tree: None,
            terminal_reason,
            structured_output: self.config.structured.as_ref().and_then(|s| s.take()),
        };
        // The main agent's result reports the whole tree; its own entry says how it ended.
        if let (Some(ledger), true) = (&self.config.ledger, sink.agent().is_main()) {
            let status = if result.is_error() {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            ledger.finish(&sink.agent().agent_id, status, None);
            result.tree = Some(ledger.report());
        }
        sink.emit(EventKind::Finished(result.clone())).await;
        result
    }

    /// The limit the run has reached after `turns` replies costing `spent`, checked once a
    /// turn's calls are answered so the conversation stays valid.
    fn limit_reached(&self, turns: u32, spent: f64) -> Option<Stop> {
        if let Some(max) = self.config.max_turns.filter(|max| turns >= *max) {
            return Some(Stop {
                subtype: ResultSubtype::ErrorMaxTurns,
                message: format!("Reached the maximum number of turns ({max})."),
                status: None,
                too_long: None,
            });
        }
        let budget = self
            .config
            .max_budget_usd
            .filter(|budget| spent >= *budget)?;
        Some(Stop {
            subtype: ResultSubtype::ErrorMaxBudgetUsd,
            message: format!("Reached the budget of ${budget:.4} (spent ${spent:.4})."),
            status: None,
            too_long: None,
        })
    }

    /// This agent as hook inputs describe it.
    pub(crate) fn hook_caller(&self) -> crate::hooks::Caller {
        crate::hooks::Caller::current(
            &self.session_id,
            self.ctx.cwd.clone(),
            self.config.permissions.mode().as_str(),
        )
    }

    async fn commit(
        &mut self,
        sink: &EventSink,
        message: Message,
        reply: Option<ReplyMeta>,
        tool_results: Vec<(String, Arc<serde_json::Value>)>,
    ) {
        self.messages.push(message.clone());
        sink.emit(EventKind::MessageCommitted(CommittedMessage {
            message,
            reply,
            tool_results,
            mail_ids: Vec::new(),
        }))
        .await;
    }

    /// Commits a prompt, with the team mail it delivers.
    async fn commit_mail(&mut self, sink: &EventSink, message: Message, mail_ids: Vec<String>) {
        self.messages.push(message.clone());
        sink.emit(EventKind::MessageCommitted(CommittedMessage {
            message,
            reply: None,
            tool_results: Vec::new(),
            mail_ids,
        }))
        .await;
    }
}

/// The reply as it goes back into the conversation: the API refuses empty text blocks and an
/// assistant turn with no content at all.
fn sendable(content: Vec<ContentBlock>) -> Message {
    let mut blocks: Vec<ContentBlock> = content.into_iter().filter(|b| !is_empty_text(b)).collect();
    if blocks.is_empty() {
        blocks.push(ContentBlock::text("(no content)"));
    }
    Message::with_blocks(Role::Assistant, blocks)
}

fn is_empty_text(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::Text { text, .. } if text.is_empty())
}

fn interrupted() -> Stop {
    Stop {
        subtype: ResultSubtype::ErrorDuringExecution,
        message: "Interrupted: the run was cancelled.".into(),
        status: None,
        too_long: None,
    }
}

/// The model gave no valid structured output within the retries (`--json-schema`).
fn structured_stop(message: String) -> Stop {
    Stop {
        subtype: ResultSubtype::ErrorMaxStructuredOutputRetries,
        message,
        status: None,
        too_long: None,
    }
}

fn api_error(err: &ModelError) -> Stop {
    Stop {
        subtype: ResultSubtype::ErrorDuringExecution,
        message: format!("API error: {err}"),
        status: err.status(),
        too_long: crate::compact::TooLong::from_error(err),
    }
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
