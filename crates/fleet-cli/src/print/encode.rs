//! `AgentEvent` → the JSON objects of `stream-json`, in Claude Code's shapes.
//!
//! Both JSON printers share this: `stream-json` writes each object as a line, `json` keeps the
//! result (or, verbose, collects them all). Keys come in the order Claude Code writes them where
//! it has the same concept; keys only it has a concept for are left out rather than faked.
//!
//! Every line a subagent causes carries its `parent_tool_use_id` and `agent_id`, so a reader
//! can tell the agents apart without keeping state. A subagent's start and end print nothing
//! of their own: the runtime reports a background task's life with task events, and a
//! subagent's `result` would read as the session's to every existing script.

use super::line::{new_uuid, timestamp, Line};
use super::results::HeldResults;
use super::sdk_lines::{self, StateLines};
use super::tasks;
use fleet_protocol::{
    AgentEvent, AgentRef, ContentBlock, EventKind, SessionInfo, ToolResultEvent, Usage,
};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// Turns events into output objects, keeping the little state the shapes need.
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

    /// The object for one event, or `None` for events with no line of their own (committed
    /// messages, a subagent's start and end, the main agent's results — see
    /// [`Encoder::take_results`] — and deltas unless partial messages were asked for).
    pub(super) fn encode(&mut self, event: &AgentEvent) -> Option<Value> {
        let agent = &event.agent;
        let session = self.session_id.as_str();
        match &event.kind {
            EventKind::TaskStarted(task) => Some(tasks::started(agent, task, session)),
            EventKind::TaskUpdated {
                task_id,
                status,
                end_time_ms,
            } => Some(tasks::updated(
                agent,
                task_id,
                *status,
                *end_time_ms,
                session,
            )),
            EventKind::TaskNotified(n) => Some(tasks::notified(agent, n, session)),
            EventKind::BackgroundTasksChanged(list) => {
                Some(tasks::background_changed(agent, list, session))
            }
            EventKind::Started(_) | EventKind::Finished(_) if !agent.is_main() => None,
            EventKind::Started(info) => {
                self.session_id.clone_from(&info.session_id);
                Some(self.init(info))
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
                let retry = Retry {
                    attempt: *attempt,
                    max_attempts: *max_attempts,
                    delay_ms: *delay_ms,
                    reason,
                    scope: *scope,
                    error_status: *error_status,
                };
                Some(self.retry(agent, &retry))
            }
            EventKind::ModelFallback { from, to, reason } => {
                Some(self.model_fallback(agent, from, to, reason))
            }
            EventKind::Waiting(report) => Some(self.waiting(agent, report)),
            EventKind::ReplyDiscarded { message_id, reason } if self.partial => Some(
                sdk_lines::reply_discarded(agent, message_id.as_deref(), reason, &self.session_id),
            ),
            EventKind::ReplyDiscarded { .. } => None,
            EventKind::Stream(part) if self.partial => {
                if !self.streaming.contains(&agent.agent_id) {
                    self.streaming.insert(agent.agent_id.clone());
                }
                Some(sdk_lines::stream_event(agent, part, &self.session_id))
            }
            EventKind::Stream(_) => None,
            EventKind::TextDelta(_) | EventKind::ThinkingDelta(_)
                if !self.partial || self.streaming.contains(&agent.agent_id) =>
            {
                None
            }
            EventKind::TextDelta(text) => {
                Some(self.delta(agent, json!({ "type": "text_delta", "text": text })))
            }
            EventKind::ThinkingDelta(text) => {
                Some(self.delta(agent, json!({ "type": "thinking_delta", "thinking": text })))
            }
            EventKind::PermissionDenied(denied) => {
                Some(sdk_lines::permission_denied(agent, denied, session))
            }
            EventKind::Approval { waiting, .. } => self.states.approval(*waiting, session),
            EventKind::SessionState(state) => self.states.session(*state, session),
            EventKind::AssistantBlock {
                message_id,
                model,
                block,
                usage,
            } => {
                *self.block_index.entry(agent.agent_id.clone()).or_default() += 1;
                Some(self.assistant(agent, message_id, model, block, usage))
            }
            EventKind::ToolResult(result) => Some(self.tool_result(agent, result)),
            EventKind::MessageCommitted(_) => {
                self.block_index.remove(&agent.agent_id);
                None
            }
            EventKind::CompactBoundary(boundary) => Some(self.compact_boundary(agent, boundary)),
            EventKind::TreeTotals(tree) => {
                self.results.set_tree(tree);
                None
            }
            EventKind::Team(team) => {
                if let fleet_protocol::TeamEvent::TeamSummary {
                    team: name,
                    members,
                } = team
                {
                    self.results
                        .set_team(json!({"name": name, "members": members}));
                }
                Some(self.team(agent, team))
            }
            // What a hook wants the user to read is shown whatever the flag says.
            EventKind::Hook(note @ fleet_protocol::HookNote::Informational { .. }) => {
                Some(self.hook(agent, note))
            }
            EventKind::Hook(note) => self.hook_events.then(|| self.hook(agent, note)),
            EventKind::Finished(result) => {
                if self.session_id.is_empty() {
                    self.session_id.clone_from(&result.session_id);
                }
                self.results.hold(result, &self.session_id);
                None
            }
        }
    }

    /// The main agent's `result` objects so far, in order, each numbered and with the agent
    /// tree's final figures; called once the session is over.
    pub(super) fn take_results(&mut self) -> Vec<Value> {
        self.results.take()
    }

    /// A hook note: a `system` line, `hook_started`, `hook_response` or `informational`, with
    /// the note's fields (the Agent SDK's names).
    fn hook(&self, agent: &AgentRef, note: &fleet_protocol::HookNote) -> Value {
        let mut line = json!({"type": "system"});
        if let (Some(map), Ok(Value::Object(fields))) =
            (line.as_object_mut(), serde_json::to_value(note))
        {
            map.extend(fields);
            map.insert("uuid".into(), Value::String(new_uuid()));
            map.insert("session_id".into(), Value::String(self.session_id.clone()));
        }
        Line::new(line).subagent(agent).into_value()
    }

    /// A team event: a `system` line whose `subtype` names it, with the event's own fields.
    fn team(&self, agent: &AgentRef, event: &fleet_protocol::TeamEvent) -> Value {
        let mut line = json!({"type": "system"});
        if let (Some(map), Ok(Value::Object(fields))) =
            (line.as_object_mut(), serde_json::to_value(event))
        {
            map.extend(fields);
            if !agent.is_main() {
                map.insert("agent_id".into(), Value::String(agent.agent_id.clone()));
            }
            map.insert("session_id".into(), Value::String(self.session_id.clone()));
            map.insert("uuid".into(), Value::String(new_uuid()));
        }
        line
    }

    fn init(&self, info: &SessionInfo) -> Value {
        json!({
            "type": "system",
            "subtype": "init",
            "cwd": info.cwd,
            "session_id": self.session_id,
            "tools": info.tools,
            "mcp_servers": info.mcp_servers,
            "model": info.model,
            "permissionMode": info.permission_mode,
            "additional_directories": info.additional_directories,
            "agents": info.agents,
            "skills": info.skills,
            "fleet_version": env!("CARGO_PKG_VERSION"),
            // The Agent SDKs read the protocol version here and warn when there is none.
            "claude_code_version": crate::control::init::PROTOCOL_VERSION,
            "uuid": new_uuid(),
        })
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
    ) -> Value {
        Line::new(json!({
            "type": "assistant",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage,
            },
            "parent_tool_use_id": agent.parent_tool_use_id,
        }))
        .agent_id(agent)
        .then(json!({
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": timestamp(),
        }))
        .label(agent)
        .into_value()
    }

    fn tool_result(&self, agent: &AgentRef, r: &ToolResultEvent) -> Value {
        let mut decision = Line::new(json!({
            "decision": r.permission.decision,
            "source": "config",
            "reason_type": r.permission.reason_type,
        }));
        if let Some(rule) = &r.permission.rule {
            decision = decision.then(json!({ "rule": rule }));
        }
        let mut line = Line::new(json!({
            "type": "user",
            "message": {
                "role": "user",
                "content": [{
                    "tool_use_id": r.tool_use_id,
                    "type": "tool_result",
                    "content": r.content,
                    "is_error": r.is_error,
                }],
            },
            "parent_tool_use_id": agent.parent_tool_use_id,
        }))
        .agent_id(agent)
        .then(json!({
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": timestamp(),
        }))
        .label(agent);
        if let Some(structured) = &r.structured {
            line = line.then(json!({ "tool_use_result": structured }));
        }
        line.then(json!({
            "tool_result_meta": [{
                "id": r.tool_use_id,
                "permission_decision": decision.into_value(),
            }],
        }))
        .into_value()
    }

    /// Claude Code counts retries, not attempts: our `attempt` is the attempt about to be
    /// made (2 for the first retry) and `max_attempts` includes the first one. `retry_scope`
    /// is fleet's: `request` when the same request is sent again (nothing of the reply was
    /// shown), `turn` when the whole turn is asked for again (a `message_discarded` stream
    /// event has said to drop what was shown).
    fn retry(&self, agent: &AgentRef, retry: &Retry<'_>) -> Value {
        Line::new(json!({
            "type": "system",
            "subtype": "api_retry",
            "attempt": retry.attempt.saturating_sub(1),
            "max_retries": retry.max_attempts.saturating_sub(1),
            "retry_delay_ms": retry.delay_ms,
            "error_status": retry.error_status,
            "retry_scope": retry.scope.as_str(),
            "error": retry.reason,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        }))
        .subagent(agent)
        .into_value()
    }

    /// The switch to the fallback model, shaped as the SDKs' `model_refusal_fallback` line
    /// with `trigger: "overloaded"`.
    fn model_fallback(&self, agent: &AgentRef, from: &str, to: &str, reason: &str) -> Value {
        Line::new(json!({
            "type": "system",
            "subtype": "model_fallback",
            "trigger": "overloaded",
            "original_model": from,
            "fallback_model": to,
            "error": reason,
            "content": crate::headless::flags::fallback_notice(from, to),
            "session_id": self.session_id,
            "uuid": new_uuid(),
        }))
        .subagent(agent)
        .into_value()
    }

    /// The watchdog's report of a wait past its bound: fleet's own `system` line (Claude Code
    /// has none), with who waits (`agent_id` for a subagent) and on what.
    fn waiting(&self, agent: &AgentRef, report: &fleet_protocol::WaitReport) -> Value {
        Line::new(json!({
            "type": "system",
            "subtype": "waiting",
            "kind": report.kind,
            "waiting_for": report.waiting_for,
            "waited_ms": report.waited_ms,
            "bound_ms": report.bound_ms,
            "agent_id": agent.agent_id,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        }))
        .subagent(agent)
        .into_value()
    }

    /// A compaction, as Claude Code reports it: `compact_metadata` with what started it and
    /// the conversation's size before.
    fn compact_boundary(
        &self,
        agent: &AgentRef,
        boundary: &fleet_protocol::CompactBoundary,
    ) -> Value {
        Line::new(json!({
            "type": "system",
            "subtype": "compact_boundary",
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "compact_metadata": {
                "trigger": boundary.trigger.as_str(),
                "pre_tokens": boundary.pre_tokens,
            },
        }))
        .subagent(agent)
        .into_value()
    }

    fn delta(&self, agent: &AgentRef, delta: Value) -> Value {
        let index = self.block_index.get(&agent.agent_id).copied().unwrap_or(0);
        Line::new(json!({
            "type": "stream_event",
            "event": { "type": "content_block_delta", "index": index, "delta": delta },
            "parent_tool_use_id": agent.parent_tool_use_id,
        }))
        .agent_id(agent)
        .then(json!({ "session_id": self.session_id, "uuid": new_uuid() }))
        .into_value()
    }
}

/// The fields of an [`EventKind::Retry`], borrowed for its line.
struct Retry<'a> {
    attempt: u32,
    max_attempts: u32,
    delay_ms: u64,
    reason: &'a str,
    scope: fleet_protocol::RetryScope,
    error_status: Option<u16>,
}
