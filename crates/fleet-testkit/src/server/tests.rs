//! The request log modes and the prompt-cache switch, through real HTTP and the server's own
//! state (which is what a memory benchmark cares about).
#![allow(clippy::unwrap_used)]

use super::*;
use crate::{RequestLog, Rule};
use serde_json::json;

/// A Messages API body whose system prompt and user turn carry cache breakpoints, so each
/// distinct `text` is a new prefix for the cache simulation.
fn body(text: &str) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{
            "role": "user",
            "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
        }],
    })
}

/// A request to the Messages endpoint with the headers the API requires.
fn messages_request(server: &FakeModelServer) -> reqwest::RequestBuilder {
    // reqwest is built without a crypto provider; a plain-HTTP client still needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", "sk-test")
        .header("anthropic-version", "2023-06-01")
}

/// Posts `body` to the Messages endpoint; returns the status and the JSON reply.
async fn post(server: &FakeModelServer, body: &Value) -> (u16, Value) {
    let resp = messages_request(server).json(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

async fn get(server: &FakeModelServer, path: &str) -> (u16, String) {
    let resp = reqwest::get(format!("{}{path}", server.base_url()))
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

fn reply_text(reply: &Value) -> &str {
    reply["content"][0]["text"].as_str().unwrap_or_default()
}

fn scenario(log: RequestLog) -> Scenario {
    Scenario::with_rules([Rule::text("first").when_call(1), Rule::text("later")]).request_log(log)
}

/// Two answered requests and one to an unknown endpoint.
async fn three_requests(server: &FakeModelServer) {
    let (status, reply) = post(server, &body("one")).await;
    assert_eq!((status, reply_text(&reply)), (200, "first"));
    let (status, reply) = post(server, &body("two")).await;
    assert_eq!((status, reply_text(&reply)), (200, "later"));
    assert_eq!(get(server, "/v1/nothing").await.0, 404);
}

#[tokio::test]
async fn count_only_counts_every_request_and_keeps_none() {
    let server = FakeModelServer::start(scenario(RequestLog::CountOnly))
        .await
        .unwrap();
    three_requests(&server).await;

    assert_eq!(server.request_count(), 3);
    assert_eq!((server.rule_uses(0), server.rule_uses(1)), (1, 1));
    assert!(server.requests().is_empty());
    assert!(server.last_request().is_none());
    assert_eq!(
        lock(&server.shared.log).records.capacity(),
        0,
        "nothing was ever stored"
    );
    assert_eq!(get(&server, "/_fake/requests").await, (200, "[]".into()));
    server.shutdown().await;
}

#[tokio::test]
async fn the_full_log_keeps_every_request() {
    let server = FakeModelServer::start(scenario(RequestLog::Full))
        .await
        .unwrap();
    three_requests(&server).await;

    let log = server.requests();
    assert_eq!(server.request_count(), 3);
    assert_eq!(log.len(), 3);
    assert_eq!(log[1].body, body("two"));
    assert_eq!(server.last_request().map(|r| r.status), Some(404));
    server.shutdown().await;
}

#[test]
fn count_only_reads_from_yaml() {
    let scenario = Scenario::from_yaml_str("request_log: count_only\n").unwrap();
    assert_eq!(scenario.request_log, RequestLog::CountOnly);
    assert_eq!(Scenario::new().request_log, RequestLog::Full);
    assert!(Scenario::from_yaml_str("request_log: bodies\n").is_err());
}

/// Sends `n` requests with distinct prefixes; returns the cache-creation figure of the last.
async fn distinct_prefixes(server: &FakeModelServer, n: usize) -> u64 {
    let mut created = 0;
    for i in 0..n {
        let (status, reply) = post(server, &body(&format!("conversation {i}"))).await;
        assert_eq!(status, 200, "{reply}");
        created = reply["usage"]["cache_creation_input_tokens"]
            .as_u64()
            .unwrap();
    }
    created
}

#[tokio::test]
async fn the_cache_simulation_grows_per_prefix_unless_turned_off() {
    let on = FakeModelServer::start(
        Scenario::with_rules([Rule::text("ok")]).request_log(RequestLog::CountOnly),
    )
    .await
    .unwrap();
    assert!(distinct_prefixes(&on, 5).await > 0);
    // One shared system prefix, plus one per conversation.
    assert_eq!(lock(&on.shared.cache).len(), 6);

    let off = FakeModelServer::start(
        Scenario::with_rules([Rule::text("ok")])
            .request_log(RequestLog::CountOnly)
            .cache_enabled(false),
    )
    .await
    .unwrap();
    assert_eq!(distinct_prefixes(&off, 5).await, 0);
    assert_eq!(lock(&off.shared.cache).len(), 0);
    assert_eq!(off.request_count(), 5);
    on.shutdown().await;
    off.shutdown().await;
}

/// Posts raw bytes to the Messages endpoint; returns the status and the error message.
async fn post_raw(server: &FakeModelServer, raw: &'static str) -> (u16, String) {
    let resp = messages_request(server)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let reply: Value = resp.json().await.unwrap();
    (
        status,
        reply["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A request is read straight from its bytes; what does not read as one still gets the
/// error the value-based checks give.
#[tokio::test]
async fn bodies_that_are_not_requests_are_refused_with_the_reason() {
    let server = FakeModelServer::start(scenario(RequestLog::Full))
        .await
        .unwrap();
    let (status, message) = post_raw(&server, "[1, 2]").await;
    assert_eq!(status, 400);
    assert!(message.contains("not a JSON object"), "{message}");
    let (status, message) = post_raw(&server, "not json").await;
    assert_eq!(status, 400);
    assert!(message.contains("not a JSON object"), "{message}");
    let (status, message) = post_raw(&server, r#"{"model": "m"}"#).await;
    assert_eq!(status, 400);
    assert!(
        message.contains("not a valid Messages API request"),
        "{message}"
    );
    assert!(
        message.contains("max_tokens") || message.contains("messages"),
        "{message}"
    );
    let (status, reply) = post(&server, &body("fine")).await;
    assert_eq!(
        (status, reply_text(&reply)),
        (200, "later"),
        "the fourth call"
    );
    let log = server.requests();
    assert_eq!(log.len(), 4, "every request is logged");
    assert_eq!(log[0].body, json!([1, 2]), "the log keeps the body as sent");
    assert_eq!(log[1].body, json!("not json"));
    assert_eq!(log[3].body["messages"][0]["content"][0]["text"], "fine");
}
