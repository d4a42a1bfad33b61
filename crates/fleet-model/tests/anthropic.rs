//! The Anthropic client against the fake model server: real HTTP and SSE on loopback.

use crate::common;

use common::{options, retries, run, streamed_text};
use fleet_model::{
    AnthropicClient, AnthropicConfig, Auth, ModelClient, ModelError, ModelEvent, ModelRequest,
};
use fleet_protocol::{
    ContentBlock, Message, MessagesRequest, Role, StopReason, SystemPrompt, ToolDefinition,
};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;
use std::time::Duration;

fn client(server: &FakeModelServer, max_attempts: u32) -> AnthropicClient {
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("sk-test-secret".into()));
    config.http = options(max_attempts);
    AnthropicClient::new(config).expect("valid config")
}

fn request(prompt: &str) -> ModelRequest {
    let mut body =
        MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user_text(prompt)]);
    body.system = Some(SystemPrompt::Text("You are a careful coding agent.".into()));
    body.tools = fleet_protocol::Shared::from(vec![ToolDefinition {
        name: "Read".into(),
        description: Some("Reads a file".into()),
        input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
        cache_control: None,
    }]);
    body.into()
}

#[tokio::test]
async fn text_streams_as_deltas_then_the_whole_message() {
    let text = "Hello from the fake model — naïve café ☕, streamed in small pieces.";
    let server = FakeModelServer::start(Scenario::new().chunk_size(7).rule(Rule::text(text)))
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("hi")).await;
    let done = done.expect("completes");
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, ModelEvent::TextDelta { .. }))
            .count()
            > 1,
        "several deltas"
    );
    assert_eq!(streamed_text(&events), text);
    assert_eq!(done.message.text(), text);
    assert_eq!(done.message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(done.attempts, 1);
    assert!(done.message.usage.output_tokens > 0);
    assert!(done.message.usage.total_input() > 0);
}

#[tokio::test]
async fn the_reply_start_is_reported_only_when_asked_for() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("hi")))
        .await
        .expect("server starts");
    let (plain, _) = run(&client(&server, 1), request("hi")).await;
    assert!(!plain
        .iter()
        .any(|e| matches!(e, ModelEvent::MessageStart { .. })));
    let mut asked = request("hi");
    asked.stream_events = true;
    let (events, done) = run(&client(&server, 1), asked).await;
    let done = done.expect("completes");
    match &events[0] {
        ModelEvent::MessageStart { id, model, usage } => {
            assert_eq!(id, &done.message.id);
            assert_eq!(model, &done.message.model);
            assert!(usage.total_input() > 0);
        }
        other => panic!("first event: {other:?}"),
    }
}

#[tokio::test]
async fn tool_use_input_is_assembled_from_fragments_at_every_chunk_size() {
    let input = json!({"file_path": "/tmp/ünï/código.rs", "offset": 10, "nested": {"list": [1, 2, "três"]}});
    for chunk in 1..=13 {
        let scenario = Scenario::new().chunk_size(chunk).rule(
            Rule::new()
                .then_text("Let me read it.")
                .then_tool_use("Read", input.clone()),
        );
        let server = FakeModelServer::start(scenario)
            .await
            .expect("server starts");
        let (events, done) = run(&client(&server, 1), request("read it")).await;
        let done = done.unwrap_or_else(|e| panic!("chunk size {chunk}: {e}"));
        assert_eq!(
            done.message.stop_reason,
            Some(StopReason::ToolUse),
            "chunk size {chunk}"
        );
        let uses: Vec<_> = done
            .message
            .to_message()
            .tool_uses()
            .map(|u| (u.name.to_owned(), u.input.clone()))
            .collect();
        assert_eq!(
            uses,
            vec![("Read".to_owned(), input.clone())],
            "chunk size {chunk}"
        );
        let fragments: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolInputDelta { partial_json, .. } => Some(partial_json.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&fragments).ok(),
            Some(input.clone())
        );
        let start = events
            .iter()
            .position(|e| matches!(e, ModelEvent::ToolUseStart { name, .. } if name == "Read"));
        let complete = events.iter().position(|e| {
            matches!(
                e,
                ModelEvent::BlockComplete {
                    block: ContentBlock::ToolUse { .. },
                    ..
                }
            )
        });
        assert!(
            start < complete,
            "the call is announced before it completes"
        );
    }
}

#[tokio::test]
async fn thinking_and_signature_are_kept_for_the_next_turn() {
    let scenario = Scenario::new().chunk_size(5).rule(
        Rule::new()
            .then_thinking_signed("First, check the file.", "sig-abc123")
            .then_text("Done."),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("think")).await;
    let done = done.expect("completes");
    assert!(
        matches!(&done.message.content[0], ContentBlock::Thinking { thinking, signature }
        if thinking == "First, check the file." && signature == "sig-abc123")
    );
    let thought: String = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ThinkingDelta { thinking, .. } => Some(thinking.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thought, "First, check the file.");
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_servers_wait() {
    let scenario = Scenario::new().rules([
        Rule::text("unused")
            .when_call(1)
            .fault_status(429)
            .fault_message("Slow down")
            .retry_after(1),
        Rule::text("Recovered."),
    ]);
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    let done = done.expect("second attempt succeeds");
    assert_eq!(done.message.text(), "Recovered.");
    assert_eq!(done.attempts, 2);
    assert_eq!(
        retries(&events),
        vec![(2, Duration::from_secs(1))],
        "retry-after wins over the 5 ms backoff"
    );
    let log = server.requests();
    assert_eq!(log.len(), 2);
    let gap = log[1].elapsed - log[0].elapsed;
    assert!(
        gap >= Duration::from_secs(1),
        "second request came {gap:?} after the first"
    );
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, ModelEvent::TextDelta { .. })
                || streamed_text(&events) == "Recovered."),
        "the failed attempt showed nothing"
    );
}

#[tokio::test]
async fn retry_after_ms_header_is_honoured() {
    let scenario = Scenario::new().rules([
        Rule::text("x")
            .when_call(1)
            .fault_status(529)
            .retry_after_ms(250),
        Rule::text("ok"),
    ]);
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 2), request("hi")).await;
    assert!(done.is_ok());
    assert_eq!(retries(&events), vec![(2, Duration::from_millis(250))]);
}

#[tokio::test]
async fn repeated_overload_gives_up_after_the_configured_attempts_with_the_apis_message() {
    let scenario = Scenario::new().rule(
        Rule::text("x")
            .fault_status(529)
            .fault_message("Overloaded, try later"),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    let err = done.expect_err("never succeeds");
    match &err {
        ModelError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(
                matches!(last.as_ref(), ModelError::Api { status: 529, error_type, message, .. }
                if error_type == "overloaded_error" && message == "Overloaded, try later")
            );
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    let shown = err.to_string();
    assert!(
        shown.contains("3 attempts") && shown.contains("Overloaded, try later"),
        "{shown}"
    );
    assert_eq!(
        retries(&events).iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_fails_at_once_with_a_clear_error() {
    let scenario = Scenario::new().rule(
        Rule::text("x")
            .fault_status(401)
            .fault_message("invalid x-api-key"),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 5), request("hi")).await;
    let err = done.expect_err("401 is final");
    assert!(
        matches!(&err, ModelError::Api { status: 401, error_type, message, .. }
        if error_type == "authentication_error" && message == "invalid x-api-key"),
        "{err:?}"
    );
    assert!(err.to_string().contains("401"), "{err}");
    assert!(retries(&events).is_empty());
    assert_eq!(server.requests().len(), 1, "no retry");
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for status in [400u16, 403, 404, 413] {
        let scenario =
            Scenario::new().rule(Rule::text("x").fault_status(status).fault_message("nope"));
        let server = FakeModelServer::start(scenario)
            .await
            .expect("server starts");
        let (_, done) = run(&client(&server, 5), request("hi")).await;
        assert_eq!(done.expect_err("fails").status(), Some(status));
        assert_eq!(server.requests().len(), 1, "status {status} was retried");
    }
}

#[tokio::test]
async fn stream_dropped_before_content_is_retried() {
    let scenario = Scenario::new().rules([
        Rule::text("lost").when_call(1).drop_after_events(1),
        Rule::text("Second time lucky."),
    ]);
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    assert_eq!(done.expect("retried").message.text(), "Second time lucky.");
    assert_eq!(
        streamed_text(&events),
        "Second time lucky.",
        "nothing from the dropped attempt"
    );
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn stream_dropped_after_content_is_reported_not_replayed() {
    let scenario = Scenario::new()
        .rule(Rule::text("This reply will be cut off halfway through.").drop_after_events(4));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 5), request("hi")).await;
    let err = done.expect_err("cut off");
    assert!(
        matches!(err, ModelError::StreamInterrupted { when, .. } if when.contains("after")),
        "{err:?}"
    );
    assert!(!streamed_text(&events).is_empty(), "content had arrived");
    assert!(retries(&events).is_empty());
    assert_eq!(server.requests().len(), 1, "never replayed");
}

#[tokio::test]
async fn overloaded_error_event_before_content_is_retried_and_after_content_reported() {
    let before = Scenario::new().rules([
        Rule::text("x")
            .when_call(1)
            .sse_error("overloaded_error", "Overloaded", 1),
        Rule::text("fine"),
    ]);
    let server = FakeModelServer::start(before).await.expect("server starts");
    let (_, done) = run(&client(&server, 3), request("hi")).await;
    assert_eq!(done.expect("retried").message.text(), "fine");

    let after = Scenario::new().rule(Rule::text("partial answer here").sse_error(
        "overloaded_error",
        "Overloaded",
        4,
    ));
    let server = FakeModelServer::start(after).await.expect("server starts");
    let (_, done) = run(&client(&server, 3), request("hi")).await;
    assert!(
        matches!(done, Err(ModelError::StreamError { ref error_type, .. }) if error_type == "overloaded_error")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_tool_json_names_the_tool() {
    let scenario = Scenario::new()
        .rule(Rule::tool_use("Bash", json!({"command": "ls"})).malformed_tool_json());
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (_, done) = run(&client(&server, 3), request("hi")).await;
    let err = done.expect_err("bad JSON");
    assert!(
        matches!(&err, ModelError::InvalidToolInput { tool, .. } if tool == "Bash"),
        "{err:?}"
    );
    assert!(err.to_string().contains("`Bash`"), "{err}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn a_tool_input_cut_by_max_tokens_says_so_with_the_replys_usage() {
    let scenario = Scenario::new().rule(
        Rule::new()
            .then_text("Writing the file.")
            .then_tool_use("Write", json!({"file_path": "/tmp/a", "content": "long"}))
            .malformed_tool_json()
            .stop_reason(StopReason::MaxTokens)
            .output_tokens(1024),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (_, done) = run(&client(&server, 3), request("hi")).await;
    match done.expect_err("bad JSON") {
        ModelError::InvalidToolInput {
            tool,
            stop_reason,
            usage,
            ..
        } => {
            assert_eq!(tool, "Write");
            assert_eq!(stop_reason, Some(StopReason::MaxTokens));
            assert!(usage.is_reported());
            assert_eq!(usage.output_tokens, 1024);
            let prompt = usage.input_tokens + usage.cache_creation_input_tokens.unwrap_or(0);
            assert!(prompt > 0, "the prompt's side is counted too: {usage:?}");
        }
        other => panic!("expected invalid tool input, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn headers_carry_auth_version_betas_and_per_request_extras() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("ok")))
        .await
        .expect("server starts");
    let mut config = AnthropicConfig::new(
        format!("{}/", server.base_url()),
        Auth::Bearer("tok-secret".into()),
    );
    config.betas = vec!["beta-one".into(), "beta-two".into()];
    config.http = options(1);
    let client = AnthropicClient::new(config).expect("config");
    let mut req = request("hi");
    req.headers
        .push(("x-fleet-invoking-request".into(), "req-42".into()));
    let (_, done) = run(&client, req).await;
    done.expect("completes");
    let log = server.requests();
    let r = &log[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("anthropic-beta"), Some("beta-one,beta-two"));
    assert_eq!(r.header("x-fleet-invoking-request"), Some("req-42"));
    assert_eq!(
        r.header("authorization"),
        Some("<redacted>"),
        "secrets are not logged"
    );
    assert!(
        !format!("{log:?}").contains("tok-secret"),
        "the token appears nowhere in the log"
    );
    assert_eq!(log[0].body["stream"], json!(true));
}

#[tokio::test]
async fn identical_prefix_is_read_from_the_simulated_cache() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("ok")))
        .await
        .expect("server starts");
    let client = client(&server, 1);
    let long = "Context that makes the prompt long enough to matter. ".repeat(200);
    let first = client.complete(request(&long)).await.expect("first");
    let second = client.complete(request(&long)).await.expect("second");
    let (u1, u2) = (&first.message.usage, &second.message.usage);
    assert_eq!(u1.cache_read(), 0, "nothing cached yet");
    assert!(
        u1.cache_creation() > 2_000,
        "the first request writes the prefix: {u1:?}"
    );
    assert_eq!(
        u2.cache_read(),
        u1.cache_creation(),
        "the second reads all of it: {u2:?}"
    );
    assert_eq!(u2.cache_creation(), 0);

    // The next turn appends to the conversation: the old prefix is read, only the tail written.
    let mut next = request(&long);
    next.body.messages.push(Message::with_blocks(
        Role::Assistant,
        vec![ContentBlock::text("ok")],
    ));
    next.body.messages.push(Message::user_text("and now?"));
    let third = client.complete(next).await.expect("third");
    let u3 = &third.message.usage;
    assert!(
        u3.cache_read() >= u1.cache_creation() - u1.cache_creation() / 10,
        "{u3:?}"
    );
    assert!(
        u3.cache_creation() > 0 && u3.cache_creation() < 100,
        "{u3:?}"
    );

    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["messages"][0]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[tokio::test]
async fn caching_can_be_turned_off() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("ok")))
        .await
        .expect("server starts");
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("k".into()));
    config.prompt_caching = false;
    config.http = options(1);
    let client = AnthropicClient::new(config).expect("config");
    let long = "x".repeat(20_000);
    client.complete(request(&long)).await.expect("first");
    let second = client.complete(request(&long)).await.expect("second");
    assert_eq!(second.message.usage.cache_read(), 0);
    let body = server.requests()[1].body.to_string();
    assert!(!body.contains("cache_control"), "{body}");
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_gives_the_whole_reply() {
    let scenario = Scenario::new().ignore_stream(true).rule(
        Rule::new()
            .then_text("Whole reply.")
            .then_tool_use("Read", json!({"file_path": "/a"})),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("hi")).await;
    let done = done.expect("a JSON reply is accepted");
    assert_eq!(done.message.text(), "Whole reply.");
    assert_eq!(streamed_text(&events), "Whole reply.");
    assert_eq!(done.message.stop_reason, Some(StopReason::ToolUse));
    let calls: Vec<_> = done
        .message
        .to_message()
        .tool_uses()
        .map(|u| u.input.clone())
        .collect();
    assert_eq!(calls, vec![json!({"file_path": "/a"})]);
    assert!(events
        .iter()
        .any(|e| matches!(e, ModelEvent::ToolUseStart { name, .. } if name == "Read")));
}

/// The body is written in chunks as it is sent (it shares the conversation with the agent):
/// a large conversation must still arrive whole, with an exact `content-length` rather than
/// chunked encoding (some servers refuse chunked uploads), and a retry must send it again.
#[tokio::test]
async fn a_large_body_arrives_whole_with_its_length_and_again_on_retry() {
    let server = FakeModelServer::start(Scenario::new().rules([
        Rule::text("x").when_call(1).fault_status(529),
        Rule::text("ok"),
    ]))
    .await
    .expect("server starts");
    let mut messages = Vec::new();
    for turn in 0..8 {
        messages.push(Message::user_text(format!(
            "turn {turn}: {}",
            "ünïcode line\n".repeat(4_000)
        )));
        messages.push(Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::text(format!("answer {turn}"))],
        ));
    }
    messages.push(Message::user_text("and now?"));
    let mut body = MessagesRequest::new("claude-sonnet-4-5", 1024, messages);
    body.tools = (0..30)
        .map(|i| ToolDefinition {
            name: format!("Tool{i}"),
            description: Some("d".repeat(500)),
            input_schema: json!({"type": "object"}),
            cache_control: None,
        })
        .collect();
    let sent = body.clone();
    let (_, done) = run(&client(&server, 2), body.into()).await;
    assert_eq!(done.expect("the retry succeeds").message.text(), "ok");
    let log = server.requests();
    assert_eq!(log.len(), 2);
    for request in &log {
        assert_eq!(request.header("transfer-encoding"), None, "not chunked");
        let length: usize = request
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .expect("a content-length");
        assert!(length > 400_000, "the whole body: {length} bytes");
        let got = request.messages_request().expect("a Messages request");
        assert_eq!(got.messages.len(), sent.messages.len());
        assert_eq!(
            got.messages[..16],
            sent.messages[..16],
            "unchanged but the tail"
        );
        assert_eq!(got.tools.len(), 30);
        assert!(
            got.tools[29].cache_control.is_some(),
            "the last tool is marked"
        );
        assert!(got.messages[16].blocks()[0].cache_control().is_some());
    }
}
