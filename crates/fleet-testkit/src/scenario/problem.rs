//! What the types cannot say about a scenario: the checks a rule, a reply block and a fault
//! pass after serde has read them. Each message says what to write instead.

use serde_json::Value;
use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq)]
pub enum ScenarioProblem {
    #[error("`when.call` counts from 1")]
    CallZero,
    #[error("`times: 0` would never answer; remove the rule instead")]
    TimesZero,
    #[error("tool_use needs a non-empty `name`")]
    ToolUseWithoutName,
    /// The API only ever sends objects as tool input, and clients rely on it.
    #[error("tool_use `{name}`: `input` must be a map (JSON object), got {input}")]
    ToolInputNotObject { name: String, input: Value },
    #[error(
        "a respond block names exactly one of `text`, `thinking`, `redacted_thinking`, \
         `tool_use` (found {found})"
    )]
    BlockKinds { found: usize },
    #[error("`signature` only goes with `thinking`")]
    SignatureWithoutThinking,
    #[error("empty respond block")]
    EmptyBlock,
    #[error("fault status {status} is not an HTTP error status (400–599)")]
    NotAnErrorStatus { status: u16 },
    #[error(
        "a fault names exactly one of `status`, `sse_error`, `drop_after_events`, \
         `malformed_tool_json: true`, `empty_stream: true`, `stall_after_events`, \
         `reset_after_events`"
    )]
    FaultKinds,
    #[error("`stall_ms` goes with `stall_after_events`")]
    StallMsAlone,
    #[error(
        "`type`, `message`, `retry_after`, `retry_after_ms` and `should_retry` go with `status` \
         (an SSE error takes `sse_error: {{type, message}}`)"
    )]
    StatusFieldsAlone,
    #[error("`after_events` goes with `sse_error`")]
    AfterEventsAlone,
}
