//! What an OpenAI-compatible server publishes about the model it serves, read before the
//! first request so that `max_tokens` fits the real window.
//!
//! There is no standard: vLLM puts `max_model_len` on its `/v1/models` entries, OpenRouter
//! `context_length` (and its output ceiling under `top_provider`), LM Studio
//! `max_context_length`, llama-server the model's training context as `meta.n_ctx_train` —
//! and, at `/props` beside the API, the context it actually runs with
//! (`default_generation_settings.n_ctx`), which is the one that counts. Asking is a courtesy:
//! a few seconds at most, no retries, and a server that answers nothing useful is simply one
//! that says nothing.

use crate::client::ServerLimits;
use serde_json::Value;
use std::time::Duration;

/// How long each question may take; a server that is slow to say this is no help.
pub(crate) const LIMITS_TIMEOUT: Duration = Duration::from_secs(3);

/// The llama-server `/props` address for an API base URL (which may end in `/v1`).
pub(crate) fn props_url(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{base}/props")
}

/// What a `/v1/models` list says about `model`.
pub(crate) fn from_models(list: &Value, model: &str) -> ServerLimits {
    let entries: &[Value] = list
        .get("data")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let id = |entry: &Value| entry.get("id").and_then(Value::as_str).map(str::to_owned);
    let entry = entries
        .iter()
        .find(|e| id(e).as_deref() == Some(model))
        .or(match entries {
            [only] => Some(only),
            _ => None,
        });
    let Some(entry) = entry else {
        return ServerLimits::default();
    };
    let number = |pointer: &str| entry.pointer(pointer).and_then(Value::as_u64);
    ServerLimits {
        served_model: match entries {
            [only] => id(only).filter(|served| served != model),
            _ => None,
        },
        context_window: number("/max_model_len")
            .or_else(|| number("/context_length"))
            .or_else(|| number("/max_context_length"))
            .or_else(|| number("/meta/n_ctx_train"))
            .filter(|n| *n > 0),
        max_output_tokens: number("/top_provider/max_completion_tokens")
            .or_else(|| number("/max_output_tokens"))
            .filter(|n| *n > 0),
    }
}

/// llama-server's running context size from its `/props`.
pub(crate) fn from_props(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
}

/// The two answers together; `None` when neither said anything.
pub(crate) fn combine(models: ServerLimits, props_window: Option<u64>) -> Option<ServerLimits> {
    let limits = ServerLimits {
        context_window: props_window.or(models.context_window),
        ..models
    };
    (limits != ServerLimits::default()).then_some(limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_servers_way_of_giving_the_window_is_read() {
        let vllm = json!({"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]});
        assert_eq!(from_models(&vllm, "qwen").context_window, Some(32768));
        let openrouter = json!({"data": [
            {"id": "a/b", "context_length": 128000, "top_provider": {"max_completion_tokens": 16384}},
            {"id": "c/d", "context_length": 8192},
        ]});
        let limits = from_models(&openrouter, "a/b");
        assert_eq!(
            (
                limits.context_window,
                limits.max_output_tokens,
                limits.served_model
            ),
            (Some(128000), Some(16384), None)
        );
        assert_eq!(from_models(&openrouter, "x/y"), ServerLimits::default());
        let lmstudio = json!({"data": [{"id": "m", "max_context_length": 4096}]});
        assert_eq!(from_models(&lmstudio, "m").context_window, Some(4096));
        let llama = json!({"data": [{"id": "smol.gguf", "meta": {"n_ctx_train": 8192}}]});
        let limits = from_models(&llama, "gpt-4o");
        assert_eq!(limits.context_window, Some(8192));
        assert_eq!(limits.served_model.as_deref(), Some("smol.gguf"));
    }

    #[test]
    fn props_give_the_running_window_and_win() {
        let props = json!({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1});
        assert_eq!(from_props(&props), Some(2048));
        let trained = ServerLimits {
            context_window: Some(8192),
            ..ServerLimits::default()
        };
        assert_eq!(
            combine(trained, Some(2048)).and_then(|l| l.context_window),
            Some(2048)
        );
        assert_eq!(combine(ServerLimits::default(), None), None);
    }

    #[test]
    fn props_sit_beside_the_api_path() {
        assert_eq!(
            props_url("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080/props"
        );
        assert_eq!(
            props_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/props"
        );
    }
}
