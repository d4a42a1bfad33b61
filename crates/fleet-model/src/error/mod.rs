//! Everything that can go wrong between fleet and a model server, with enough detail for the
//! user to act on it (the status, the API's own error type and message) and for the retry
//! policy to decide whether another attempt can help.

pub(crate) mod display;

pub use display::human_duration;
use fleet_protocol::{StopReason, Usage};
use std::time::Duration;

/// Each variant's message states every fact once and reads well after the runtime's
/// "API error: " prefix; see `display` for the wording.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The server answered with an HTTP error. `error_type` and `message` are the API's own.
    #[error(fmt = display::api)]
    Api {
        provider: &'static str,
        status: u16,
        error_type: String,
        message: String,
        request_id: Option<String>,
        /// What the server asked us to wait before retrying (`retry-after`, `retry-after-ms`).
        retry_after: Option<Duration>,
        /// The address tried, when the answer alone does not help (a 404, a body that is not
        /// the API's error): the likeliest mistake is then the base URL. Boxed, like `usage`
        /// below, to keep every `Result` carrying this error small.
        url: Option<Box<str>>,
    },
    /// The server reported an error inside an otherwise successful stream (SSE `error` event).
    #[error("{provider} stream error ({error_type}): {message}")]
    StreamError {
        provider: &'static str,
        error_type: String,
        message: String,
    },
    /// The connection could not be made or broke before a response began.
    #[error("could not reach {url}: {message}")]
    Connect { url: String, message: String },
    /// The connection to a server on this machine was refused: it is not running, or listens
    /// elsewhere. `variable` is the one that points fleet at it.
    #[error(
        "nothing is listening at {url} (connection refused): start the server, or point {variable} at the address it listens on"
    )]
    NothingListening { url: String, variable: &'static str },
    /// The server's name does not resolve: a typo in the base URL, a name only another
    /// network knows, or no DNS at all. Waiting rarely mends that, so the transport tries once
    /// more after a short pause (a resolver hiccup) and then says which name and which
    /// variable to check.
    #[error(fmt = display::host_not_found)]
    HostNotFound {
        host: String,
        url: String,
        variable: &'static str,
        /// The resolver's own words ("Name or service not known", "Temporary failure …").
        message: String,
    },
    /// The response stream stopped early: a dropped connection or a missing end event.
    #[error("the response stream was cut off {when}: {message}")]
    StreamInterrupted { when: &'static str, message: String },
    /// No bytes arrived for too long in the middle of a stream.
    #[error(
        "the model server sent nothing for {} in the middle of a reply (the stream's idle limit); raise FLEET_STREAM_IDLE_TIMEOUT_MS to wait longer",
        human_duration(*.0)
    )]
    IdleTimeout(Duration),
    /// The reply did not begin in time: no event (nor whole JSON body) within `after` of
    /// sending. A local server may be reading a long prompt; asking it again would only wait
    /// as long once more, so that case is not retried.
    #[error(
        "no reply from the model server within {} of sending the request (the time-to-first-token limit); raise FLEET_FIRST_TOKEN_TIMEOUT_MS if the server needs longer to read the prompt",
        human_duration(*after)
    )]
    FirstTokenTimeout { after: Duration, local: bool },
    /// The server answered 200 with an event stream that held no event at all, `times` times
    /// in a row. Servers such as llama-cpp-python do this for a prompt longer than their
    /// context; the transport asks once more, then stops.
    #[error(fmt = display::empty_stream)]
    EmptyStream { url: String, times: u32 },
    /// The model produced tool input that is not valid JSON. The reply itself came to its
    /// end: `stop_reason` says how (a `max_tokens` stop means the input was cut by the output
    /// limit, not garbled), and `usage` is what the reply cost, to be counted although the
    /// reply is thrown away.
    #[error(fmt = display::invalid_tool_input)]
    InvalidToolInput {
        tool: String,
        id: String,
        message: String,
        stop_reason: Option<StopReason>,
        usage: Box<Usage>,
    },
    /// The server sent something that does not follow the wire protocol.
    #[error("unexpected response from the model server: {0}")]
    Protocol(String),
    /// Retrying did not help; carries the last failure.
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted {
        attempts: u32,
        #[source]
        last: Box<ModelError>,
    },
    /// fleet itself is misconfigured (no API key, a bad base URL, …).
    #[error("model configuration: {0}")]
    Config(String),
}

/// A bad numeric or on/off variable is a configuration mistake, reported with its name.
impl From<fleet_protocol::env::EnvError> for ModelError {
    fn from(err: fleet_protocol::env::EnvError) -> Self {
        Self::Config(err.to_string())
    }
}

impl ModelError {
    /// Whether a fresh attempt of the same request might succeed. Only errors that happen
    /// before any content reached the caller are ever retried (see `transport`). A refused
    /// local connection, a name that does not resolve and a first empty stream get one more
    /// try from the transport itself, but no more from anyone: asking again and again would
    /// only repeat them.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api { status, .. } => is_retryable_status(*status),
            Self::StreamError { error_type, .. } => matches!(
                error_type.as_str(),
                "overloaded_error"
                    | "api_error"
                    | "rate_limit_error"
                    | "timeout_error"
                    | "server_error"
            ),
            Self::Connect { .. } | Self::StreamInterrupted { .. } | Self::IdleTimeout(_) => true,
            Self::FirstTokenTimeout { local, .. } => !local,
            Self::NothingListening { .. }
            | Self::HostNotFound { .. }
            | Self::EmptyStream { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol(_)
            | Self::RetriesExhausted { .. }
            | Self::Config(_) => false,
        }
    }

    /// The HTTP status, when the server sent one (also through `RetriesExhausted`).
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            Self::RetriesExhausted { last, .. } => last.status(),
            _ => None,
        }
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the server refused the request because the conversation does not fit the
    /// model's context window: Anthropic's 400 "prompt is too long", or an OpenAI-compatible
    /// server's `context_length_exceeded` / "maximum context length". The agent answers it by
    /// compacting its conversation and asking again, instead of failing the run.
    pub fn is_prompt_too_long(&self) -> bool {
        match self.root() {
            Self::Api {
                status,
                error_type,
                message,
                ..
            } => {
                let message = message.to_ascii_lowercase();
                (*status == 400 || *status == 413)
                    && (message.contains("prompt is too long")
                        || message.contains("maximum context length")
                        || message.contains("context_length_exceeded")
                        || message.contains("exceeds the available context size")
                        || error_type == "context_length_exceeded"
                        || error_type == "exceed_context_size_error")
            }
            Self::StreamError { message, .. } => {
                message.to_ascii_lowercase().contains("prompt is too long")
            }
            _ => false,
        }
    }

    /// The error without the retry wrapper.
    pub fn root(&self) -> &ModelError {
        match self {
            Self::RetriesExhausted { last, .. } => last.root(),
            other => other,
        }
    }
}

/// 408 timeout, 409 conflict, 429 rate limit, every 5xx and Anthropic's 529 overloaded.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

#[cfg(test)]
mod prompt_too_long_tests {
    use super::*;

    fn api(status: u16, error_type: &str, message: &str) -> ModelError {
        ModelError::Api {
            provider: "anthropic",
            status,
            error_type: error_type.into(),
            message: message.into(),
            request_id: None,
            retry_after: None,
            url: None,
        }
    }

    #[test]
    fn the_apis_ways_of_saying_the_prompt_is_too_long_are_recognised() {
        assert!(api(
            400,
            "invalid_request_error",
            "prompt is too long: 215000 tokens > 200000 maximum"
        )
        .is_prompt_too_long());
        assert!(api(
            400,
            "invalid_request_error",
            "This model's maximum context length is 8192 tokens. However, you requested 9000"
        )
        .is_prompt_too_long());
        assert!(api(
            400,
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it"
        )
        .is_prompt_too_long());
        assert!(!api(
            400,
            "invalid_request_error",
            "messages: at least one message"
        )
        .is_prompt_too_long());
        assert!(!api(500, "api_error", "prompt is too long").is_prompt_too_long());
    }
}
