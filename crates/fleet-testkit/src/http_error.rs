//! Error responses in each protocol's own shape: Anthropic's
//! `{"type":"error","error":{"type","message"}}` and OpenAI's
//! `{"error":{"message","type","param","code"}}`, so clients exercise their real error parsing.

use crate::scenario::StatusFault;
use crate::view::Protocol;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fleet_protocol::ApiErrorBody;
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub status: u16,
    pub error_type: String,
    pub message: String,
    pub headers: Vec<(&'static str, String)>,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            error_type: ApiErrorBody::type_for_status(status).into(),
            message: message.into(),
            headers: Vec::new(),
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    pub fn from_fault(f: &StatusFault) -> Self {
        let mut e = Self::new(
            f.status,
            f.message
                .clone()
                .unwrap_or_else(|| default_message(f.status).into()),
        );
        if let Some(t) = &f.error_type {
            e.error_type = t.clone();
        }
        if let Some(s) = f.retry_after {
            e.headers.push(("retry-after", s.to_string()));
        }
        if let Some(ms) = f.retry_after_ms {
            e.headers.push(("retry-after-ms", ms.to_string()));
        }
        if let Some(b) = f.should_retry {
            e.headers.push(("x-should-retry", b.to_string()));
        }
        e
    }

    /// The HTTP status the API uses for an error type that arrives mid-stream, for the
    /// non-streaming form of an SSE error fault.
    pub fn status_for_type(error_type: &str) -> u16 {
        match error_type {
            "invalid_request_error" => 400,
            "authentication_error" => 401,
            "permission_error" => 403,
            "not_found_error" => 404,
            "request_too_large" => 413,
            "rate_limit_error" => 429,
            "overloaded_error" => 529,
            _ => 500,
        }
    }

    pub fn into_response(self, protocol: Protocol, request_id: &str) -> Response {
        let body = match protocol {
            Protocol::Anthropic => {
                serde_json::to_value(ApiErrorBody::new(&self.error_type, &self.message))
                    .unwrap_or_default()
            }
            Protocol::OpenAi => openai_error(&self.error_type, &self.message),
        };
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (status, axum::Json(body)).into_response();
        let headers = resp.headers_mut();
        for (name, value) in self.headers {
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), v);
            }
        }
        insert_request_id(headers, protocol, request_id);
        resp
    }
}

/// The `error` object OpenAI-compatible servers send, in a body or an SSE `data:` line.
pub(crate) fn openai_error(error_type: &str, message: &str) -> serde_json::Value {
    json!({ "error": { "message": message, "type": error_type, "param": null, "code": null } })
}

/// Real responses carry a request id header (`request-id` from Anthropic, `x-request-id`
/// from OpenAI); SDKs surface it, so clients may log it.
pub(crate) fn insert_request_id(
    headers: &mut axum::http::HeaderMap,
    protocol: Protocol,
    request_id: &str,
) {
    let name = match protocol {
        Protocol::Anthropic => "request-id",
        Protocol::OpenAi => "x-request-id",
    };
    if let Ok(v) = HeaderValue::from_str(request_id) {
        headers.insert(HeaderName::from_static(name), v);
    }
}

fn default_message(status: u16) -> &'static str {
    match status {
        400 => "Invalid request",
        401 => "invalid x-api-key",
        403 => "Permission denied",
        404 => "Not found",
        413 => "Request too large",
        429 => "Rate limited",
        500 => "Internal server error",
        529 => "Overloaded",
        _ => "Error",
    }
}
