//! Why an attempt failed, in words the user can act on, and whether another attempt can help.
//!
//! Most failures follow the retry policy. Two do not, because repeating them only wastes the
//! user's time: a refused connection to this machine (the server is not running; one more
//! try covers a server still starting) and an empty event stream (one more try covers a
//! hiccup; a second in a row means the server will not answer this prompt).

use super::options::Host;
use crate::error::display::base_url_variable;
use crate::error::ModelError;
use std::time::Duration;

/// Attempts in all at a refused connection on this machine.
pub(crate) const REFUSED_LOCAL_ATTEMPTS: u32 = 2;
/// The wait before trying a refused local connection again: enough for a server that is
/// just starting, short enough not to keep the user waiting for nothing.
pub(crate) const REFUSED_LOCAL_DELAY: Duration = Duration::from_millis(300);
/// Empty streams in a row after which fleet stops asking.
pub(crate) const EMPTY_STREAMS_TOLERATED: u32 = 2;

/// The error for a request that never got a response.
pub(crate) fn connect_error(
    provider: &'static str,
    url: &str,
    host: Host,
    error: reqwest::Error,
) -> ModelError {
    if host.loopback && is_refused(&error) {
        return ModelError::NothingListening {
            url: url.to_owned(),
            variable: base_url_variable(provider),
        };
    }
    ModelError::Connect {
        url: url.to_owned(),
        message: describe_reqwest(error),
    }
}

/// Whether the operating system refused the connection (nothing listens on that port),
/// read from the I/O error in the cause chain rather than from any message text.
fn is_refused(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

/// reqwest's top-level message hides the cause ("error sending request"); the chain names it.
/// The URL is left out: the errors that carry this text name it themselves.
pub(crate) fn describe_reqwest(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // hyper repeats its cause's words in its own message; keep each once.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// How many attempts a failure may have in all, whatever the policy allows.
pub(crate) fn attempt_limit(failure: &ModelError, policy_attempts: u32) -> u32 {
    match failure {
        ModelError::NothingListening { .. } => policy_attempts.min(REFUSED_LOCAL_ATTEMPTS),
        _ => policy_attempts,
    }
}

/// Whether the kind of failure is worth another attempt of the same request (the attempt
/// count is checked apart).
pub(crate) fn worth_retrying(failure: &ModelError) -> bool {
    match failure {
        ModelError::NothingListening { .. } => true,
        ModelError::EmptyStream { times, .. } => *times < EMPTY_STREAMS_TOLERATED,
        other => other.is_retryable(),
    }
}

/// The wait before the next attempt.
pub(crate) fn delay(
    failure: &ModelError,
    policy: &crate::retry::RetryPolicy,
    attempt: u32,
) -> Duration {
    match failure {
        ModelError::NothingListening { .. } => REFUSED_LOCAL_DELAY,
        other => policy.delay(attempt, other.retry_after()),
    }
}

/// The body of an error answer that is not the API's error JSON, for its message.
pub(crate) fn unreadable_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        "the response body was empty".into()
    } else {
        crate::anthropic::preview(text.trim())
    }
}
