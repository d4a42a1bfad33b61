//! The request log: every request the server received, for assertions. Secrets are redacted
//! on the way in, so a log printed by a failing test never leaks a real key.

use crate::view::Protocol;
use axum::http::HeaderMap;
use fleet_protocol::MessagesRequest;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// Header values replaced by [`REDACTED`] in the log.
const SECRET_HEADERS: [&str; 4] = [
    "x-api-key",
    "authorization",
    "proxy-authorization",
    "cookie",
];

pub const REDACTED: &str = "<redacted>";

/// One received request, as the server saw it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    /// 1-based arrival order across both protocols (what `when.call` matches).
    pub seq: u64,
    /// Time since the server started.
    #[serde(serialize_with = "as_millis")]
    pub elapsed: Duration,
    pub method: String,
    pub path: String,
    /// `None` for paths that are neither protocol's endpoint.
    pub protocol: Option<Protocol>,
    /// Lower-case names in arrival order; secret values are [`REDACTED`].
    pub headers: Vec<(String, String)>,
    /// The JSON body; a body that is not JSON is kept as a string.
    pub body: Value,
    /// The rule that answered: its name, or `rules[i]`. `None` when no rule did (the request
    /// was rejected or matched nothing).
    pub rule: Option<String>,
    /// The rule's position in the scenario.
    pub rule_index: Option<usize>,
    /// The HTTP status sent (200 for streams, even when a fault cuts them short).
    pub status: u16,
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

impl RecordedRequest {
    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body read as a Messages API request, when it is one.
    pub fn messages_request(&self) -> Option<MessagesRequest> {
        serde_json::from_value(self.body.clone()).ok()
    }

    /// Whether the body asked for a stream.
    pub fn is_stream(&self) -> bool {
        self.body
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// Header pairs for the log, secrets redacted.
pub(crate) fn redacted_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}
