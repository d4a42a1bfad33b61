//! The checks a request meets before any rule is consulted, as the real servers make them:
//! size, credentials, required headers, body shape, the conversation's validity and, on the
//! OpenAI side, the context window.

use super::MAX_BODY_BYTES;
use crate::cache::{self, InputUsage};
use crate::http_error::ApiError;
use crate::scenario::Scenario;
use crate::validate;
use crate::view::{Protocol, RequestView};
use crate::window::{self, Fit};
use axum::http::HeaderMap;
use bytes::Bytes;
use fleet_protocol::MessagesRequest;
use serde::Deserialize;
use serde_json::Value;
use std::sync::OnceLock;

/// A request body, parsed into a JSON value only when something needs the whole value (the
/// OpenAI checks, a full request log, an error message). An Anthropic request is read straight
/// from its bytes: building the value first tripled the server's work per request, which at
/// thousands of requests competed with the client it was measuring for the same cores.
pub(super) struct Body<'a> {
    raw: &'a Bytes,
    value: OnceLock<Value>,
}

impl<'a> Body<'a> {
    pub fn new(raw: &'a Bytes) -> Self {
        Self {
            raw,
            value: OnceLock::new(),
        }
    }

    /// The body as JSON, or as one string when it is not JSON.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            serde_json::from_slice(self.raw)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(self.raw).into_owned()))
        })
    }

    pub fn into_value(self) -> Value {
        self.value();
        self.value.into_inner().unwrap_or(Value::Null)
    }

    /// Whether the body is a JSON object, without building it when it can be read directly.
    fn starts_as_object(&self) -> bool {
        self.raw
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'{')
    }

    /// The body as a Messages API request. A body that reads as one is taken from its bytes;
    /// anything else goes through the value, whose errors are the ones the checks report.
    fn messages_request(&self) -> Result<MessagesRequest, ApiError> {
        if self.starts_as_object() {
            if let Ok(req) = serde_json::from_slice::<MessagesRequest>(self.raw) {
                return Ok(req);
            }
        }
        let value = self.value();
        if !value.is_object() {
            return Err(not_an_object());
        }
        MessagesRequest::deserialize(value).map_err(|e| {
            ApiError::invalid_request(format!(
                "fake model: the body is not a valid Messages API request: {e}"
            ))
        })
    }
}

fn not_an_object() -> ApiError {
    ApiError::invalid_request("fake model: the request body is not a JSON object")
}

/// A request that passed the protocol checks, reduced to what answering it needs.
pub(super) enum Checked {
    Anthropic(Box<MessagesRequest>, RequestView),
    OpenAi {
        view: RequestView,
        input: InputUsage,
        include_usage: bool,
        max_tokens: Option<u64>,
        fit: Fit,
    },
}

impl Checked {
    pub fn view(&self) -> &RequestView {
        match self {
            Self::Anthropic(_, view) | Self::OpenAi { view, .. } => view,
        }
    }

    /// Whether the server answers before any rule is consulted (a prompt too long for a
    /// server that then sends nothing).
    pub fn sends_nothing(&self) -> bool {
        matches!(
            self,
            Self::OpenAi {
                fit: Fit::EmptyStream,
                ..
            }
        )
    }
}

/// The checks the real API makes before looking at the conversation: size, credentials,
/// required headers, body shape, and (unless turned off) the conversation's validity.
pub(super) fn check(
    scenario: &Scenario,
    protocol: Protocol,
    headers: &HeaderMap,
    body: &Body,
) -> Result<Checked, ApiError> {
    if body.raw.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            format!("Request exceeds the maximum allowed number of bytes ({MAX_BODY_BYTES})"),
        ));
    }
    let has_key = headers.contains_key("x-api-key") || headers.contains_key("authorization");
    if scenario.require_auth && !has_key {
        return Err(match protocol {
            Protocol::Anthropic => ApiError::new(401, "x-api-key header is required"),
            Protocol::OpenAi => {
                let mut e = ApiError::new(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
                e.error_type = "invalid_request_error".into();
                e
            }
        });
    }
    if protocol == Protocol::Anthropic && !headers.contains_key("anthropic-version") {
        return Err(ApiError::invalid_request(
            "anthropic-version: header is required",
        ));
    }
    match protocol {
        Protocol::Anthropic => {
            let req = body.messages_request()?;
            if scenario.validate_requests {
                validate::anthropic(&req).map_err(|e| ApiError::invalid_request(e.to_string()))?;
            }
            if let Some(window) = scenario.context_window {
                let tokens = cache::total_tokens(&req);
                if tokens > window {
                    return Err(ApiError::invalid_request(format!(
                        "prompt is too long: {tokens} tokens > {window} maximum"
                    )));
                }
            }
            let view = RequestView::from_anthropic(&req);
            Ok(Checked::Anthropic(Box::new(req), view))
        }
        Protocol::OpenAi => {
            let body = body.value();
            if !body.is_object() {
                return Err(not_an_object());
            }
            validate::openai(body, scenario.validate_requests)
                .map_err(|e| ApiError::invalid_request(e.to_string()))?;
            if scenario.openai.reject_consecutive_user {
                validate::roles_alternate(body)
                    .map_err(|e| ApiError::invalid_request(e.to_string()))?;
            }
            let input = openai_input(body, scenario.openai.supports_tools != Some(false));
            if let Some(window) = scenario.context_window.filter(|w| input.input_tokens > *w) {
                return Err(ApiError::invalid_request(format!(
                    "This model's maximum context length is {window} tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
                    input.input_tokens
                )));
            }
            let max_tokens = window::max_tokens(body);
            let fit = window::fit(&scenario.openai, input.input_tokens, max_tokens)?;
            Ok(Checked::OpenAi {
                view: RequestView::from_openai(body),
                input,
                include_usage: openai_include_usage(body),
                max_tokens,
                fit,
            })
        }
    }
}

/// OpenAI input tokens: the canonical bytes of tools and messages / 4 (no cache simulation);
/// without `tools` when the chat template cannot render them (llama-server drops them).
fn openai_input(body: &Value, with_tools: bool) -> InputUsage {
    InputUsage {
        input_tokens: cache::tokens_for_bytes(rendered_prompt(body, with_tools).len()).max(1),
        ..InputUsage::default()
    }
}

/// The prompt the fake "renders" for a chat request: the canonical JSON of its tools (when
/// the template takes them) and messages, one after the other. `POST /apply-template` returns
/// it, so that `POST /tokenize` of it counts what a chat request is charged.
pub(crate) fn rendered_prompt(body: &Value, with_tools: bool) -> String {
    let keys: &[&str] = if with_tools {
        &["tools", "messages"]
    } else {
        &["messages"]
    };
    keys.iter()
        .filter_map(|k| body.get(*k))
        .map(Value::to_string)
        .collect()
}

fn openai_include_usage(body: &Value) -> bool {
    body.pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}
