//! `AgentEvent` → the lines of `stream-json` (`fleet_protocol::wire` types), in Claude Code's
//! shapes and order.
//!
//! Both JSON printers share this: `stream-json` writes each line, `json` keeps the result (or,
//! verbose, collects them all). Keys come in the order Claude Code writes them where it has the
//! same concept; keys only it has a concept for are left out rather than faked.
//!
//! Every line a subagent causes carries its `parent_tool_use_id` and `agent_id`, so a reader
//! can tell the agents apart without keeping state. A subagent's start and end print nothing
//! of their own: the runtime reports a task's life with task events, and a subagent's
//! `result` would read as the session's to every existing script.
//!
//! The order and line set follow Claude Code's (see `order.rs`): a foreground subagent shows
//! its prompt (a `user` line) and its task lines, not its own messages, unless
//! `FLEET_SUBAGENT_MESSAGES=1` asks for them.

use super::line::{label, message_agent_id, new_uuid, subagent_keys, timestamp};
use super::order::Order;
use super::partial::{PartialBlocks, Rebuilt};
use super::results::{api_error_category, ended_by_api_error, HeldResults};
use super::sdk_lines::{self, StateLines};
use super::tasks::{self, RunIds};
use fleet_protocol::wire::{
    ApiErrorCategory, ApiRetryLine, AssistantEnvelope, AssistantLine, CompactBoundaryLine,
    CompactMetadata, HookLine, InitLine, ModelFallbackLine, ResultLine, ResultTeam, StatusLine,
    StreamEventBody, StreamLine, SystemLine, TeamLine, TextBlock, ToolResultBlock, ToolResultBody,
    ToolResultMeta, ToolResultTag, UserBlock, UserEnvelope, UserLine, WaitingLine,
    WirePermissionDecision,
};
use fleet_protocol::{
    AgentEvent, AgentRef, BlockDelta, ContentBlock, EventKind, RunResult, SessionInfo, StopReason,
    StreamEvent, TaskStarted, ToolResultEvent, Usage,
};
use std::collections::{HashMap, HashSet};

/// The name the Agent tool has in requests to the model, and in Claude Code's `init` list.
const AGENT_TOOL: &str = "Agent";
const AGENT_TOOL_LISTED_AS: &str = "Task";

/// Turns events into lines, keeping the little state the shapes and the order need.
#[derive(Debug, Default)]
pub(super) struct Encoder {
    session_id: String,
    partial: bool,
    /// Position of the next content block per agent, for the `index` of partial deltas: the
    /// events carry no block index, but blocks complete in order and each committed message
    /// starts the count again.
    block_index: HashMap<String, usize>,
    /// The main agent's results, printed only when the session is over.
    results: HeldResults,
    /// `--include-hook-events`: print `hook_started` / `hook_response` lines.
    hook_events: bool,
    /// `session_state_changed` lines, when the SDK asked for them.
    states: StateLines,
    /// Agents that send the API's stream events themselves: their plain deltas are already
    /// in those, so they print no delta lines of their own.
    streaming: HashSet<String>,
    /// Each content block's `assistant` line where Claude Code puts it in partial mode.
    blocks: PartialBlocks,
    /// The `run_id` of each task's run.
    runs: RunIds,
    /// Lines held back so the output comes in Claude Code's order.
    order: Order,
    /// `FLEET_SUBAGENT_MESSAGES=1`: also print what foreground subagents say.
    subagent_messages: bool,
}

impl Encoder {
    pub(super) fn new(session_id: Option<String>, partial: bool) -> Self {
        Self {
            session_id: session_id.unwrap_or_default(),
            partial,
            ..Self::default()
        }
    }

    /// Prints hook runs too (`--include-hook-events`).
    pub(super) fn with_hook_events(mut self, on: bool) -> Self {
        self.hook_events = on;
        self
    }

    /// Prints `session_state_changed` lines (`CLAUDE_CODE_SDK_READS_SESSION_STATE=1`).
    pub(super) fn with_session_state(mut self, on: bool) -> Self {
        self.states = StateLines::new(on);
        self
    }

    /// Prints foreground subagents' own messages too, as fleet did before it followed Claude
    /// Code's line set (`FLEET_SUBAGENT_MESSAGES=1`).
    pub(super) fn with_subagent_messages(mut self, on: bool) -> Self {
        self.subagent_messages = on;
        self
    }

    /// The lines for one event, in order: none for events with no line of their own
    /// (committed messages, a subagent's start and end, the main agent's results — see
    /// [`Encoder::take_results`] — and deltas unless partial messages were asked for), and
    /// lines held back earlier when this event releases them.
    pub(super) fn encode(&mut self, event: &AgentEvent) -> Vec<StreamLine> {
        let agent = &event.agent;
        if self.quiet(agent, &event.kind) {
            // A quiet subagent's own Agent call still ends its task's held lines.
            return match &event.kind {
                EventKind::ToolResult(result) => {
                    let held = self.order.release_notification(&result.tool_use_id);
                    self.emit(held)
                }
                _ => Vec::new(),
            };
        }
        match &event.kind {
            EventKind::TaskStarted(task) => return self.task_started(agent, task),
            EventKind::TaskUpdated {
                task_id,
                status,
                end_time_ms,
            } => {
                let run = self.runs.of(task_id);
                let session = self.session_id.as_str();
                let line = tasks::updated(agent, task_id, run, *status, *end_time_ms, session);
                if self.order.hold_update(task_id, line.clone().into()) {
                    return Vec::new();
                }
                return self.emit(vec![line.into()]);
            }
            EventKind::TaskNotified(n) => {
                let run = self.runs.of(&n.task_id);
                let line: StreamLine = tasks::notified(agent, n, run, &self.session_id).into();
                let mut out = self.order.release_all();
                if self.order.is_foreground(&n.task_id) {
                    self.order
                        .hold_notification(&n.task_id, &n.tool_use_id, line);
                    return out;
                }
                out.extend(self.order.release_update(&n.task_id));
                out.push(line);
                return out;
            }
            EventKind::ToolResult(result) => {
                let mut lines = self.order.release_notification(&result.tool_use_id);
                lines.push(self.tool_result(agent, result).into());
                return self.emit(lines);
            }
            EventKind::AssistantBlock {
                message_id,
                model,
                block,
                usage,
            } => {
                *self.block_index.entry(agent.agent_id.clone()).or_default() += 1;
                if self.partial && self.blocks.already_printed(&agent.agent_id, message_id) {
                    return Vec::new();
                }
                let line: StreamLine = self
                    .assistant(agent, message_id, model, block, usage)
                    .into();
                if let ContentBlock::ToolUse { id, name, .. } = block {
                    if name == AGENT_TOOL {
                        self.order.hold_call(id, line);
                        return Vec::new();
                    }
                }
                return self.emit(vec![line]);
            }
            _ => {}
        }
        let lines = self.lines(agent, &event.kind);
        self.emit(lines)
    }

    /// Writes `lines` after anything held that they must follow.
    fn emit(&mut self, lines: Vec<StreamLine>) -> Vec<StreamLine> {
        if lines.is_empty() {
            return lines;
        }
        let mut out = self.order.release_all();
        out.extend(lines);
        out
    }

    /// Whether the event belongs to a foreground subagent whose own messages Claude Code does
    /// not print (it shows the prompt and the task lines instead).
    fn quiet(&self, agent: &AgentRef, kind: &EventKind) -> bool {
        if self.subagent_messages || !self.order.is_foreground(&agent.agent_id) {
            return false;
        }
        matches!(
            kind,
            EventKind::AssistantBlock { .. }
                | EventKind::ToolResult(_)
                | EventKind::Stream(_)
                | EventKind::TextDelta(_)
                | EventKind::ThinkingDelta(_)
                | EventKind::ReplyDiscarded { .. }
        )
    }

    /// Every line still held, for the end of the session.
    pub(super) fn release_held(&mut self) -> Vec<StreamLine> {
        self.order.release_everything()
    }

    /// `task_started`, right after the Agent call that started it, and for a foreground task
    /// the prompt it was given as a `user` line of the subagent's.
    fn task_started(&mut self, agent: &AgentRef, task: &TaskStarted) -> Vec<StreamLine> {
        let run = self.runs.start(&task.task_id);
        let mut out = self.order.release_through(&task.tool_use_id);
        out.push(tasks::started(agent, task, run, &self.session_id).into());
        if !task.is_backgrounded {
            self.order.foreground(&task.task_id);
            out.push(self.prompt(task).into());
        }
        out
    }

    /// A foreground subagent's prompt, as Claude Code prints it.
    fn prompt(&self, task: &TaskStarted) -> UserLine {
        UserLine {
            message: UserEnvelope::new(vec![UserBlock::Text(TextBlock::new(task.prompt.clone()))]),
            parent_tool_use_id: Some(task.tool_use_id.clone()),
            agent_id: Some(task.task_id.clone()),
            session_id: self.session_id.clone(),
            uuid: new_uuid(),
            timestamp: timestamp(),
            subagent_type: Some(task.subagent_type.clone()),
            task_description: Some(task.description.clone()),
            tool_use_result: None,
            tool_result_meta: None,
        }
    }

    /// The lines of the events that need no reordering.
    fn lines(&mut self, agent: &AgentRef, kind: &EventKind) -> Vec<StreamLine> {
        let session = self.session_id.clone();
        let one = |line: StreamLine| vec![line];
        match kind {
            EventKind::BackgroundTasksChanged(list) => {
                one(tasks::background_changed(agent, list, &mut self.runs, &session).into())
            }
            EventKind::Started(_) | EventKind::Finished(_) if !agent.is_main() => Vec::new(),
            EventKind::Started(info) => {
                self.session_id.clone_from(&info.session_id);
                one(self.init(info).into())
            }
            EventKind::Retry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                scope,
                error_status,
            } => {
                self.block_index.remove(&agent.agent_id);
                // Claude Code counts retries, not attempts: our `attempt` is the attempt about
                // to be made (2 for the first retry) and `max_attempts` includes the first.
                one(ApiRetryLine {
                    attempt: attempt.saturating_sub(1),
                    max_retries: max_attempts.saturating_sub(1),
                    retry_delay_ms: *delay_ms,
                    error_status: *error_status,
                    error: ApiErrorCategory::from_status(*error_status),
                    error_message: Some(reason.clone()),
                    retry_scope: Some(*scope),
                    session_id: session,
                    uuid: new_uuid(),
                    subagent: subagent_keys(agent),
                }
                .into())
            }
            EventKind::ModelFallback { from, to, reason } => one(ModelFallbackLine {
                trigger: "overloaded".into(),
                original_model: from.clone(),
                fallback_model: to.clone(),
                error: reason.clone(),
                content: crate::headless::flags::fallback_notice(from, to),
                session_id: session,
                uuid: new_uuid(),
                subagent: subagent_keys(agent),
            }
            .into()),
            EventKind::Waiting(report) => one(WaitingLine {
                kind: report.kind.clone(),
                waiting_for: report.waiting_for.clone(),
                waited_ms: report.waited_ms,
                bound_ms: report.bound_ms,
                agent_id: agent.agent_id.clone(),
                session_id: session,
                uuid: new_uuid(),
                parent_tool_use_id: agent.parent_tool_use_id.clone(),
            }
            .into()),
            EventKind::ReplyDiscarded { message_id, reason } if self.partial => {
                self.blocks.discard(&agent.agent_id);
                one(
                    sdk_lines::reply_discarded(agent, message_id.as_deref(), reason, &session)
                        .into(),
                )
            }
            EventKind::ReplyDiscarded { .. } => Vec::new(),
            EventKind::Stream(part) if self.partial => self.stream(agent, part),
            EventKind::Stream(_) => Vec::new(),
            EventKind::TextDelta(_) | EventKind::ThinkingDelta(_)
                if !self.partial || self.streaming.contains(&agent.agent_id) =>
            {
                Vec::new()
            }
            EventKind::TextDelta(text) => one(self
                .delta(agent, BlockDelta::TextDelta { text: text.clone() })
                .into()),
            EventKind::ThinkingDelta(text) => one(self
                .delta(
                    agent,
                    BlockDelta::ThinkingDelta {
                        thinking: text.clone(),
                    },
                )
                .into()),
            EventKind::PermissionDenied(denied) => {
                one(sdk_lines::permission_denied(agent, denied, &session).into())
            }
            EventKind::Approval { waiting, .. } => self
                .states
                .approval(*waiting, &session)
                .map(|l| StreamLine::System(SystemLine::SessionStateChanged(l)))
                .into_iter()
                .collect(),
            EventKind::SessionState(state) => self
                .states
                .session(*state, &session)
                .map(|l| StreamLine::System(SystemLine::SessionStateChanged(l)))
                .into_iter()
                .collect(),
            EventKind::MessageCommitted(_) => {
                self.block_index.remove(&agent.agent_id);
                Vec::new()
            }
            EventKind::CompactBoundary(boundary) => one(CompactBoundaryLine {
                session_id: session,
                uuid: new_uuid(),
                compact_metadata: CompactMetadata {
                    trigger: boundary.trigger,
                    pre_tokens: boundary.pre_tokens,
                },
                subagent: subagent_keys(agent),
            }
            .into()),
            EventKind::TreeTotals(tree) => {
                self.results.set_tree(tree);
                Vec::new()
            }
            EventKind::Team(team) => {
                if let fleet_protocol::TeamEvent::TeamSummary {
                    team: name,
                    members,
                } = team
                {
                    self.results.set_team(ResultTeam {
                        name: name.clone(),
                        members: members.clone(),
                    });
                }
                one(TeamLine {
                    event: team.clone(),
                    agent_id: (!agent.is_main()).then(|| agent.agent_id.clone()),
                    session_id: session,
                    uuid: new_uuid(),
                }
                .into())
            }
            // What a hook wants the user to read is shown whatever the flag says.
            EventKind::Hook(note @ fleet_protocol::HookNote::Informational { .. }) => {
                one(self.hook(agent, note).into())
            }
            EventKind::Hook(note) if self.hook_events => one(self.hook(agent, note).into()),
            EventKind::Hook(_) => Vec::new(),
            EventKind::Finished(result) => {
                if self.session_id.is_empty() {
                    self.session_id.clone_from(&result.session_id);
                }
                let run_id = result
                    .origin
                    .as_ref()
                    .and_then(|o| o.task_ids.first())
                    .map(|task| self.runs.of(task));
                self.results.hold(result, &self.session_id, run_id);
                ended_by_api_error(result)
                    .map(|status| self.api_error_message(result, status).into())
                    .into_iter()
                    .collect()
            }
            // Handled in `encode`.
            EventKind::TaskStarted(_)
            | EventKind::TaskUpdated { .. }
            | EventKind::TaskNotified(_)
            | EventKind::ToolResult(_)
            | EventKind::AssistantBlock { .. } => Vec::new(),
        }
    }

    /// The main agent's `result` lines so far, in order, each numbered and with the agent
    /// tree's final figures; called once the session is over.
    pub(super) fn take_results(&mut self) -> Vec<ResultLine> {
        self.results.take()
    }

    /// A partial-mode stream event: `system/status` before a request's first event, and a
    /// block's `assistant` line before its `content_block_stop`.
    fn stream(&mut self, agent: &AgentRef, part: &StreamEvent) -> Vec<StreamLine> {
        self.streaming.insert(agent.agent_id.clone());
        let mut out = Vec::new();
        if matches!(part, StreamEvent::MessageStart { .. }) {
            out.push(
                StatusLine {
                    status: "requesting".into(),
                    session_id: self.session_id.clone(),
                    uuid: new_uuid(),
                    subagent: subagent_keys(agent),
                }
                .into(),
            );
        }
        if let Some(Rebuilt {
            message_id,
            model,
            usage,
            block,
        }) = self.blocks.follow(&agent.agent_id, part)
        {
            out.push(
                self.assistant(agent, &message_id, &model, &block, &usage)
                    .into(),
            );
        }
        out.push(sdk_lines::api_event(agent, part, &self.session_id).into());
        out
    }

    /// A hook note: a `system` line, `hook_started`, `hook_response` or `informational`, with
    /// the note's fields (the Agent SDK's names).
    fn hook(&self, agent: &AgentRef, note: &fleet_protocol::HookNote) -> HookLine {
        HookLine {
            note: note.clone(),
            uuid: new_uuid(),
            session_id: self.session_id.clone(),
            subagent: subagent_keys(agent),
        }
    }

    fn init(&self, info: &SessionInfo) -> InitLine {
        InitLine {
            cwd: info.cwd.clone(),
            session_id: self.session_id.clone(),
            tools: info
                .tools
                .iter()
                .map(|name| match name.as_str() {
                    AGENT_TOOL => AGENT_TOOL_LISTED_AS.to_string(),
                    _ => name.clone(),
                })
                .collect(),
            mcp_servers: info.mcp_servers.clone(),
            model: info.model.clone(),
            permission_mode: info.permission_mode,
            additional_directories: info.additional_directories.clone(),
            agents: info.agents.clone(),
            skills: info.skills.clone(),
            fleet_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            // The Agent SDKs read the protocol version here and warn when there is none.
            claude_code_version: crate::control::init::PROTOCOL_VERSION.to_string(),
            uuid: new_uuid(),
        }
    }

    /// One line per content block, as Claude Code streams them: the message envelope is
    /// repeated with only that block, and the reply is not over yet (`stop_reason` null).
    fn assistant(
        &self,
        agent: &AgentRef,
        message_id: &str,
        model: &str,
        block: &ContentBlock,
        usage: &Usage,
    ) -> AssistantLine {
        let (subagent_type, task_description) = label(agent);
        AssistantLine {
            message: AssistantEnvelope::new(message_id, model, vec![block.clone()], usage.clone()),
            parent_tool_use_id: agent.parent_tool_use_id.clone(),
            agent_id: message_agent_id(agent),
            session_id: self.session_id.clone(),
            uuid: new_uuid(),
            timestamp: timestamp(),
            subagent_type,
            task_description,
            error: None,
            is_api_error_message: None,
            api_error_status: None,
        }
    }

    /// The message Claude Code adds when an API error ends the run: from `<synthetic>`, the
    /// error's text, its category and HTTP status.
    fn api_error_message(&self, result: &RunResult, status: u16) -> AssistantLine {
        let mut message = AssistantEnvelope::new(
            &new_uuid(),
            "<synthetic>",
            vec![ContentBlock::text(result.result.clone())],
            Usage::default(),
        );
        message.stop_reason = Some(StopReason::StopSequence);
        message.stop_sequence = Some(String::new());
        AssistantLine {
            message,
            parent_tool_use_id: None,
            agent_id: None,
            session_id: self.session_id.clone(),
            uuid: new_uuid(),
            timestamp: timestamp(),
            subagent_type: None,
            task_description: None,
            error: Some(api_error_category(status)),
            is_api_error_message: Some(true),
            api_error_status: Some(status),
        }
    }

    /// A tool's result. The Agent tool's content is a list of text blocks, as in Claude Code;
    /// every other tool's is the text.
    fn tool_result(&self, agent: &AgentRef, r: &ToolResultEvent) -> UserLine {
        let content = match r.tool_name.as_str() {
            AGENT_TOOL => ToolResultBody::Blocks(vec![TextBlock::new(r.content.clone())]),
            _ => ToolResultBody::Text(r.content.clone()),
        };
        let (subagent_type, task_description) = label(agent);
        UserLine {
            message: UserEnvelope::new(vec![UserBlock::ToolResult(ToolResultBlock {
                tool_use_id: r.tool_use_id.clone(),
                kind: ToolResultTag::ToolResult,
                content,
                is_error: r.is_error,
            })]),
            parent_tool_use_id: agent.parent_tool_use_id.clone(),
            agent_id: message_agent_id(agent),
            session_id: self.session_id.clone(),
            uuid: new_uuid(),
            timestamp: timestamp(),
            subagent_type,
            task_description,
            tool_use_result: r.structured.as_deref().cloned(),
            tool_result_meta: Some(vec![ToolResultMeta {
                id: r.tool_use_id.clone(),
                permission_decision: WirePermissionDecision {
                    decision: r.permission.decision.clone(),
                    source: "config".into(),
                    reason_type: Some(r.permission.reason_type.clone()),
                    rule: r.permission.rule.clone(),
                },
            }]),
        }
    }

    /// A delta of an agent that sends no API stream events of its own.
    fn delta(&self, agent: &AgentRef, delta: BlockDelta) -> fleet_protocol::wire::StreamEventLine {
        let index = self.block_index.get(&agent.agent_id).copied().unwrap_or(0);
        let event = StreamEventBody::Api(StreamEvent::ContentBlockDelta { index, delta });
        sdk_lines::stream_event(agent, event, &self.session_id)
    }
}
