use crate::common::*;
use fleet_protocol::{ContentBlock, StopReason, StreamEvent};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;

fn scripted() -> Rule {
    Rule::new()
        .then_thinking_signed("Let me look at the file first.", "sig-abc")
        .then_text("I will read it — ünïcode ✓.")
        .then_tool_use_with_id(
            "toolu_1",
            "Read",
            json!({"file_path": "/tmp/some/long/path.txt", "limit": 20}),
        )
}

#[tokio::test]
async fn streams_the_scripted_blocks() {
    let server = FakeModelServer::start(Scenario::with_rules([scripted()]))
        .await
        .expect("start");
    let (status, headers, body) =
        send(anthropic_request(&server, &user_body("read it", true))).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/event-stream; charset=utf-8");
    assert!(headers.contains_key("request-id"));

    let events = anthropic_events(&body);
    let names: Vec<_> = events.iter().map(StreamEvent::event_name).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names.last(), Some(&"message_stop"));
    assert!(names.contains(&"ping"));
    let fragments = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::ContentBlockDelta {
                    delta: fleet_protocol::BlockDelta::InputJsonDelta { .. },
                    ..
                }
            )
        })
        .count();
    assert!(fragments > 2, "tool input arrives in fragments");

    let message = accumulate(&events);
    assert_eq!(message.model, "claude-test");
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Thinking {
                thinking: "Let me look at the file first.".into(),
                signature: "sig-abc".into()
            },
            ContentBlock::text("I will read it — ünïcode ✓."),
            ContentBlock::tool_use(
                "toolu_1",
                "Read",
                json!({"file_path": "/tmp/some/long/path.txt", "limit": 20})
            ),
        ]
    );
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert!(message.usage.input_tokens > 0);
    assert!(message.usage.output_tokens > 1);
    assert_eq!(message.usage.cache_read_input_tokens, Some(0));
    assert_eq!(message.usage.cache_creation_input_tokens, Some(0));
}

#[tokio::test]
async fn non_streaming_request_gets_the_whole_message() {
    let rule = Rule::text("hello")
        .stop_reason(StopReason::MaxTokens)
        .output_tokens(12);
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let (status, headers, body) = send(anthropic_request(&server, &user_body("hi", false))).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    let message: fleet_protocol::AssistantMessage = serde_json::from_slice(&body).expect("message");
    assert_eq!(message.content, vec![ContentBlock::text("hello")]);
    assert_eq!(message.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(message.usage.output_tokens, 12);
    assert!(message.id.starts_with("msg_"));
}

#[tokio::test]
async fn generated_ids_and_signatures() {
    let rule = Rule::new()
        .then_thinking("hmm")
        .then_tool_use("Glob", json!({"pattern": "*.rs"}));
    let server = FakeModelServer::start(Scenario::with_rules([rule]))
        .await
        .expect("start");
    let (_, _, body) = send(anthropic_request(&server, &user_body("go", true))).await;
    let message = accumulate(&anthropic_events(&body));
    let ContentBlock::Thinking { signature, .. } = &message.content[0] else {
        panic!("thinking first")
    };
    assert!(!signature.is_empty());
    let ContentBlock::ToolUse { id, .. } = &message.content[1] else {
        panic!("tool second")
    };
    assert!(id.starts_with("toolu_"));

    // Sending the thinking back altered is rejected, as the API rejects a bad signature.
    let mut altered = message.content.clone();
    if let ContentBlock::Thinking { thinking, .. } = &mut altered[0] {
        thinking.push_str(" (edited)");
    }
    let body = json!({
        "model": "claude-test", "max_tokens": 2048,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": altered},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "a.rs"}]},
        ],
    });
    let (status, _, body) = send(anthropic_request(&server, &body)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&body).contains("signature"));
}

#[tokio::test]
async fn required_headers_are_checked() {
    let server = FakeModelServer::start(Scenario::demo())
        .await
        .expect("start");
    let url = format!("{}/v1/messages", server.base_url());
    let body = user_body("hi", false);

    let (status, _, raw) = send(
        client()
            .post(&url)
            .header("anthropic-version", "2023-06-01")
            .json(&body),
    )
    .await;
    assert_eq!(status, 401);
    let err: fleet_protocol::ApiErrorBody = serde_json::from_slice(&raw).expect("error body");
    assert_eq!(err.kind, "error");
    assert_eq!(err.error.error_type, "authentication_error");

    let (status, _, raw) = send(client().post(&url).header("x-api-key", "k").json(&body)).await;
    assert_eq!(status, 400);
    let err: fleet_protocol::ApiErrorBody = serde_json::from_slice(&raw).expect("error body");
    assert_eq!(err.error.error_type, "invalid_request_error");
    assert!(err.error.message.contains("anthropic-version"));

    // A bearer token counts as a credential too.
    let (status, _, _) = send(
        client()
            .post(&url)
            .header("authorization", "Bearer k")
            .header("anthropic-version", "2023-06-01")
            .json(&body),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn auth_can_be_waived() {
    let server = FakeModelServer::start(Scenario::demo().require_auth(false))
        .await
        .expect("start");
    let req = client()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("anthropic-version", "2023-06-01")
        .json(&user_body("hi", true));
    let (status, _, body) = send(req).await;
    assert_eq!(status, 200);
    assert_eq!(
        accumulate(&anthropic_events(&body)).text(),
        "Hello from the fleet fake model."
    );
}

#[tokio::test]
async fn invalid_conversations_are_rejected_like_the_api() {
    let server = FakeModelServer::start(Scenario::demo())
        .await
        .expect("start");
    let unanswered = json!({
        "model": "m", "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}}]},
            {"role": "user", "content": "never mind"},
        ],
    });
    let (status, _, raw) = send(anthropic_request(&server, &unanswered)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&raw).contains("toolu_a"));

    let stray = json!({
        "model": "m", "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}]}],
    });
    let (status, _, raw) = send(anthropic_request(&server, &stray)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&raw).contains("unexpected `tool_use_id`"));

    let empty_text = json!({
        "model": "m", "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}],
    });
    let (status, _, _) = send(anthropic_request(&server, &empty_text)).await;
    assert_eq!(status, 400);

    let not_a_request = json!({"model": "m", "messages": []});
    let (status, _, raw) = send(anthropic_request(&server, &not_a_request)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&raw).contains("max_tokens"));

    // Nothing above reached a rule.
    assert!(server.requests().iter().all(|r| r.rule.is_none()));
}
