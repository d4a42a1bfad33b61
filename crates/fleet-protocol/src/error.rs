//! The API's error body: `{"type":"error","error":{"type":"overloaded_error","message":"…"}}`.
//! The same `error` object arrives inside an SSE `error` event.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// Always `"error"`.
    #[serde(rename = "type")]
    pub kind: String,
    pub error: ApiErrorDetail,
}

impl ApiErrorBody {
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: "error".into(),
            error: ApiErrorDetail {
                error_type: error_type.into(),
                message: message.into(),
            },
        }
    }

    /// The error type the API uses for an HTTP status, for servers (the fake one) that only
    /// know the status.
    pub fn type_for_status(status: u16) -> &'static str {
        match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorDetail {
    #[serde(rename = "type")]
    pub error_type: String,
    pub message: String,
}
