use crate::common::*;
use fleet_testkit::{FakeModelServer, OpenAiOptions, Rule, Scenario};
use serde_json::{json, Value};

fn body(stream: bool, include_usage: bool) -> Value {
    json!({
        "model": "gpt-test",
        "stream": stream,
        "stream_options": {"include_usage": include_usage},
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "weather?"}],
    })
}

fn rule() -> Rule {
    Rule::new()
        .then_text("Checking — ☀️.")
        .then_tool_use_with_id(
            "call_1",
            "get_weather",
            json!({"city": "Paris", "unit": "celsius"}),
        )
        .then_tool_use("get_time", json!({"tz": "Europe/Paris"}))
}

/// A streamed tool call put back together: id (if sent), name, arguments.
type Call = (Option<String>, String, String);

/// Rebuilds content, tool calls and finish reason from the chunks, as the SDKs do.
fn reassemble(chunks: &[Value]) -> (String, Vec<Call>, Option<String>) {
    let mut content = String::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut finish = None;
    for chunk in chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(t) = delta["content"].as_str() {
            content.push_str(t);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().expect("index") as usize;
            if index == calls.len() {
                calls.push((None, String::new(), String::new()));
            }
            let entry = &mut calls[index];
            if let Some(id) = call["id"].as_str() {
                entry.0 = Some(id.to_owned());
            }
            if let Some(n) = call["function"]["name"].as_str() {
                entry.1.push_str(n);
            }
            if let Some(a) = call["function"]["arguments"].as_str() {
                entry.2.push_str(a);
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            finish = Some(f.to_owned());
        }
    }
    (content, calls, finish)
}

#[tokio::test]
async fn streams_text_and_fragmented_tool_calls() {
    let server = FakeModelServer::start(Scenario::with_rules([rule()]))
        .await
        .expect("start");
    let (status, headers, raw) = send(openai_request(&server, &body(true, true))).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"]
        .to_str()
        .expect("ascii")
        .starts_with("text/event-stream"));
    let (chunks, done) = openai_chunks(&raw);
    assert!(done, "stream ends with [DONE]");
    let fragments = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .is_some_and(|a| !a.is_empty())
        })
        .count();
    assert!(fragments > 2, "arguments arrive in fragments");
    let (content, calls, finish) = reassemble(&chunks);
    assert_eq!(content, "Checking — ☀️.");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0.as_deref(), Some("call_1"));
    assert_eq!(calls[0].1, "get_weather");
    let args: Value = serde_json::from_str(&calls[0].2).expect("arguments JSON");
    assert_eq!(args, json!({"city": "Paris", "unit": "celsius"}));
    assert!(calls[1]
        .0
        .as_deref()
        .is_some_and(|id| id.starts_with("call_")));
    assert_eq!(finish.as_deref(), Some("tool_calls"));

    let last = chunks.last().expect("usage chunk");
    assert_eq!(last["choices"], json!([]));
    assert!(last["usage"]["prompt_tokens"].as_u64().expect("prompt") > 0);
    assert!(
        last["usage"]["completion_tokens"]
            .as_u64()
            .expect("completion")
            > 0
    );
}

#[tokio::test]
async fn usage_chunk_only_when_asked() {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("hi")]))
        .await
        .expect("start");
    let (_, _, raw) = send(openai_request(&server, &body(true, false))).await;
    let (chunks, done) = openai_chunks(&raw);
    assert!(done);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    let (content, _, finish) = reassemble(&chunks);
    assert_eq!(content, "hi");
    assert_eq!(finish.as_deref(), Some("stop"));
}

#[tokio::test]
async fn quirks_of_local_servers() {
    let scenario = Scenario::with_rules([rule()]).openai(OpenAiOptions {
        omit_tool_call_ids: true,
        arguments_in_one_chunk: true,
        ..OpenAiOptions::default()
    });
    let server = FakeModelServer::start(scenario).await.expect("start");
    let (_, _, raw) = send(openai_request(&server, &body(true, false))).await;
    let (chunks, _) = openai_chunks(&raw);
    let tool_chunks: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"].get("tool_calls").is_some())
        .collect();
    assert_eq!(tool_chunks.len(), 2, "one chunk per call");
    let (_, calls, _) = reassemble(&chunks);
    assert!(calls.iter().all(|c| c.0.is_none()));
    assert_eq!(
        serde_json::from_str::<Value>(&calls[1].2).expect("json"),
        json!({"tz": "Europe/Paris"})
    );
}

#[tokio::test]
async fn non_streaming_completion() {
    let server = FakeModelServer::start(Scenario::with_rules([rule()]))
        .await
        .expect("start");
    let (status, _, raw) = send(openai_request(&server, &body(false, false))).await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["object"], "chat.completion");
    let message = &v["choices"][0]["message"];
    assert_eq!(message["content"], "Checking — ☀️.");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert!(v["usage"]["total_tokens"].as_u64().expect("total") > 0);
}

#[tokio::test]
async fn openai_auth_and_tool_pairing() {
    let server = FakeModelServer::start(Scenario::demo())
        .await
        .expect("start");
    let url = format!("{}/v1/chat/completions", server.base_url());
    let (status, _, raw) = send(client().post(&url).json(&body(false, false))).await;
    assert_eq!(status, 401);
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert!(v["error"]["message"]
        .as_str()
        .expect("message")
        .contains("API key"));

    let unanswered = json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "hm"},
        ],
    });
    let (status, _, raw) = send(openai_request(&server, &unanswered)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&raw).contains("call_9"));
}
