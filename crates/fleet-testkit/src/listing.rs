//! What an OpenAI-compatible server says about itself: `GET /v1/models` (OpenAI's list, with
//! vLLM's `max_model_len`) and llama-server's `GET /props`. Clients read these to learn the
//! served model's name and context window before they choose `max_tokens`.

use crate::http_error::ApiError;
use crate::scenario::{Overflow, Scenario};
use crate::view::Protocol;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// How much larger than its running window a llama-server's model's training context is.
const TRAINED_TIMES: u64 = 4;

/// The model the server stands for: the one it names in its replies.
fn listed_model(scenario: &Scenario) -> &str {
    scenario
        .openai
        .served_model
        .as_deref()
        .unwrap_or(&scenario.model)
}

/// Whether the scenario describes a server at all; a bare scenario answers whatever model is
/// asked for, so it has nothing true to list.
fn describes_a_server(scenario: &Scenario) -> bool {
    scenario.openai.served_model.is_some() || scenario.openai.context_window.is_some()
}

fn not_found(what: &str) -> Response {
    ApiError::new(
        404,
        format!("fake model: {what} is served only when the scenario sets `openai.served_model` or `openai.context_window`"),
    )
    .into_response(Protocol::OpenAi, "req_fake_listing")
}

/// `GET /v1/models`.
pub(crate) fn models(scenario: &Scenario) -> Response {
    if !describes_a_server(scenario) {
        return not_found("GET /v1/models");
    }
    let mut entry = json!({
        "id": listed_model(scenario),
        "object": "model",
        "created": 0,
        "owned_by": "fleet-fake",
    });
    match (scenario.openai.context_window, scenario.openai.overflow) {
        // llama-server lists the context the model was trained with; the one it runs with
        // (smaller, and the one that counts) is only in `/props`.
        (Some(window), Overflow::Truncate) => {
            entry["meta"] = json!({ "n_ctx_train": window.saturating_mul(TRAINED_TIMES) });
        }
        (Some(window), _) => entry["max_model_len"] = json!(window),
        (None, _) => {}
    }
    axum::Json(json!({ "object": "list", "data": [entry] })).into_response()
}

/// `GET /props`, llama-server's own endpoint: its runtime context size and slots.
pub(crate) fn props(scenario: &Scenario) -> Response {
    let Some(window) = scenario.openai.context_window else {
        return not_found("GET /props");
    };
    let mut body: Value = json!({
        "default_generation_settings": { "n_ctx": window, "n_predict": -1 },
        "total_slots": 1,
        "model_path": listed_model(scenario),
        "build_info": "fleet-fake",
    });
    if let Some(supported) = scenario.openai.supports_tools {
        body["chat_template_caps"] = json!({
            "supports_tools": supported,
            "supports_tool_calls": supported,
            "supports_system_role": true,
        });
    }
    axum::Json(body).into_response()
}

/// llama-server's answer to everything while it loads the model.
pub(crate) fn loading() -> Response {
    let mut error = ApiError::new(503, "Loading model");
    error.error_type = "unavailable_error".into();
    error.into_response(Protocol::OpenAi, "req_fake_loading")
}

/// `POST /apply-template`: the prompt a chat request renders to (`prompt`, see
/// `server::check::rendered_prompt`), served beside `/props`.
pub(crate) fn apply_template(scenario: &Scenario, prompt: String) -> Response {
    if scenario.openai.context_window.is_none() || scenario.openai.no_tokenizer {
        return not_found("POST /apply-template");
    }
    axum::Json(json!({ "prompt": prompt })).into_response()
}

/// `POST /tokenize`: `content` as tokens, counted as every request is (4 bytes a token).
pub(crate) fn tokenize(scenario: &Scenario, body: &Value) -> Response {
    if scenario.openai.context_window.is_none() || scenario.openai.no_tokenizer {
        return not_found("POST /tokenize");
    }
    let content = body.get("content").and_then(Value::as_str).unwrap_or("");
    let count = crate::cache::tokens_for_bytes(content.len());
    let tokens: Vec<u64> = (0..count).collect();
    axum::Json(json!({ "tokens": tokens })).into_response()
}
