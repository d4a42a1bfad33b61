//! A rule: when it applies, how often, and what it answers. Rules are tried in order; the
//! first one whose conditions all hold and that is not used up answers the request.

use super::fault::{Fault, StatusFault};
use super::problem::ScenarioProblem;
use super::reply::{ReplyBlock, UsageOverride};
use crate::view::{Protocol, RequestView};
use fleet_protocol::StopReason;
use serde::Deserialize;
use serde_json::Value;

/// One scripted answer and the conditions under which it is given.
///
/// Built from YAML/JSON or in Rust:
///
/// ```
/// use fleet_testkit::Rule;
/// use serde_json::json;
///
/// let read = Rule::tool_use("Read", json!({"file_path": "/tmp/x"}))
///     .named("first-read")
///     .when_call(1);
/// let done = Rule::text("All done.").when_tool_result(true).once();
/// let flaky = Rule::text("ok").fault_status(429).retry_after(1).once();
/// # let _ = (read, done, flaky);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Shown in the request log and in assertions; unnamed rules are shown as `rules[i]`.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub when: When,
    /// The rule answers at most this many times (absent: unlimited).
    #[serde(default)]
    pub times: Option<u32>,
    /// Milliseconds to wait before the response starts.
    #[serde(default)]
    pub delay_ms: u64,
    /// Milliseconds between the response's headers and its first bytes (a server that
    /// answers at once, then reads the prompt before it streams).
    #[serde(default)]
    pub first_event_delay_ms: u64,
    #[serde(default)]
    pub respond: Vec<ReplyBlock>,
    /// Default: `tool_use` when the reply has a tool call, else `end_turn`.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub usage: UsageOverride,
    #[serde(default)]
    pub fault: Option<Fault>,
    /// Overrides the scenario's `chunk_size` for this rule's responses.
    #[serde(default)]
    pub chunk_size: Option<usize>,
    /// Overrides the scenario's `chunk_delay_ms` for this rule's responses.
    #[serde(default)]
    pub chunk_delay_ms: Option<u64>,
}

/// Conditions on a request; every condition given must hold (none given: always holds).
///
/// Texts are compared by substring, case-sensitively. On the OpenAI path the "last user
/// message" is the run of messages after the last assistant message (user text plus `tool`
/// results), which is what an Anthropic user turn holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    #[serde(default)]
    pub system_contains: Option<String>,
    /// Substring of the last user message's text (string content or text blocks).
    #[serde(default)]
    pub last_user_contains: Option<String>,
    /// Whether the last user message carries tool results.
    #[serde(default)]
    pub has_tool_result: Option<bool>,
    /// Substring of any tool result's text in the last user message.
    #[serde(default)]
    pub tool_result_contains: Option<String>,
    /// Substring of the first user message: a tag that tells concurrent conversations apart.
    #[serde(default)]
    pub marker: Option<String>,
    /// The request is the N-th the server received (1-based, across both protocols).
    #[serde(default)]
    pub call: Option<u64>,
    /// Only requests on this wire protocol (`anthropic` or `openai`).
    #[serde(default)]
    pub protocol: Option<Protocol>,
}

impl When {
    pub(crate) fn matches(&self, req: &RequestView, call: u64) -> bool {
        fn contains(hay: &str, needle: &Option<String>) -> bool {
            needle.as_deref().is_none_or(|n| hay.contains(n))
        }
        contains(&req.system, &self.system_contains)
            && contains(&req.last_user, &self.last_user_contains)
            && contains(&req.tool_result_text, &self.tool_result_contains)
            && contains(&req.first_user, &self.marker)
            && self
                .has_tool_result
                .is_none_or(|h| h == req.has_tool_result)
            && self.call.is_none_or(|c| c == call)
            && self.protocol.is_none_or(|p| p == req.protocol)
    }
}

impl Rule {
    /// A rule that answers with no content; add blocks with the `then_*` methods.
    pub fn new() -> Self {
        Self::default()
    }

    /// A rule answering with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().then_text(text)
    }

    /// A rule answering with one tool call (id generated).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Self::new().then_tool_use(name, input)
    }

    /// A rule answering with these blocks.
    pub fn reply(blocks: impl IntoIterator<Item = ReplyBlock>) -> Self {
        Self {
            respond: blocks.into_iter().collect(),
            ..Self::default()
        }
    }

    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub fn then(mut self, block: ReplyBlock) -> Self {
        self.respond.push(block);
        self
    }

    pub fn then_text(self, text: impl Into<String>) -> Self {
        self.then(ReplyBlock::text(text))
    }

    pub fn then_thinking(self, thinking: impl Into<String>) -> Self {
        self.then(ReplyBlock::thinking(thinking))
    }

    pub fn then_thinking_signed(
        self,
        thinking: impl Into<String>,
        signature: impl Into<String>,
    ) -> Self {
        self.then(ReplyBlock::thinking_signed(thinking, signature))
    }

    pub fn then_tool_use(self, name: impl Into<String>, input: Value) -> Self {
        self.then(ReplyBlock::tool_use(name, input))
    }

    pub fn then_tool_use_with_id(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Self {
        self.then(ReplyBlock::tool_use_with_id(id, name, input))
    }

    pub fn when(mut self, when: When) -> Self {
        self.when = when;
        self
    }

    pub fn when_call(mut self, n: u64) -> Self {
        self.when.call = Some(n);
        self
    }

    pub fn when_system_contains(mut self, s: impl Into<String>) -> Self {
        self.when.system_contains = Some(s.into());
        self
    }

    pub fn when_last_user_contains(mut self, s: impl Into<String>) -> Self {
        self.when.last_user_contains = Some(s.into());
        self
    }

    pub fn when_tool_result(mut self, has: bool) -> Self {
        self.when.has_tool_result = Some(has);
        self
    }

    pub fn when_tool_result_contains(mut self, s: impl Into<String>) -> Self {
        self.when.tool_result_contains = Some(s.into());
        self
    }

    pub fn when_marker(mut self, marker: impl Into<String>) -> Self {
        self.when.marker = Some(marker.into());
        self
    }

    pub fn when_protocol(mut self, protocol: Protocol) -> Self {
        self.when.protocol = Some(protocol);
        self
    }

    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    pub fn once(self) -> Self {
        self.times(1)
    }

    pub fn delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    pub fn first_event_delay_ms(mut self, ms: u64) -> Self {
        self.first_event_delay_ms = ms;
        self
    }

    pub fn stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }

    pub fn usage(mut self, usage: UsageOverride) -> Self {
        self.usage = usage;
        self
    }

    pub fn input_tokens(mut self, n: u64) -> Self {
        self.usage.input_tokens = Some(n);
        self
    }

    pub fn output_tokens(mut self, n: u64) -> Self {
        self.usage.output_tokens = Some(n);
        self
    }

    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.chunk_size = Some(bytes);
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = Some(ms);
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Answer with an HTTP error of this status (the API's error body, default message).
    pub fn fault_status(self, status: u16) -> Self {
        self.with_fault(Fault::status(status))
    }

    /// Sets the error message of a status fault (a 500 if the rule had no status fault).
    pub fn fault_message(self, message: impl Into<String>) -> Self {
        let message = message.into();
        self.edit_status(500, |s| s.message = Some(message))
    }

    /// Sets `retry-after` (seconds) on a status fault (a 429 if the rule had none).
    pub fn retry_after(self, secs: u64) -> Self {
        self.edit_status(429, |s| s.retry_after = Some(secs))
    }

    /// Sets `retry-after-ms` on a status fault (a 429 if the rule had none).
    pub fn retry_after_ms(self, ms: u64) -> Self {
        self.edit_status(429, |s| s.retry_after_ms = Some(ms))
    }

    /// An SSE `error` event after `after_events` events, then the end of the stream.
    pub fn sse_error(
        self,
        error_type: impl Into<String>,
        message: impl Into<String>,
        after_events: usize,
    ) -> Self {
        self.with_fault(Fault::sse_error(error_type, message, after_events))
    }

    /// Close the connection abruptly after `events` SSE events.
    pub fn drop_after_events(self, events: usize) -> Self {
        self.with_fault(Fault::DropAfterEvents(events))
    }

    /// Send `events` SSE events, then nothing for `ms` milliseconds, then the rest.
    pub fn stall_after_events(self, events: usize, ms: u64) -> Self {
        self.with_fault(Fault::Stall {
            after_events: events,
            ms: Some(ms),
        })
    }

    /// Send `events` SSE events, then nothing, for ever (a day): only the client's own
    /// idle limit ends the request.
    pub fn stall_forever_after_events(self, events: usize) -> Self {
        self.with_fault(Fault::Stall {
            after_events: events,
            ms: None,
        })
    }

    /// Reset the connection (TCP RST) after `events` SSE events.
    pub fn reset_after_events(self, events: usize) -> Self {
        self.with_fault(Fault::ResetAfterEvents(events))
    }

    /// Tool inputs are streamed as fragments that do not join into valid JSON.
    pub fn malformed_tool_json(self) -> Self {
        self.with_fault(Fault::MalformedToolJson)
    }

    /// Answer with an HTTP 200 event stream that carries no event at all.
    pub fn empty_stream(self) -> Self {
        self.with_fault(Fault::EmptyStream)
    }

    /// Edits the rule's status fault, first replacing any other fault with `default_status`.
    fn edit_status(mut self, default_status: u16, edit: impl FnOnce(&mut StatusFault)) -> Self {
        let mut status = match self.fault.take() {
            Some(Fault::Status(s)) => s,
            _ => StatusFault::new(default_status),
        };
        edit(&mut status);
        self.fault = Some(Fault::Status(status));
        self
    }

    /// The name shown in the request log: the rule's name, or its position.
    pub fn label(&self, index: usize) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("rules[{index}]"))
    }

    pub(crate) fn validate(&self) -> Result<(), ScenarioProblem> {
        if self.when.call == Some(0) {
            return Err(ScenarioProblem::CallZero);
        }
        if self.times == Some(0) {
            return Err(ScenarioProblem::TimesZero);
        }
        for block in &self.respond {
            block.validate()?;
        }
        if let Some(fault) = &self.fault {
            fault.validate()?;
        }
        Ok(())
    }

    /// Whether the reply makes a tool call, which decides the default stop reason.
    pub(crate) fn has_tool_use(&self) -> bool {
        self.respond
            .iter()
            .any(|b| matches!(b, ReplyBlock::ToolUse { .. }))
    }
}
