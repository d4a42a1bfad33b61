//! Everything that can go wrong between fleet and a model server, with enough detail for the
//! user to act on it (the status, the API's own error type and message) and for the retry
//! policy to decide whether another attempt can help.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The server answered with an HTTP error. `error_type` and `message` are the API's own.
    #[error("{provider} API error {status} ({error_type}): {message}")]
    Api {
        provider: &'static str,
        status: u16,
        error_type: String,
        message: String,
        request_id: Option<String>,
        /// What the server asked us to wait before retrying (`retry-after`, `retry-after-ms`).
        retry_after: Option<Duration>,
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
    /// The response stream stopped early: a dropped connection or a missing end event.
    #[error("the response stream was cut off {when}: {message}")]
    StreamInterrupted { when: &'static str, message: String },
    /// No bytes arrived for too long in the middle of a stream.
    #[error("no data from the model server for {0:?} (idle timeout)")]
    IdleTimeout(Duration),
    /// The model produced tool input that is not valid JSON. The reply itself came to its
    /// end: `stop_reason` says how (a `max_tokens` stop means the input was cut by the output
    /// limit, not garbled), and `usage` is what the reply cost, to be counted although the
    /// reply is thrown away.
    #[error("the model's input for tool `{tool}` (call {id}) is not valid JSON: {message}")]
    InvalidToolInput {
        tool: String,
        id: String,
        message: String,
        stop_reason: Option<fleet_protocol::StopReason>,
        usage: fleet_protocol::Usage,
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
    /// before any content reached the caller are ever retried (see `transport`).
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
            Self::InvalidToolInput { .. }
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
                        || error_type == "context_length_exceeded")
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
        assert!(!api(
            400,
            "invalid_request_error",
            "messages: at least one message"
        )
        .is_prompt_too_long());
        assert!(!api(500, "api_error", "prompt is too long").is_prompt_too_long());
    }
}
