//! `AgentEvent` → the JSON objects of `stream-json`, in Claude Code's shapes.
//!
//! Both JSON printers share this: `stream-json` writes each object as a line, `json` keeps the
//! result (or, verbose, collects them all). Keys come in the order Claude Code writes them where
//! it has the same concept; keys only it has a concept for are left out rather than faked.
//!
//! Every line a subagent causes carries its `parent_tool_use_id` and `agent_id`, so a reader
//! can tell the agents apart without keeping state.

use fleet_protocol::{
    AgentEvent, AgentRef, ContentBlock, EventKind, ResultSubtype, RunResult, SessionInfo,
    ToolResultEvent, Usage,
};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::SystemTime;

/// Turns events into output objects, keeping the little state the shapes need.
#[derive(Debug, Default)]
pub(super) struct Encoder {
    session_id: String,
    partial: bool,
    /// Position of the next content block per agent, for the `index` of partial deltas: the
    /// events carry no block index, but blocks complete in order and each committed message
    /// starts the count again.
    block_index: HashMap<String, usize>,
    /// Tool calls finished per subagent, for its `task_notification`.
    tool_uses: HashMap<String, u64>,
}

impl Encoder {
    pub(super) fn new(session_id: Option<String>, partial: bool) -> Self {
        Self {
            session_id: session_id.unwrap_or_default(),
            partial,
            ..Self::default()
        }
    }

    /// The object for one event, or `None` for events with no line of their own
    /// (committed messages; deltas unless partial messages were asked for).
    pub(super) fn encode(&mut self, event: &AgentEvent) -> Option<Value> {
        let agent = &event.agent;
        let is_sub = agent.parent_tool_use_id.is_some();
        match &event.kind {
            EventKind::TaskStarted(_)
            | EventKind::TaskUpdated { .. }
            | EventKind::TaskNotified(_)
            | EventKind::BackgroundTasksChanged(_) => None,
            EventKind::Started(_) if is_sub => Some(self.task_started(agent)),
            EventKind::Started(info) => {
                self.session_id.clone_from(&info.session_id);
                Some(self.init(info))
            }
            EventKind::Retry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                self.block_index.remove(&agent.agent_id);
                Some(self.retry(agent, *attempt, *max_attempts, *delay_ms, reason))
            }
            EventKind::TextDelta(text) => self
                .partial
                .then(|| self.delta(agent, json!({ "type": "text_delta", "text": text }))),
            EventKind::ThinkingDelta(text) => self
                .partial
                .then(|| self.delta(agent, json!({ "type": "thinking_delta", "thinking": text }))),
            EventKind::AssistantBlock {
                message_id,
                model,
                block,
                usage,
            } => {
                *self.block_index.entry(agent.agent_id.clone()).or_default() += 1;
                Some(self.assistant(agent, message_id, model, block, usage))
            }
            EventKind::ToolResult(result) => {
                *self.tool_uses.entry(agent.agent_id.clone()).or_default() += 1;
                Some(self.tool_result(agent, result))
            }
            EventKind::MessageCommitted(_) => {
                self.block_index.remove(&agent.agent_id);
                None
            }
            EventKind::Finished(result) if is_sub => Some(self.task_notification(agent, result)),
            EventKind::Finished(result) => {
                if self.session_id.is_empty() {
                    self.session_id.clone_from(&result.session_id);
                }
                Some(result_value(result, &self.session_id))
            }
        }
    }

    fn init(&self, info: &SessionInfo) -> Value {
        json!({
            "type": "system",
            "subtype": "init",
            "cwd": info.cwd,
            "session_id": self.session_id,
            "tools": info.tools,
            "mcp_servers": [],
            "model": info.model,
            "permissionMode": info.permission_mode,
            "additional_directories": info.additional_directories,
            "fleet_version": env!("CARGO_PKG_VERSION"),
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
        }));
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
    /// made (2 for the first retry) and `max_attempts` includes the first one.
    fn retry(
        &self,
        agent: &AgentRef,
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: &str,
    ) -> Value {
        Line::new(json!({
            "type": "system",
            "subtype": "api_retry",
            "attempt": attempt.saturating_sub(1),
            "max_retries": max_attempts.saturating_sub(1),
            "retry_delay_ms": delay_ms,
            "error": reason,
            "session_id": self.session_id,
            "uuid": new_uuid(),
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

    /// A subagent starting is not a new session: it is reported the way Claude Code reports
    /// a task, so that scripts keying on the first `init` are not misled.
    fn task_started(&self, agent: &AgentRef) -> Value {
        json!({
            "type": "system",
            "subtype": "task_started",
            "task_id": agent.agent_id,
            "tool_use_id": agent.parent_tool_use_id,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        })
    }

    /// A subagent's end, as a task notification rather than a `result`: a `result` line
    /// means the session's run is over to every existing reader.
    fn task_notification(&self, agent: &AgentRef, r: &RunResult) -> Value {
        json!({
            "type": "system",
            "subtype": "task_notification",
            "task_id": agent.agent_id,
            "tool_use_id": agent.parent_tool_use_id,
            "status": if r.is_error() { "failed" } else { "completed" },
            "summary": r.result,
            "usage": {
                "total_tokens": r.usage.total(),
                "tool_uses": self.tool_uses.get(&agent.agent_id).copied().unwrap_or(0),
                "duration_ms": r.duration_ms,
            },
            "total_cost_usd": r.total_cost_usd,
            "session_id": self.session_id,
            "uuid": new_uuid(),
        })
    }
}

/// The `result` object: the last line of `stream-json` and the whole of `json`.
fn result_value(r: &RunResult, session_id: &str) -> Value {
    let mut line = Line::new(json!({
        "type": "result",
        "subtype": r.subtype.as_str(),
        "is_error": r.is_error(),
        "duration_ms": r.duration_ms,
        "duration_api_ms": r.duration_api_ms,
        "num_turns": r.num_turns,
        "result": r.result,
        "stop_reason": r.stop_reason,
        "session_id": session_id,
        "total_cost_usd": r.total_cost_usd,
        // All four counts always, zero when unknown: readers sum them without checks.
        "usage": {
            "input_tokens": r.usage.input_tokens,
            "cache_creation_input_tokens": r.usage.cache_creation(),
            "cache_read_input_tokens": r.usage.cache_read(),
            "output_tokens": r.usage.output_tokens,
        },
        "modelUsage": r.model_usage,
        "permission_denials": r.permission_denials,
        "api_error_status": r.api_error_status,
        "terminal_reason": terminal_reason(r),
    }));
    if r.is_error() {
        line = line.then(json!({ "errors": [r.result] }));
    }
    line.then(json!({ "uuid": new_uuid() })).into_value()
}

/// Why the loop stopped, in one word a script can switch on.
fn terminal_reason(r: &RunResult) -> &'static str {
    match r.subtype {
        ResultSubtype::Success => "completed",
        ResultSubtype::ErrorMaxTurns => "max_turns",
        ResultSubtype::ErrorMaxBudgetUsd => "max_budget_usd",
        ResultSubtype::ErrorDuringExecution if r.api_error_status.is_some() => "model_error",
        ResultSubtype::ErrorDuringExecution => "error",
    }
}

fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// RFC 3339 in UTC with milliseconds, as in `2026-11-30T13:28:18.909Z`.
fn timestamp() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// An output object assembled from ordered parts (`serde_json` keeps insertion order here),
/// so the subagent keys can sit where Claude Code puts them.
struct Line(Map<String, Value>);

impl Line {
    fn new(head: Value) -> Self {
        Self(Map::new()).then(head)
    }

    /// Appends the keys of `more`, an object.
    fn then(mut self, more: Value) -> Self {
        if let Value::Object(map) = more {
            self.0.extend(map);
        }
        self
    }

    /// `agent_id` for a subagent's line that already has `parent_tool_use_id`.
    fn agent_id(self, agent: &AgentRef) -> Self {
        match agent.parent_tool_use_id {
            Some(_) => self.then(json!({ "agent_id": agent.agent_id })),
            None => self,
        }
    }

    /// Both subagent keys, for shapes that have neither.
    fn subagent(self, agent: &AgentRef) -> Self {
        match &agent.parent_tool_use_id {
            Some(parent) => self.then(json!({
                "parent_tool_use_id": parent,
                "agent_id": agent.agent_id,
            })),
            None => self,
        }
    }

    fn into_value(self) -> Value {
        Value::Object(self.0)
    }
}
