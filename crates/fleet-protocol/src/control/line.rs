//! The control lines themselves, told apart by `type`, and why a line claiming to be one
//! could not be read.

use super::request::RequestBody;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One line of the control protocol. Any other `type` (a user message, say) reads as
/// [`ControlLine::NotControl`], for the caller to read another way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ControlLine {
    /// A question, either way.
    ControlRequest {
        request_id: String,
        request: RequestBody,
    },
    /// The answer to the request with the same `request_id`.
    ControlResponse { response: ControlResponse },
    /// The asker no longer wants the answer to its request `request_id`.
    ControlCancelRequest { request_id: String },
    /// Carries nothing; the host says it is still there.
    KeepAlive,
    /// Not a control line (never written).
    #[serde(other, skip_serializing)]
    NotControl,
}

/// An answer: the response body, or an error message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlResponse {
    Success {
        request_id: String,
        /// The answer's body (its shape depends on the request; see `answer.rs`).
        #[serde(default = "empty_object")]
        response: Value,
    },
    Error {
        request_id: String,
        /// `None` when the other side gave no (string) message.
        #[serde(
            default,
            deserialize_with = "text_or_none",
            skip_serializing_if = "Option::is_none"
        )]
        error: Option<String>,
    },
}

impl ControlResponse {
    pub fn request_id(&self) -> &str {
        match self {
            Self::Success { request_id, .. } | Self::Error { request_id, .. } => request_id,
        }
    }
}

impl ControlLine {
    /// A request with this id and body.
    pub fn request(request_id: impl Into<String>, request: impl Into<RequestBody>) -> Self {
        Self::ControlRequest {
            request_id: request_id.into(),
            request: request.into(),
        }
    }

    /// A success answer to request `request_id`.
    pub fn success(request_id: impl Into<String>, response: Value) -> Self {
        Self::ControlResponse {
            response: ControlResponse::Success {
                request_id: request_id.into(),
                response,
            },
        }
    }

    /// An error answer to request `request_id`.
    pub fn error(request_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self::ControlResponse {
            response: ControlResponse::Error {
                request_id: request_id.into(),
                error: Some(message.into()),
            },
        }
    }

    /// Withdraws request `request_id`.
    pub fn cancel(request_id: impl Into<String>) -> Self {
        Self::ControlCancelRequest {
            request_id: request_id.into(),
        }
    }

    /// The line as one line of JSON (no newline).
    pub fn to_json(&self) -> String {
        // Only maps with string keys and derived types: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a parsed line. A line whose `type` is a control kind but whose shape is wrong is
    /// an error that keeps the `request_id` when one could be read, so the asker can be
    /// answered; a line without a string `type` is [`ControlLine::NotControl`].
    pub fn from_value(value: &Value) -> Result<Self, LineError> {
        match Self::deserialize(value) {
            Ok(line) => Ok(line),
            Err(_) if !value.get("type").is_some_and(Value::is_string) => Ok(Self::NotControl),
            Err(err) => Err(diagnose(value, err.to_string())),
        }
    }
}

/// Why a control line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("control_request without a string \"request_id\"")]
    RequestWithoutId,
    #[error("control_request needs \"request\": {{\"subtype\": …}}")]
    RequestWithoutSubtype { request_id: String },
    #[error("control_request {subtype:?}: {problem}")]
    BadRequest {
        request_id: String,
        subtype: String,
        problem: String,
    },
    #[error("control_response without \"response\": {{\"request_id\": …}}")]
    ResponseWithoutId,
    #[error("control_response for {request_id:?} must have \"subtype\" \"success\" or \"error\"")]
    ResponseSubtype { request_id: String },
    #[error("control_cancel_request without \"request_id\"")]
    CancelWithoutId,
    #[error("{kind}: {problem}")]
    Other { kind: String, problem: String },
}

impl LineError {
    /// The id of the request the bad line asked, when it could be read: that request gets an
    /// error answer. A bad answer or cancel names no request of the reader's to answer.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::RequestWithoutSubtype { request_id } | Self::BadRequest { request_id, .. } => {
                Some(request_id)
            }
            _ => None,
        }
    }
}

/// Which part of a control line is wrong, worded for the person who wrote it.
fn diagnose(value: &Value, problem: String) -> LineError {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = text(value, "type").unwrap_or_default();
    match kind.as_str() {
        "control_request" => {
            let Some(request_id) = text(value, "request_id") else {
                return LineError::RequestWithoutId;
            };
            let request = value.get("request").unwrap_or(&Value::Null);
            match text(request, "subtype") {
                Some(subtype) if request.is_object() => {
                    let problem = RequestBody::deserialize(request)
                        .err()
                        .map_or(problem, |err| err.to_string());
                    LineError::BadRequest {
                        request_id,
                        subtype,
                        problem,
                    }
                }
                _ => LineError::RequestWithoutSubtype { request_id },
            }
        }
        "control_response" => {
            let response = value.get("response").unwrap_or(&Value::Null);
            match text(response, "request_id") {
                None => LineError::ResponseWithoutId,
                Some(request_id) => LineError::ResponseSubtype { request_id },
            }
        }
        "control_cancel_request" => LineError::CancelWithoutId,
        _ => LineError::Other { kind, problem },
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A string, or `None` for anything else (a missing or malformed error message must not make
/// the answer unreadable: the request waiting for it would wait forever).
fn text_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => Some(text),
        _ => None,
    })
}
