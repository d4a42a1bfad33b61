use crate::common::*;
use fleet_protocol::{ApiErrorBody, StreamEvent};
use fleet_testkit::{FakeModelServer, Fault, Rule, Scenario, StatusFault};
use futures::StreamExt;
use serde_json::json;

#[tokio::test]
async fn status_fault_then_success() {
    let scenario = Scenario::with_rules([
        Rule::text("never sent")
            .fault_status(429)
            .retry_after(1)
            .retry_after_ms(250)
            .once(),
        Rule::text("ok"),
    ]);
    let server = FakeModelServer::start(scenario).await.expect("start");
    let (status, headers, raw) = send(anthropic_request(&server, &user_body("hi", true))).await;
    assert_eq!(status, 429);
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(headers["retry-after-ms"], "250");
    let err: ApiErrorBody = serde_json::from_slice(&raw).expect("error body");
    assert_eq!(err.error.error_type, "rate_limit_error");

    let (status, _, raw) = send(anthropic_request(&server, &user_body("hi", true))).await;
    assert_eq!(status, 200);
    assert_eq!(accumulate(&anthropic_events(&raw)).text(), "ok");
    let log = server.requests();
    assert_eq!(log[0].status, 429);
    assert_eq!(log[1].rule.as_deref(), Some("rules[1]"));
}

#[tokio::test]
async fn custom_status_fault_on_openai() {
    let fault = Fault::Status(StatusFault {
        error_type: Some("overloaded_error".into()),
        message: Some("busy".into()),
        should_retry: Some(false),
        ..StatusFault::new(529)
    });
    let server = FakeModelServer::start(Scenario::with_rules([Rule::new().with_fault(fault)]))
        .await
        .expect("start");
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
    let (status, headers, raw) = send(openai_request(&server, &body)).await;
    assert_eq!(status, 529);
    assert_eq!(headers["x-should-retry"], "false");
    let v: serde_json::Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["error"]["type"], "overloaded_error");
    assert_eq!(v["error"]["message"], "busy");
}

#[tokio::test]
async fn sse_error_after_k_events() {
    let rule = Rule::text("partial answer").sse_error("overloaded_error", "Overloaded", 3);
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let (status, _, raw) = send(anthropic_request(&server, &user_body("hi", true))).await;
    assert_eq!(status, 200);
    let events = anthropic_events(&raw);
    assert_eq!(events.len(), 4);
    let StreamEvent::Error { error } = &events[3] else {
        panic!("last event is the error")
    };
    assert_eq!(error.error_type, "overloaded_error");

    // Not streaming: the same error as an HTTP status.
    let (status, _, raw) = send(anthropic_request(&server, &user_body("hi", false))).await;
    assert_eq!(status, 529);
    let err: ApiErrorBody = serde_json::from_slice(&raw).expect("error body");
    assert_eq!(err.error.message, "Overloaded");
}

#[tokio::test]
async fn sse_error_on_openai_stream() {
    let rule = Rule::text("partial").sse_error("api_error", "boom", 1);
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let (_, _, raw) = send(openai_request(&server, &body)).await;
    let (chunks, done) = openai_chunks(&raw);
    assert!(!done);
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[1]["error"]["message"], "boom");
}

#[tokio::test]
async fn connection_drops_after_k_events() {
    let rule = Rule::text("this will be cut off").drop_after_events(2);
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let resp = anthropic_request(&server, &user_body("hi", true))
        .send()
        .await
        .expect("headers arrive");
    assert_eq!(resp.status(), 200);
    let mut stream = resp.bytes_stream();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(piece) = stream.next().await {
        match piece {
            Ok(b) => received.extend_from_slice(&b),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body ends in a transport error");
    assert_eq!(anthropic_events(&received).len(), 2);

    // Not streaming: half a JSON body, then the drop.
    let result = anthropic_request(&server, &user_body("hi", false))
        .send()
        .await
        .expect("headers")
        .bytes()
        .await;
    assert!(result.is_err());
}

#[tokio::test]
async fn malformed_tool_json() {
    let rule = Rule::tool_use("Read", json!({"file_path": "/x/y/z"})).malformed_tool_json();
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let (_, _, raw) = send(anthropic_request(&server, &user_body("hi", true))).await;
    let joined: String = anthropic_events(&raw)
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ContentBlockDelta {
                delta: fleet_protocol::BlockDelta::InputJsonDelta { partial_json },
                ..
            } => Some(partial_json.as_str()),
            _ => None,
        })
        .collect();
    assert!(!joined.is_empty());
    assert!(serde_json::from_str::<serde_json::Value>(&joined).is_err());

    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let (_, _, raw) = send(openai_request(&server, &body)).await;
    let (chunks, _) = openai_chunks(&raw);
    let args: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert!(serde_json::from_str::<serde_json::Value>(&args).is_err());
}

#[tokio::test]
async fn delay_before_response() {
    // Only checks that a delayed rule still answers; durations are for benchmarks.
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("late").delay_ms(20)]))
        .await
        .expect("start");
    let (status, _, raw) = send(anthropic_request(&server, &user_body("hi", true))).await;
    assert_eq!(status, 200);
    assert_eq!(accumulate(&anthropic_events(&raw)).text(), "late");
}
