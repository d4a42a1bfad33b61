//! The prompt's size as the server counts it, before the first request.
//!
//! Before a server has answered, fleet only has an estimate of the prompt (a quarter of its
//! JSON bytes), and on a small local model that estimate can be far off: llama-server leaves
//! the tool definitions out of the prompt when the model's chat template cannot render them,
//! so 23 KB of tool schemas (≈ 5,800 estimated tokens) cost nothing, and a 4k window that
//! looked full is mostly free. llama-server renders a chat request exactly as it would for a
//! completion at `POST /apply-template`, and counts tokens at `POST /tokenize`: together they
//! give the real figure. Only a server on this machine or a private network is asked (a
//! hosted API has no such endpoints, and the prompt is not sent anywhere twice); one without
//! them (vLLM's `/tokenize` takes another shape) is asked once, and after a 404 the estimate
//! stands for the rest of the run. When that server said its template cannot render tools
//! (`/props`), the estimate leaves them out as the server does.

use super::{limits, request, OpenAiClient};
use fleet_protocol::MessagesRequest;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;

/// The server's count of `request`'s prompt, or `None` (see the module docs).
pub(super) async fn count(client: &OpenAiClient, request: &MessagesRequest) -> Option<u64> {
    if !crate::transport::Host::of(&client.config.base_url).local {
        return None;
    }
    let counted = if client.no_tokenizer.load(Ordering::Relaxed) {
        None
    } else {
        measure(client, request).await
    };
    counted.or_else(|| {
        client
            .drops_tools
            .load(Ordering::Relaxed)
            .then(|| without_tools(client, request))
    })
}

/// An estimate of the prompt the server makes of `request` when it drops the tools: a
/// quarter of the bytes of everything else, as fleet estimates any prompt.
fn without_tools(client: &OpenAiClient, request: &MessagesRequest) -> u64 {
    let mut body = request::chat_request(request, false, client.config.tool_choice);
    body.tools.clear();
    body.tool_choice = None;
    let bytes = serde_json::to_vec(&body).map_or(0, |b| b.len());
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Renders and counts `request` with llama-server's endpoints.
async fn measure(client: &OpenAiClient, request: &MessagesRequest) -> Option<u64> {
    let base = limits::props_url(&client.config.base_url);
    let base = base.strip_suffix("/props").unwrap_or(&base);
    let body = request::chat_request(request, false, client.config.tool_choice);
    let rendered = post(client, &format!("{base}/apply-template"), &body).await?;
    let prompt = rendered.get("prompt").and_then(Value::as_str)?;
    let content = json!({ "content": prompt, "add_special": true, "parse_special": true });
    let tokens = post(client, &format!("{base}/tokenize"), &content).await?;
    let count = tokens.get("tokens").and_then(Value::as_array)?.len();
    tracing::debug!(count, "the server's count of the prompt");
    u64::try_from(count).ok()
}

/// POSTs `body` as JSON to `url`; `None` on any failure, remembering a server that has no
/// such endpoint.
async fn post<T: serde::Serialize + ?Sized>(
    client: &OpenAiClient,
    url: &str,
    body: &T,
) -> Option<Value> {
    let mut builder = client
        .http
        .post(url)
        .timeout(limits::LIMITS_TIMEOUT)
        .json(body);
    if let Some(key) = &client.config.api_key {
        builder = builder.bearer_auth(key);
    }
    match client.json_reply(url, builder).await {
        limits::Reply::Json(value) => Some(value),
        limits::Reply::Absent => {
            client.no_tokenizer.store(true, Ordering::Relaxed);
            None
        }
        limits::Reply::NotYet => None,
    }
}
