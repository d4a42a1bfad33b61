//! The wording of the errors that need more than one format string: each fact once (the
//! runtime already says "API error: "), the server's own words where it gave any, and what
//! the user can change when the likely cause is on their side.

use fleet_protocol::{ApiErrorBody, StopReason, Usage};
use std::fmt;
use std::time::Duration;

/// "250 ms", "40 s", "3 min", "1 h 30 min": how long a limit was, as a person says it.
pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1_000 {
        return format!("{ms} ms");
    }
    let secs = d.as_secs();
    if secs < 60 {
        return match ms % 1_000 {
            0 => format!("{secs} s"),
            _ => format!("{:.1} s", d.as_secs_f64()),
        };
    }
    let (h, m, s) = (secs / 3_600, secs / 60 % 60, secs % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 {
        parts.push(format!("{m} min"));
    }
    if s > 0 {
        parts.push(format!("{s} s"));
    }
    parts.join(" ")
}

/// The variable that points fleet at a provider's server.
pub(crate) fn base_url_variable(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "ANTHROPIC_BASE_URL",
        _ => "OPENAI_BASE_URL",
    }
}

/// `openai 404 Not Found from http://…/v1/chat/completions — the base URL may be wrong: …`,
/// `anthropic 429 Too Many Requests (rate_limit_error): Rate limited`.
// thiserror hands a variant's fields over one by one; they are the error, not a choice.
#[allow(clippy::too_many_arguments)]
pub(super) fn api(
    provider: &&'static str,
    status: &u16,
    error_type: &String,
    message: &String,
    _request_id: &Option<String>,
    _retry_after: &Option<Duration>,
    url: &Option<Box<str>>,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    write!(f, "{provider} {status}")?;
    let reason = reqwest::StatusCode::from_u16(*status)
        .ok()
        .and_then(|s| s.canonical_reason());
    if let Some(reason) = reason {
        write!(f, " {reason}")?;
    }
    // The type the status implies anyway says nothing new.
    if !error_type.is_empty() && error_type != ApiErrorBody::type_for_status(*status) {
        write!(f, " ({error_type})")?;
    }
    if let Some(url) = url {
        write!(f, " from {url}")?;
    }
    let says_something = !message.trim().is_empty()
        && !reason.is_some_and(|r| message.trim().eq_ignore_ascii_case(r));
    if says_something {
        write!(f, ": {message}")?;
    }
    if *status == 404 && !is_unknown_model(message) {
        write!(
            f,
            " — the base URL may be wrong: check {}",
            base_url_variable(provider)
        )?;
    }
    Ok(())
}

/// Whether a 404's message says the model is unknown (Ollama's "model … not found", OpenAI's
/// "The model … does not exist"): then the address is right and the hint would mislead.
fn is_unknown_model(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("model") && (message.contains("not found") || message.contains("not exist"))
}

/// `cannot resolve the host `x.invalid` (http://x.invalid/v1/messages): Name or service not
/// known; check the name in ANTHROPIC_BASE_URL, and the network's DNS`.
pub(super) fn host_not_found(
    host: &str,
    url: &str,
    variable: &str,
    message: &str,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    write!(f, "cannot resolve the host `{host}` ({url})")?;
    if !message.trim().is_empty() {
        write!(f, ": {}", message.trim())?;
    }
    write!(
        f,
        "; check the name in {variable}, and that this machine can reach its DNS"
    )
}

pub(super) fn empty_stream(url: &String, times: &u32, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if *times < 2 {
        return write!(
            f,
            "the server at {url} answered with an empty event stream (no event at all)"
        );
    }
    write!(
        f,
        "the server at {url} sent nothing {} in a row (an empty event stream, no event at all); \
         the prompt may exceed the server's context window: shorten the conversation, or give \
         the server a larger context (llama.cpp: --ctx-size)",
        match times {
            2 => "twice".to_owned(),
            n => format!("{n} times"),
        }
    )
}

// thiserror hands each field over by reference, the box included.
#[allow(clippy::borrowed_box)]
pub(super) fn invalid_tool_input(
    tool: &String,
    id: &String,
    message: &String,
    stop_reason: &Option<StopReason>,
    _usage: &Box<Usage>,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    write!(
        f,
        "the reply's input for tool `{tool}` (call {id}) is not valid JSON"
    )?;
    match stop_reason {
        Some(StopReason::MaxTokens) => write!(
            f,
            ": the reply was cut off in the middle of it by its output limit (max_tokens) ({message})"
        ),
        Some(StopReason::ModelContextWindowExceeded) => write!(
            f,
            ": the reply was cut off in the middle of it where the model's context window filled ({message})"
        ),
        _ => write!(f, ": {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelError;

    fn api_error(status: u16, error_type: &str, message: &str, url: Option<&str>) -> String {
        ModelError::Api {
            provider: "openai",
            status,
            error_type: error_type.into(),
            message: message.into(),
            request_id: Some("req_1".into()),
            retry_after: None,
            url: url.map(Box::from),
        }
        .to_string()
    }

    #[test]
    fn a_404_names_the_url_and_the_variable_once() {
        let text = api_error(
            404,
            "not_found_error",
            "Not Found",
            Some("http://127.0.0.1:8080/v1/chat/completions"),
        );
        assert_eq!(
            text,
            "openai 404 Not Found from http://127.0.0.1:8080/v1/chat/completions — the base URL may be wrong: check OPENAI_BASE_URL"
        );
        let model = api_error(
            404,
            "not_found_error",
            "model \"llama9\" not found, try pulling it first",
            None,
        );
        assert_eq!(
            model,
            "openai 404 Not Found: model \"llama9\" not found, try pulling it first"
        );
    }

    #[test]
    fn provider_status_and_type_appear_once_each() {
        let text = api_error(429, "rate_limit_exceeded", "Rate limit reached", None);
        assert_eq!(
            text,
            "openai 429 Too Many Requests (rate_limit_exceeded): Rate limit reached"
        );
        assert_eq!(text.matches("429").count(), 1);
        let plain = api_error(400, "invalid_request_error", "messages: empty", None);
        assert_eq!(plain, "openai 400 Bad Request: messages: empty");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(human_duration(Duration::from_millis(1_500)), "1.5 s");
        assert_eq!(human_duration(Duration::from_secs(40)), "40 s");
        assert_eq!(human_duration(Duration::from_secs(180)), "3 min");
        assert_eq!(
            human_duration(Duration::from_secs(5_410)),
            "1 h 30 min 10 s"
        );
    }

    #[test]
    fn a_cut_tool_input_says_which_limit_cut_it() {
        let error = |stop_reason| ModelError::InvalidToolInput {
            tool: "Write".into(),
            id: "call_1".into(),
            message: "EOF while parsing a string".into(),
            stop_reason,
            usage: Box::new(Usage::unreported()),
        };
        let garbled = error(Some(StopReason::ToolUse)).to_string();
        assert_eq!(
            garbled,
            "the reply's input for tool `Write` (call call_1) is not valid JSON: EOF while parsing a string"
        );
        let cut = error(Some(StopReason::MaxTokens)).to_string();
        assert!(cut.contains("output limit (max_tokens)"), "{cut}");
        let full = error(Some(StopReason::ModelContextWindowExceeded)).to_string();
        assert!(full.contains("context window"), "{full}");
    }
}
