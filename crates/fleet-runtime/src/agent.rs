//! The agent loop: one conversation, driven turn by turn.
//!
//! A turn sends the conversation, streams the reply (forwarding text as it arrives), commits
//! the reply, answers its tool calls and commits the results. The loop ends when a reply asks
//! for no tools, or a limit (turns, budget), an API error or cancellation stops it. Whatever
//! stops it, the conversation is left valid for the API: a reply's tool calls are always
//! answered before the loop looks at its limits.
//!
//! [`Agent::run`] is the whole run in one screen: `start.rs` opens it (`/compact`, the
//! prompt's hooks, the prompt committed), `turn.rs` is one turn, `finish.rs` makes the result.
//! Each concern a turn touches has its own file: `request.rs` (the request and its retries),
//! `context_fit.rs` (compaction), `hooks.rs`, `calls.rs` (tool calls, skills, the fork point,
//! the inbox, MCP refresh), `live.rs` (the session's controls), `stop.rs` (limits, structured
//! output and what else ends a run).

mod calls;
mod context_fit;
mod finish;
mod hooks;
mod live;
mod partial;
mod request;
mod start;
mod stop;
mod turn;

use self::start::Opening;
use self::stop::Stop;
use self::turn::{RunState, Step};
use crate::config::AgentConfig;
use crate::sink::EventSink;
use crate::subagent::ForkBase;
use fleet_model::{Catalog, ModelClient};
use fleet_protocol::{
    CommittedMessage, ContentBlock, EventKind, Message, ReplyMeta, Role, RunOrigin, RunResult,
    SessionInfo, Shared, ToolDefinition,
};
use fleet_tools::ToolContext;
use std::sync::Arc;
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
            .field("model", &self.config.model.id)
            .field("session_id", &self.session_id)
            .field("messages", &self.messages.len())
            .finish_non_exhaustive()
    }
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
            .tools
            .definitions
            .clone()
            .unwrap_or_else(|| Arc::new(config.tools.pool.definitions()));
        let fork_base = config.fork_source().map(|_| {
            Arc::new(ForkBase {
                model: config.model.id.clone(),
                max_tokens: config.model.max_tokens,
                system: config.context.system.clone(),
                tools: tool_definitions.clone(),
                thinking: config.model.thinking.clone(),
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
        self.config.stop.end_after_tools = flag;
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
            fleet_tools::permissions::Permissions::clone(&self.config.tools.permissions);
        permissions.set_own_mode(mode);
        let permissions = Arc::new(permissions);
        let kind = fleet_tools::sandbox::AgentSandbox::kind_for_mode(
            mode,
            fleet_tools::sandbox::SandboxKind::Standard,
        );
        let sandbox = self.ctx.sandbox.with_kind(kind, Some(permissions.clone()));
        self.ctx = self.ctx.clone().with_sandbox(Arc::new(sandbox));
        self.config.tools.permissions = permissions;
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn session_info(&self) -> SessionInfo {
        SessionInfo {
            session_id: self.session_id.clone(),
            cwd: self.ctx.cwd.display().to_string(),
            model: self.config.model.id.clone(),
            tools: self
                .config
                .tools
                .pool
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            permission_mode: self.config.tools.permissions.mode(),
            additional_directories: self
                .ctx
                .workspace
                .additional
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            agents: Vec::new(),
            mcp_servers: self.config.tools.mcp_servers.clone(),
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
        let mut run = RunState::new(self.origin.take());
        let prompted = run.origin.is_none();
        let outcome = match Box::pin(self.open_run(prompt, prompted, sink, cancel)).await {
            Opening::Refused(reason) => Err(Stop::error(format!(
                "UserPromptSubmit hook blocked the prompt: {reason}"
            ))),
            Opening::Compact(focus) => {
                Box::pin(self.compact_now(&focus, sink, cancel, &mut run.totals)).await
            }
            Opening::Turns => loop {
                match Box::pin(self.turn(&mut run, sink, cancel)).await {
                    Step::Next => {}
                    Step::End(outcome) => break outcome,
                }
            },
        };
        Box::pin(self.finish(run, outcome, sink)).await
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

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
