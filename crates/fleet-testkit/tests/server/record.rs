use crate::common::*;
use fleet_testkit::{FakeModelServer, Protocol, Rule, Scenario, REDACTED};
use serde_json::Value;

#[tokio::test]
async fn log_records_and_redacts() {
    let scenario = Scenario::with_rules([Rule::text("hi").named("greeting")]);
    let server = FakeModelServer::start(scenario).await.expect("start");
    let body = user_body("hello there", true);
    send(anthropic_request(&server, &body)).await;
    let bearer = client()
        .post(format!("{}/v1/chat/completions", server.base_url()))
        .header("authorization", "Bearer sk-very-secret")
        .json(&serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "x"}]}));
    send(bearer).await;
    send(client().get(format!("{}/v1/nothing", server.base_url()))).await;

    let log = server.requests();
    assert_eq!(server.request_count(), 3);
    assert_eq!(log.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
    let first = &log[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.protocol, Some(Protocol::Anthropic));
    assert_eq!(first.header("x-api-key"), Some(REDACTED));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.body, body);
    assert!(first.is_stream());
    assert_eq!(first.rule.as_deref(), Some("greeting"));
    assert_eq!(first.rule_index, Some(0));
    assert_eq!(first.messages_request().expect("parses").messages.len(), 1);
    assert_eq!(log[1].header("authorization"), Some(REDACTED));
    assert_eq!(log[2].status, 404);
    assert_eq!(log[2].protocol, None);
    let printed = format!("{log:?}");
    assert!(!printed.contains("sk-test-secret") && !printed.contains("sk-very-secret"));

    // The same log over HTTP, for out-of-process servers.
    let (status, _, raw) =
        send(client().get(format!("{}/_fake/requests", server.base_url()))).await;
    assert_eq!(status, 200);
    let over_http: Vec<Value> = serde_json::from_slice(&raw).expect("json");
    assert_eq!(over_http.len(), 3);
    assert_eq!(over_http[0]["rule"], "greeting");
    assert!(!String::from_utf8_lossy(&raw).contains("secret"));
    server.shutdown().await;
}
