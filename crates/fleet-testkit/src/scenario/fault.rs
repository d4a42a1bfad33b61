//! Faults a rule can inject instead of (or in the middle of) its reply, so that retry, error
//! reporting and stream-resumption code can be tested against the failures the real APIs
//! produce.

use super::problem::ScenarioProblem;
use serde::Deserialize;

/// What goes wrong when a rule answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawFault")]
pub enum Fault {
    /// An HTTP error response with the API's error body, instead of the reply.
    Status(StatusFault),
    /// The stream starts normally (HTTP 200), then an SSE `error` event arrives after
    /// `after_events` events and the stream ends. On a non-streaming request the same error
    /// is returned as an HTTP error with the status the API uses for that error type.
    SseError {
        error_type: String,
        message: String,
        after_events: usize,
    },
    /// The connection is closed abruptly (no terminating chunk) after this many SSE events.
    /// On a non-streaming request, after half of the JSON body.
    DropAfterEvents(usize),
    /// Every tool call's streamed input fragments stop one character short, so their
    /// concatenation is not valid JSON. No effect on non-streaming replies.
    MalformedToolJson,
    /// An HTTP 200 `text/event-stream` response with no event at all (what llama-cpp-python
    /// sends for a prompt longer than its context), streaming or not.
    EmptyStream,
    /// The stream sends `after_events` events, then nothing for `ms` milliseconds (`None`:
    /// a day, i.e. for ever as far as a client is concerned), then the rest: the overloaded
    /// server or proxy that holds a connection open without a byte. On a non-streaming
    /// request, the pause falls between the two halves of the JSON body.
    Stall {
        after_events: usize,
        ms: Option<u64>,
    },
    /// After this many SSE events the connection is reset (`SO_LINGER` 0, then closed: the
    /// client reads `ECONNRESET`, not an end of file), as a crashed proxy or load balancer
    /// does. On a non-streaming request, after half of the JSON body.
    ResetAfterEvents(usize),
}

/// An HTTP error status with the API's error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusFault {
    pub status: u16,
    /// The body's `error.type`; by default the one the API uses for `status`.
    pub error_type: Option<String>,
    pub message: Option<String>,
    /// Seconds, sent as `retry-after`.
    pub retry_after: Option<u64>,
    /// Milliseconds, sent as `retry-after-ms` (the Anthropic and OpenAI SDKs prefer it).
    pub retry_after_ms: Option<u64>,
    /// Sent as `x-should-retry: true|false`, which the official SDKs obey over the status.
    pub should_retry: Option<bool>,
}

impl StatusFault {
    pub fn new(status: u16) -> Self {
        Self {
            status,
            error_type: None,
            message: None,
            retry_after: None,
            retry_after_ms: None,
            should_retry: None,
        }
    }
}

impl Fault {
    pub fn status(status: u16) -> Self {
        Self::Status(StatusFault::new(status))
    }

    pub fn sse_error(
        error_type: impl Into<String>,
        message: impl Into<String>,
        after_events: usize,
    ) -> Self {
        Self::SseError {
            error_type: error_type.into(),
            message: message.into(),
            after_events,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ScenarioProblem> {
        match self {
            Self::Status(s) if !(400..=599).contains(&s.status) => {
                Err(ScenarioProblem::NotAnErrorStatus { status: s.status })
            }
            _ => Ok(()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    status: Option<u16>,
    #[serde(rename = "type")]
    error_type: Option<String>,
    message: Option<String>,
    retry_after: Option<u64>,
    retry_after_ms: Option<u64>,
    should_retry: Option<bool>,
    sse_error: Option<RawSseError>,
    after_events: Option<usize>,
    drop_after_events: Option<usize>,
    #[serde(default)]
    malformed_tool_json: bool,
    #[serde(default)]
    empty_stream: bool,
    stall_after_events: Option<usize>,
    stall_ms: Option<u64>,
    reset_after_events: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSseError {
    #[serde(rename = "type", default = "overloaded")]
    error_type: String,
    #[serde(default = "overloaded_message")]
    message: String,
}

fn overloaded() -> String {
    "overloaded_error".into()
}

fn overloaded_message() -> String {
    "Overloaded".into()
}

impl TryFrom<RawFault> for Fault {
    type Error = ScenarioProblem;

    fn try_from(raw: RawFault) -> Result<Self, ScenarioProblem> {
        let kinds = [
            raw.status.is_some(),
            raw.sse_error.is_some(),
            raw.drop_after_events.is_some(),
            raw.malformed_tool_json,
            raw.empty_stream,
            raw.stall_after_events.is_some(),
            raw.reset_after_events.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(ScenarioProblem::FaultKinds);
        }
        if raw.stall_ms.is_some() && raw.stall_after_events.is_none() {
            return Err(ScenarioProblem::StallMsAlone);
        }
        let status_only = raw.error_type.is_some()
            || raw.message.is_some()
            || raw.retry_after.is_some()
            || raw.retry_after_ms.is_some()
            || raw.should_retry.is_some();
        if status_only && raw.status.is_none() {
            return Err(ScenarioProblem::StatusFieldsAlone);
        }
        if raw.after_events.is_some() && raw.sse_error.is_none() {
            return Err(ScenarioProblem::AfterEventsAlone);
        }
        let fault = if let Some(status) = raw.status {
            Self::Status(StatusFault {
                status,
                error_type: raw.error_type,
                message: raw.message,
                retry_after: raw.retry_after,
                retry_after_ms: raw.retry_after_ms,
                should_retry: raw.should_retry,
            })
        } else if let Some(e) = raw.sse_error {
            Self::SseError {
                error_type: e.error_type,
                message: e.message,
                after_events: raw.after_events.unwrap_or(0),
            }
        } else if let Some(k) = raw.drop_after_events {
            Self::DropAfterEvents(k)
        } else if let Some(after_events) = raw.stall_after_events {
            Self::Stall {
                after_events,
                ms: raw.stall_ms,
            }
        } else if let Some(k) = raw.reset_after_events {
            Self::ResetAfterEvents(k)
        } else if raw.malformed_tool_json {
            Self::MalformedToolJson
        } else {
            Self::EmptyStream
        };
        fault.validate()?;
        Ok(fault)
    }
}
