//! The lines of the SDK control protocol, as Claude Code and the Agent SDKs exchange them on
//! stdin/stdout beside the messages: `control_request` (either way), `control_response` (the
//! answer, with the same `request_id`) and `control_cancel_request` (the asker gave up).

use crate::input::{self, InputError};
use fleet_protocol::control::{ControlLine, ControlResponse, LineError, RequestBody};
use fleet_protocol::Message;
use serde_json::Value;

/// One line read from stdin.
#[derive(Debug)]
pub enum Incoming {
    /// A user message for the session.
    User(Message),
    /// The host asks fleet something.
    Request { id: String, request: RequestBody },
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
    pub problem: LineError,
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
        Err(_) => return user(text, line),
    };
    let read = ControlLine::from_value(&value).map_err(|problem| BadControl {
        line,
        request_id: problem.request_id().map(str::to_string),
        problem,
    })?;
    Ok(match read {
        ControlLine::ControlRequest {
            request_id,
            request,
        } => Incoming::Request {
            id: request_id,
            request,
        },
        ControlLine::ControlResponse { response } => match response {
            ControlResponse::Success {
                request_id,
                response,
            } => Incoming::Response {
                id: request_id,
                outcome: Ok(response),
            },
            ControlResponse::Error { request_id, error } => Incoming::Response {
                id: request_id,
                outcome: Err(error.unwrap_or_else(|| {
                    "the host answered with an error and no message".to_string()
                })),
            },
        },
        ControlLine::ControlCancelRequest { request_id } => Incoming::Cancel { id: request_id },
        ControlLine::KeepAlive => Incoming::Nothing,
        ControlLine::NotControl => return user(text, line),
    })
}

fn user(text: &str, line: usize) -> Result<Incoming, WireError> {
    input::parse_line(text, line)
        .map(Incoming::User)
        .map_err(Into::into)
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
            Ok(Incoming::Request { id, request }) => {
                assert_eq!(id, "r1");
                assert_eq!(
                    request,
                    RequestBody::Known(fleet_protocol::control::ControlRequest::Interrupt)
                );
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
