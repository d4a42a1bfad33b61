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
            .or_else(|| number("/meta/n_ctx"))
            .or_else(|| number("/meta/n_ctx_train"))
            .filter(|n| *n > 0),
        max_output_tokens: number("/top_provider/max_completion_tokens")
            .or_else(|| number("/max_output_tokens"))
            .filter(|n| *n > 0),
        ..ServerLimits::default()
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

/// Whether llama-server's chat template renders tools (`chat_template_caps.supports_tools`).
pub(crate) fn supports_tools(props: &Value) -> Option<bool> {
    props
        .pointer("/chat_template_caps/supports_tools")
        .and_then(Value::as_bool)
}

/// What one of these questions got back.
#[derive(Debug)]
pub(crate) enum Reply {
    Json(Value),
    /// No such endpoint, or an answer that is not JSON: this server does not say.
    Absent,
    /// 503 (llama-server while it loads the model), a timeout or no connection: it may
    /// answer later.
    NotYet,
}

impl Reply {
    pub fn json(&self) -> Option<&Value> {
        match self {
            Self::Json(value) => Some(value),
            _ => None,
        }
    }
}

/// The two answers together, from a server that is `local` or not; `None` when neither said
/// anything, the server is remote and there is no reason to ask again.
pub(crate) fn combine(
    models: ServerLimits,
    props: Option<&Value>,
    local: bool,
    ask_again: bool,
) -> Option<ServerLimits> {
    let limits = ServerLimits {
        context_window: props.and_then(from_props).or(models.context_window),
        supports_tools: props.and_then(supports_tools),
        ask_again,
        ..models
    };
    let said = limits != ServerLimits::default();
    (said || local).then_some(ServerLimits { local, ..limits })
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
            combine(trained, Some(&props), false, false).and_then(|l| l.context_window),
            Some(2048)
        );
        assert_eq!(combine(ServerLimits::default(), None, false, false), None);
        let local = combine(ServerLimits::default(), None, true, false);
        assert_eq!(
            local.map(|l| (l.local, l.context_window)),
            Some((true, None))
        );
    }

    #[test]
    fn props_say_whether_the_template_takes_tools() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096},
            "chat_template_caps": {"supports_tools": false, "supports_tool_calls": false}});
        let limits = combine(ServerLimits::default(), Some(&props), true, false);
        assert_eq!(limits.and_then(|l| l.supports_tools), Some(false));
        assert_eq!(supports_tools(&json!({"n_ctx": 1})), None);
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
