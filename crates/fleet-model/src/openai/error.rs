//! Reading the error bodies of OpenAI-compatible servers, which agree on very little.
//!
//! OpenAI nests `{"error":{"message","type","code"}}`; Ollama sends `{"error":"text"}`; older
//! vLLM sends the fields flat with `"object":"error"`; FastAPI-based servers say `{"detail":…}`;
//! a proxy in front of any of them may answer with an HTML page. Each gives the user the
//! server's own words when there are any.

use crate::anthropic::preview;
use crate::error::ModelError;
use crate::transport;
use fleet_protocol::ApiErrorBody;
use reqwest::header::HeaderMap;
use serde_json::Value;

pub(crate) const PROVIDER: &str = "openai";

/// The error for a non-2xx answer from `url`.
pub(crate) fn api_error(status: u16, headers: &HeaderMap, body: &[u8], url: &str) -> ModelError {
    let described = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| describe(&v));
    let (error_type, message, readable) = match described {
        Some((error_type, message)) => (error_type, message, true),
        None => (None, transport::unreadable_body(body), false),
    };
    ModelError::Api {
        provider: PROVIDER,
        status,
        error_type: error_type.unwrap_or_else(|| ApiErrorBody::type_for_status(status).to_owned()),
        message,
        request_id: transport::request_id(headers),
        retry_after: transport::retry_after(headers),
        url: (status == 404 || !readable).then(|| url.to_owned()),
    }
}

/// The error for an error object that arrived inside a successful stream.
pub(crate) fn stream_error(body: &Value) -> ModelError {
    let (error_type, message) =
        describe(body).unwrap_or_else(|| (None, preview(&body.to_string())));
    ModelError::StreamError {
        provider: PROVIDER,
        // Unnamed server failures are treated like the Anthropic `api_error`: worth a retry
        // while nothing has been shown yet.
        error_type: error_type.unwrap_or_else(|| "api_error".into()),
        message,
    }
}

/// The error type (when the server named one) and message of an error body, in any of the
/// shapes above; `None` when `body` holds none of them.
pub(crate) fn describe(body: &Value) -> Option<(Option<String>, String)> {
    if let Value::String(message) = body {
        return Some((None, message.clone()));
    }
    match body.get("error") {
        Some(Value::String(message)) => return Some((None, message.clone())),
        Some(inner @ Value::Object(_)) => return describe_flat(inner),
        _ => {}
    }
    if let Some(found) = describe_flat(body) {
        return Some(found);
    }
    match body.get("detail")? {
        Value::String(detail) => Some((None, detail.clone())),
        other => Some((None, preview(&other.to_string()))),
    }
}

/// `{"message", "type", "code"}` at one level; the type falls back to the code.
fn describe_flat(object: &Value) -> Option<(Option<String>, String)> {
    let message = match object.get("message")? {
        Value::String(message) => message.clone(),
        other => other.to_string(),
    };
    let kind = non_empty(object.get("type")).or_else(|| non_empty(object.get("code")));
    Some((kind, message))
}

fn non_empty(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;
    use serde_json::json;
    use std::time::Duration;

    const URL: &str = "http://127.0.0.1:9/v1/chat/completions";

    fn parts(error: ModelError) -> (u16, String, String, Option<String>, Option<Duration>) {
        match error {
            ModelError::Api {
                status,
                error_type,
                message,
                request_id,
                retry_after,
                ..
            } => (status, error_type, message, request_id, retry_after),
            other => panic!("expected an API error, got {other:?}"),
        }
    }

    #[test]
    fn openai_error_body_keeps_type_message_and_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-request-id", HeaderValue::from_static("req_1"));
        headers.insert("retry-after", HeaderValue::from_static("3"));
        let body = br#"{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded","param":null,"code":null}}"#;
        let (status, kind, message, id, wait) = parts(api_error(429, &headers, body, URL));
        assert_eq!(status, 429);
        assert_eq!(kind, "rate_limit_exceeded");
        assert_eq!(message, "Rate limit reached");
        assert_eq!(id.as_deref(), Some("req_1"));
        assert_eq!(wait, Some(Duration::from_secs(3)));
    }

    #[test]
    fn code_stands_in_for_a_missing_type() {
        let body = br#"{"error":{"message":"Incorrect API key provided","type":"","code":"invalid_api_key"}}"#;
        let (_, kind, message, ..) = parts(api_error(401, &HeaderMap::new(), body, URL));
        assert_eq!(kind, "invalid_api_key");
        assert_eq!(message, "Incorrect API key provided");
    }

    #[test]
    fn other_servers_shapes_are_read() {
        let ollama = br#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
        let (_, kind, message, ..) = parts(api_error(404, &HeaderMap::new(), ollama, URL));
        assert_eq!(kind, "not_found_error");
        assert!(message.contains("llama9"));

        let vllm = br#"{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}"#;
        let (_, kind, message, ..) = parts(api_error(400, &HeaderMap::new(), vllm, URL));
        assert_eq!(
            (kind.as_str(), message.as_str()),
            ("BadRequestError", "max_tokens is too large")
        );

        let fastapi = br#"{"detail":"Not Found"}"#;
        let (_, _, message, ..) = parts(api_error(404, &HeaderMap::new(), fastapi, URL));
        assert_eq!(message, "Not Found");
    }

    #[test]
    fn html_and_empty_bodies_still_say_something() {
        let html = b"<html><body><h1>502 Bad Gateway</h1></body></html>";
        let (_, kind, message, ..) = parts(api_error(502, &HeaderMap::new(), html, URL));
        assert_eq!(kind, "api_error");
        assert!(message.contains("502 Bad Gateway"));
        let (_, _, message, ..) = parts(api_error(503, &HeaderMap::new(), b"", URL));
        assert_eq!(message, "the response body was empty");
    }

    #[test]
    fn the_url_is_named_when_the_answer_alone_does_not_help() {
        let url_of = |status, body: &[u8]| match api_error(status, &HeaderMap::new(), body, URL) {
            ModelError::Api { url, .. } => url,
            other => panic!("expected an API error, got {other:?}"),
        };
        assert_eq!(
            url_of(502, b"<html>Bad Gateway</html>").as_deref(),
            Some(URL)
        );
        assert_eq!(
            url_of(404, br#"{"detail":"Not Found"}"#).as_deref(),
            Some(URL)
        );
        assert_eq!(url_of(400, br#"{"error":"bad tools"}"#), None);
    }

    #[test]
    fn stream_errors_name_the_server_type_or_default() {
        let named = stream_error(&json!({"error": {"message": "boom", "type": "server_error"}}));
        assert!(
            matches!(named, ModelError::StreamError { ref error_type, ref message, .. }
            if error_type == "server_error" && message == "boom")
        );
        let bare = stream_error(&json!({"error": "overloaded"}));
        assert!(
            matches!(bare, ModelError::StreamError { ref error_type, ref message, .. }
            if error_type == "api_error" && message == "overloaded")
        );
    }
}
