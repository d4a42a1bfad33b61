//! The OpenAI side as local servers behave: a small context window overflowing the way vLLM,
//! llama-server and llama-cpp-python each do, usage left out, a model served under its own
//! name, empty streams, and the endpoints that describe the server.

use crate::common::*;
use fleet_testkit::{FakeModelServer, Overflow, Rule, Scenario};
use serde_json::{json, Value};

/// A streamed request asking for usage, with `max_tokens` and one user message.
fn body(max_tokens: u64) -> Value {
    json!({
        "model": "qwen-local",
        "max_tokens": max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Tell me about the weather in Paris today."}],
    })
}

/// The prompt's size as the server counts it: canonical JSON bytes / 4, rounded up.
fn prompt_tokens(body: &Value) -> u64 {
    (body["messages"].to_string().len() as u64).div_ceil(4)
}

/// Content, finish reason and usage (if any) of a streamed reply.
fn read_stream(raw: &[u8]) -> (String, Vec<String>, Option<String>, Option<Value>) {
    let (chunks, done) = openai_chunks(raw);
    assert!(done, "the stream ends with [DONE]");
    let mut content = String::new();
    let mut arguments = Vec::new();
    let mut finish = None;
    let mut usage = None;
    for chunk in &chunks {
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            usage = Some(chunk["usage"].clone());
        }
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        if let Some(t) = choice["delta"]["content"].as_str() {
            content.push_str(t);
        }
        for call in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = call["index"].as_u64().unwrap_or(0) as usize;
            if index == arguments.len() {
                arguments.push(String::new());
            }
            arguments[index].push_str(call["function"]["arguments"].as_str().unwrap_or(""));
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            finish = Some(f.to_owned());
        }
    }
    (content, arguments, finish, usage)
}

fn error_message(raw: &[u8]) -> String {
    let v: Value = serde_json::from_slice(raw).expect("JSON error body");
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn vllm_refuses_prompt_plus_max_tokens_over_the_window() {
    let b = body(1000);
    let prompt = prompt_tokens(&b);
    let window = prompt + 999;
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text("fits")]).openai_context_window(window, Overflow::Reject),
    )
    .await
    .expect("start");
    let (status, _, raw) = send(openai_request(&server, &b)).await;
    assert_eq!(status, 400);
    assert_eq!(
        error_message(&raw),
        format!(
            "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
            prompt + 1000
        )
    );
    assert_eq!(server.rule_uses(0), 0, "refused before any rule");
    let (status, _, raw) = send(openai_request(&server, &body(999))).await;
    assert_eq!(status, 200);
    assert_eq!(read_stream(&raw).0, "fits");
}

#[tokio::test]
async fn llama_server_cuts_the_reply_where_the_window_fills() {
    let b = body(1000);
    let prompt = prompt_tokens(&b);
    let text = "The weather in Paris is mild and sunny with a light breeze.";
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text(text)])
            .openai_context_window(prompt + 3, Overflow::Truncate),
    )
    .await
    .expect("start");
    let (status, _, raw) = send(openai_request(&server, &b)).await;
    assert_eq!(status, 200);
    let (content, _, finish, usage) = read_stream(&raw);
    assert_eq!(content, &text[..12], "three tokens of four bytes");
    assert_eq!(finish.as_deref(), Some("length"));
    assert_eq!(usage.expect("usage")["completion_tokens"], 3);

    // A tool call cut mid-arguments leaves JSON that does not parse.
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::tool_use(
            "Write",
            json!({"file_path": "/tmp/a.txt", "content": "a long body of text"}),
        )])
        .openai_context_window(prompt + 6, Overflow::Truncate),
    )
    .await
    .expect("start");
    let (_, _, raw) = send(openai_request(&server, &b)).await;
    let (_, arguments, finish, usage) = read_stream(&raw);
    assert_eq!(arguments.len(), 1);
    assert_eq!(
        arguments[0], r#"{"file_path":"/tmp/"#,
        "24 bytes less the name"
    );
    assert!(serde_json::from_str::<Value>(&arguments[0]).is_err());
    assert_eq!(finish.as_deref(), Some("length"));
    assert_eq!(usage.expect("usage")["completion_tokens"], 6);

    // The request's own limit stops the reply first when it is the smaller.
    let (_, _, raw) = send(openai_request(&server, &body(2))).await;
    let (_, _, finish, usage) = read_stream(&raw);
    assert_eq!(finish.as_deref(), Some("length"));
    assert_eq!(usage.expect("usage")["completion_tokens"], 2);
}

#[tokio::test]
async fn llama_server_refuses_a_prompt_over_the_window() {
    let b = body(10);
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text("never")])
            .openai_context_window(prompt_tokens(&b) - 1, Overflow::Truncate),
    )
    .await
    .expect("start");
    let (status, _, raw) = send(openai_request(&server, &b)).await;
    assert_eq!(status, 400);
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(
        v["error"]["message"],
        "the request exceeds the available context size, try increasing it"
    );
    assert_eq!(v["error"]["type"], "exceed_context_size_error");
}

#[tokio::test]
async fn llama_cpp_python_answers_an_overflow_with_an_empty_stream() {
    let b = body(10);
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text("never")])
            .openai_context_window(prompt_tokens(&b) - 1, Overflow::Empty),
    )
    .await
    .expect("start");
    let (status, headers, raw) = send(openai_request(&server, &b)).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"]
        .to_str()
        .expect("ascii")
        .starts_with("text/event-stream"));
    assert!(
        raw.is_empty(),
        "no event at all: {:?}",
        String::from_utf8_lossy(&raw)
    );
    let log = server.requests();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].status, log[0].rule_index), (200, None));
    assert_eq!(server.rule_uses(0), 0);
}

#[tokio::test]
async fn an_empty_stream_fault_sends_nothing_on_either_protocol() {
    let server = FakeModelServer::start(Scenario::queue([
        Rule::text("x").empty_stream(),
        Rule::text("x").empty_stream(),
        Rule::text("after"),
    ]))
    .await
    .expect("start");
    let (status, _, raw) = send(openai_request(&server, &body(10))).await;
    assert_eq!((status, raw.len()), (200, 0));
    let (status, headers, raw) = send(anthropic_request(&server, &user_body("hi", false))).await;
    assert_eq!((status, raw.len()), (200, 0));
    assert!(headers["content-type"]
        .to_str()
        .expect("ascii")
        .starts_with("text/event-stream"));
    let (_, _, raw) = send(openai_request(&server, &body(10))).await;
    assert_eq!(read_stream(&raw).0, "after");
}

#[tokio::test]
async fn usage_can_be_left_out_even_when_asked_for() {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("hi")]).omit_usage())
        .await
        .expect("start");
    let (_, _, raw) = send(openai_request(&server, &body(10))).await;
    let (chunks, _) = openai_chunks(&raw);
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "{chunks:?}"
    );
    let mut whole = body(10);
    whole["stream"] = json!(false);
    let (_, _, raw) = send(openai_request(&server, &whole)).await;
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["choices"][0]["message"]["content"], "hi");
    assert!(v.get("usage").is_none(), "{v}");
}

#[tokio::test]
async fn a_served_model_names_every_chunk() {
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text("hello there")]).served_model("smollm2-135m.gguf"),
    )
    .await
    .expect("start");
    let (_, _, raw) = send(openai_request(&server, &body(10))).await;
    let (chunks, _) = openai_chunks(&raw);
    assert!(chunks.len() > 2);
    assert!(
        chunks.iter().all(|c| c["model"] == "smollm2-135m.gguf"),
        "{chunks:?}"
    );
}

#[tokio::test]
async fn a_max_tokens_stop_is_length_with_the_whole_limit_used() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("cut").stop_reason(fleet_protocol::StopReason::MaxTokens)
    ]))
    .await
    .expect("start");
    let (_, _, raw) = send(openai_request(&server, &body(77))).await;
    let (_, _, finish, usage) = read_stream(&raw);
    assert_eq!(finish.as_deref(), Some("length"));
    assert_eq!(usage.expect("usage")["completion_tokens"], 77);
}

async fn get(server: &FakeModelServer, path: &str) -> (u16, Value) {
    let (status, _, raw) = send(client().get(format!("{}{path}", server.base_url()))).await;
    (status, serde_json::from_slice(&raw).expect("JSON body"))
}

#[tokio::test]
async fn models_and_props_describe_the_server_without_being_logged() {
    let server = FakeModelServer::start(
        Scenario::demo()
            .served_model("smollm2")
            .openai_context_window(2048, Overflow::Truncate),
    )
    .await
    .expect("start");
    let (status, models) = get(&server, "/v1/models").await;
    assert_eq!(status, 200);
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], "smollm2");
    assert_eq!(
        models["data"][0]["meta"]["n_ctx_train"], 8192,
        "llama-server's listing"
    );
    assert!(models["data"][0].get("max_model_len").is_none());
    let (status, props) = get(&server, "/props").await;
    assert_eq!(status, 200);
    assert_eq!(props["default_generation_settings"]["n_ctx"], 2048);

    let vllm =
        FakeModelServer::start(Scenario::demo().openai_context_window(4096, Overflow::Reject))
            .await
            .expect("start");
    let (_, models) = get(&vllm, "/v1/models").await;
    assert_eq!(models["data"][0]["id"], "claude-fake-1");
    assert_eq!(models["data"][0]["max_model_len"], 4096);

    let named_only = FakeModelServer::start(Scenario::demo().served_model("m"))
        .await
        .expect("start");
    let (_, models) = get(&named_only, "/v1/models").await;
    assert_eq!(models["data"][0]["id"], "m");
    assert!(models["data"][0].get("max_model_len").is_none());
    assert_eq!(get(&named_only, "/props").await.0, 404);

    let bare = FakeModelServer::start(Scenario::demo())
        .await
        .expect("start");
    assert_eq!(get(&bare, "/v1/models").await.0, 404);
    assert_eq!(get(&bare, "/props").await.0, 404);
    for s in [&server, &vllm, &named_only, &bare] {
        assert_eq!(s.request_count(), 0, "the log counts model requests only");
    }
}
