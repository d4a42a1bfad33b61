//! The lines of the SDK control protocol, as Claude Code and the Agent SDKs exchange them on
//! stdin/stdout beside the messages: `control_request` (either way), `control_response` (the
//! answer, with the same `request_id`) and `control_cancel_request` (the asker gave up).

use crate::input::{self, InputError};
use fleet_protocol::Message;
use serde_json::{json, Map, Value};

/// One line read from stdin.
#[derive(Debug)]
pub enum Incoming {
    /// A user message for the session.
    User(Message),
    /// The host asks fleet something.
    Request {
        id: String,
        body: Map<String, Value>,
    },
    /// The host answers a request of fleet's: the response body, or its error text.
    Response {
        id: String,
        outcome: Result<Value, String>,
    },
    /// The host no longer wants the answer to its request `id`.
    Cancel { id: String },
    /// A line that carries nothing for fleet (`keep_alive`).
    Nothing,
}

/// A control line that cannot be used. When its `request_id` could be read, the host gets an
/// error response for it; otherwise the line is reported on stderr.
#[derive(Debug, thiserror::Error)]
#[error("stdin line {line}: {problem}")]
pub struct BadControl {
    pub line: usize,
    pub request_id: Option<String>,
    pub problem: String,
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Control(#[from] BadControl),
}

/// Reads one non-blank stdin line.
pub fn parse(text: &str, line: usize) -> Result<Incoming, WireError> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        // The user-message parser words a JSON error best.
        Err(_) => {
            return input::parse_line(text, line)
                .map(Incoming::User)
                .map_err(Into::into)
        }
    };
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    let bad = |request_id: Option<String>, problem: String| BadControl {
        line,
        request_id,
        problem,
    };
    match kind {
        "control_request" => {
            let id = request_id(&value);
            let Some(id) = id else {
                return Err(bad(
                    None,
                    "control_request without a string \"request_id\"".into(),
                )
                .into());
            };
            match value.get("request") {
                Some(Value::Object(body)) if body.get("subtype").is_some_and(Value::is_string) => {
                    Ok(Incoming::Request {
                        id,
                        body: body.clone(),
                    })
                }
                _ => Err(bad(
                    Some(id),
                    "control_request needs \"request\": {\"subtype\": …}".into(),
                )
                .into()),
            }
        }
        "control_response" => {
            let response = value.get("response").unwrap_or(&Value::Null);
            let Some(id) = request_id(response) else {
                return Err(bad(
                    None,
                    "control_response without \"response\": {\"request_id\": …}".into(),
                )
                .into());
            };
            let outcome = match response.get("subtype").and_then(Value::as_str) {
                Some("success") => Ok(response.get("response").cloned().unwrap_or(json!({}))),
                Some("error") => Err(response
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("the host answered with an error and no message")
                    .to_string()),
                _ => {
                    return Err(bad(
                        None,
                        format!(
                            "control_response for {id:?} must have \"subtype\" \"success\" or \"error\""
                        ),
                    )
                    .into())
                }
            };
            Ok(Incoming::Response { id, outcome })
        }
        "control_cancel_request" => match request_id(&value) {
            Some(id) => Ok(Incoming::Cancel { id }),
            None => Err(bad(None, "control_cancel_request without \"request_id\"".into()).into()),
        },
        "keep_alive" => Ok(Incoming::Nothing),
        _ => input::parse_line(text, line)
            .map(Incoming::User)
            .map_err(Into::into),
    }
}

fn request_id(value: &Value) -> Option<String> {
    value
        .get("request_id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A request of fleet's to the host.
pub fn request(id: &str, body: Value) -> Value {
    json!({"type": "control_request", "request_id": id, "request": body})
}

/// A success answer to the host's request `id`.
pub fn success(id: &str, body: Value) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id, "response": body,
    }})
}

/// An error answer to the host's request `id`.
pub fn error(id: &str, message: &str) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "error", "request_id": id, "error": message,
    }})
}

/// fleet no longer wants the answer to its request `id`.
pub fn cancel(id: &str) -> Value {
    json!({"type": "control_cancel_request", "request_id": id})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn each_kind_of_line_is_told_apart() {
        let user = parse(
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            1,
        );
        assert!(matches!(user, Ok(Incoming::User(_))));
        let req = parse(
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#,
            2,
        );
        match req {
            Ok(Incoming::Request { id, body }) => {
                assert_eq!(id, "r1");
                assert_eq!(body["subtype"], "interrupt");
            }
            other => panic!("{other:?}"),
        }
        let ok = parse(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"x","response":{"behavior":"allow"}}}"#,
            3,
        );
        assert!(
            matches!(ok, Ok(Incoming::Response { ref id, outcome: Ok(ref v) }) if id == "x" && v["behavior"] == "allow")
        );
        let err = parse(
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"y","error":"nope"}}"#,
            4,
        );
        assert!(matches!(err, Ok(Incoming::Response { outcome: Err(ref m), .. }) if m == "nope"));
        assert!(matches!(
            parse(r#"{"type":"control_cancel_request","request_id":"z"}"#, 5),
            Ok(Incoming::Cancel { .. })
        ));
        assert!(matches!(
            parse(r#"{"type":"keep_alive"}"#, 6),
            Ok(Incoming::Nothing)
        ));
    }

    #[test]
    fn a_bad_control_line_keeps_its_request_id_when_it_has_one() {
        let err = parse(
            r#"{"type":"control_request","request_id":"r9","request":{}}"#,
            7,
        )
        .unwrap_err();
        match err {
            WireError::Control(bad) => {
                assert_eq!(bad.request_id.as_deref(), Some("r9"));
                assert_eq!(bad.line, 7);
            }
            other => panic!("{other:?}"),
        }
        let err = parse(r#"{"type":"control_request","request":{"subtype":"x"}}"#, 8).unwrap_err();
        assert!(err.to_string().contains("stdin line 8"), "{err}");
        let err = parse(r#"{"type":"assistant"}"#, 9).unwrap_err();
        assert!(matches!(err, WireError::Input(_)));
    }
}
