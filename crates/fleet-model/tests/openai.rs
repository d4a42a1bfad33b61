//! The OpenAI-compatible client against the fake model server: real HTTP and SSE on loopback,
//! with the quirks of local servers switched on where a test needs them.

use crate::common;

use common::{options, retries, run, streamed_text};
use fleet_model::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, OpenAiClient, OpenAiConfig,
    Provider,
};
use fleet_protocol::{
    ContentBlock, Message, MessagesRequest, Role, StopReason, SystemBlock, SystemPrompt,
    ToolDefinition,
};
use fleet_testkit::{FakeModelServer, OpenAiOptions, Rule, Scenario};
use serde_json::{json, Value};
use std::time::Duration;

fn config(server: &FakeModelServer, key: Option<&str>, max_attempts: u32) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(server.base_url(), key.map(str::to_owned));
    config.http = options(max_attempts);
    config
}

fn client(server: &FakeModelServer, max_attempts: u32) -> OpenAiClient {
    OpenAiClient::new(config(server, Some("sk-test-secret"), max_attempts)).expect("valid config")
}

fn read_tool() -> ToolDefinition {
    ToolDefinition {
        name: "Read".into(),
        description: Some("Reads a file".into()),
        input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}),
        cache_control: None,
    }
}

fn request(prompt: &str) -> ModelRequest {
    let mut body = MessagesRequest::new("qwen3-coder", 1024, vec![Message::user_text(prompt)]);
    body.system = Some(SystemPrompt::Text("You are a careful coding agent.".into()));
    body.tools = vec![read_tool()].into();
    body.into()
}

/// `(id, name, input)` of each tool call in the reply.
fn calls(done: &ModelResponse) -> Vec<(String, String, Value)> {
    done.message
        .to_message()
        .tool_uses()
        .map(|u| (u.id.to_owned(), u.name.to_owned(), u.input.clone()))
        .collect()
}

/// The input fragments streamed for the block with this event index, joined.
fn fragments(events: &[ModelEvent], index: usize) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolInputDelta {
                index: i,
                partial_json,
            } if *i == index => Some(partial_json.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_streams_as_deltas_then_the_whole_message() {
    let text = "Hello from the fake model — naïve café ☕, streamed in small pieces.";
    let scenario = Scenario::new().chunk_size(7).rule(Rule::text(text));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let client = client(&server, 1);
    assert_eq!(client.provider(), Provider::OpenAi);
    let (events, done) = run(&client, request("hi")).await;
    let done = done.expect("completes");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta { .. }));
    assert!(deltas.count() > 1, "several deltas");
    assert_eq!(streamed_text(&events), text);
    assert_eq!(done.message.text(), text);
    assert_eq!(done.message.content, vec![ContentBlock::text(text)]);
    assert_eq!(done.message.stop_reason, Some(StopReason::EndTurn));
    assert!(!done.message.id.is_empty());
    assert!(!done.message.model.is_empty());
    assert_eq!(done.attempts, 1);
    assert!(done.request_id.is_some(), "x-request-id is kept");
    assert!(
        done.message.usage.input_tokens > 0,
        "usage chunk was asked for and read"
    );
    assert!(done.message.usage.output_tokens > 0);
    assert!(matches!(
        events.last(),
        Some(ModelEvent::BlockComplete { index: 0, .. })
    ));
}

#[tokio::test]
async fn tool_call_arguments_are_assembled_exactly_at_every_chunk_size() {
    let input = json!({"file_path": "/tmp/ünï/código.rs", "offset": 10, "nested": {"list": [1, 2, "três"], "q": "say \"hi\""}});
    for chunk in 1..=13 {
        let scenario = Scenario::new().chunk_size(chunk).delta_chars(3).rule(
            Rule::new()
                .then_text("Let me read it.")
                .then_tool_use_with_id("call_read_1", "Read", input.clone()),
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
        assert_eq!(
            calls(&done),
            vec![("call_read_1".into(), "Read".into(), input.clone())],
            "chunk size {chunk}"
        );
        assert!(
            matches!(&done.message.content[0], ContentBlock::Text { text, .. } if text == "Let me read it.")
        );
        let start = events.iter().position(|e| {
            matches!(e, ModelEvent::ToolUseStart { index: 1, id, name } if id == "call_read_1" && name == "Read")
        });
        let complete = events.iter().position(|e| {
            matches!(
                e,
                ModelEvent::BlockComplete {
                    index: 1,
                    block: ContentBlock::ToolUse { .. }
                }
            )
        });
        assert!(
            start.is_some() && start < complete,
            "announced before it completes"
        );
        let pieces = fragments(&events, 1);
        assert!(pieces.len() > 3, "arguments arrived in fragments");
        let joined: Value =
            serde_json::from_str(&pieces.concat()).expect("fragments join into JSON");
        assert_eq!(joined, input);
    }
}

#[tokio::test]
async fn tool_calls_without_ids_get_unique_ones() {
    let scenario = Scenario::new()
        .chunk_size(5)
        .openai(OpenAiOptions {
            omit_tool_call_ids: true,
            arguments_in_one_chunk: false,
            ..OpenAiOptions::default()
        })
        .rule(
            Rule::new()
                .then_tool_use("Read", json!({"file_path": "a.rs"}))
                .then_tool_use("Read", json!({"file_path": "b.rs"})),
        );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("read both")).await;
    let done = done.expect("completes");
    let found = calls(&done);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].2, json!({"file_path": "a.rs"}));
    assert_eq!(found[1].2, json!({"file_path": "b.rs"}));
    assert!(found
        .iter()
        .all(|(id, name, _)| id.starts_with("call_") && name == "Read"));
    assert_ne!(found[0].0, found[1].0, "generated ids are distinct");
    // The server's own ids are `call_` + 24 hex digits; ours end in the call's position.
    assert!(
        found[0].0.ends_with("_0") && found[1].0.ends_with("_1"),
        "{found:?}"
    );
    let started: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolUseStart { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        vec![found[0].0.clone(), found[1].0.clone()],
        "events and message agree"
    );
}

#[tokio::test]
async fn whole_arguments_in_one_chunk() {
    let scenario = Scenario::new()
        .openai(OpenAiOptions {
            omit_tool_call_ids: true,
            arguments_in_one_chunk: true,
            ..OpenAiOptions::default()
        })
        .rule(
            Rule::new()
                .then_text("Two reads.")
                .then_tool_use("Read", json!({"file_path": "x"}))
                .then_tool_use("Grep", json!({"pattern": "fn main", "path": "."})),
        );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("go")).await;
    let done = done.expect("completes");
    let found = calls(&done);
    let names: Vec<&str> = found.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(names, ["Read", "Grep"]);
    assert_eq!(found[1].2, json!({"pattern": "fn main", "path": "."}));
    assert_eq!(fragments(&events, 1).len(), 1, "one piece per call");
    assert_eq!(fragments(&events, 2).len(), 1, "one piece per call");
    assert_eq!(done.message.stop_reason, Some(StopReason::ToolUse));
}

#[tokio::test]
async fn reasoning_content_becomes_a_thinking_block() {
    let scenario = Scenario::new().chunk_size(4).rule(
        Rule::new()
            .then_thinking("Check the file first.")
            .then_text("Done."),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("think")).await;
    let done = done.expect("completes");
    assert_eq!(
        done.message.content,
        vec![
            ContentBlock::Thinking {
                thinking: "Check the file first.".into(),
                signature: String::new()
            },
            ContentBlock::text("Done."),
        ]
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, ModelEvent::ThinkingDelta { index: 0, .. })));
}

#[tokio::test]
async fn rate_limit_is_retried_and_the_retry_is_announced() {
    let scenario = Scenario::new().rules([
        Rule::text("unused")
            .when_call(1)
            .fault_status(429)
            .fault_message("Rate limit reached for requests")
            .retry_after_ms(200),
        Rule::text("Recovered."),
    ]);
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    let done = done.expect("second attempt succeeds");
    assert_eq!(done.message.text(), "Recovered.");
    assert_eq!(done.attempts, 2);
    assert_eq!(retries(&events), vec![(2, Duration::from_millis(200))]);
    let reason = events.iter().find_map(|e| match e {
        ModelEvent::Retry { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert!(
        reason.is_some_and(|r| r.contains("429") && r.contains("Rate limit reached")),
        "the retry says why"
    );
    assert_eq!(streamed_text(&events), "Recovered.");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn missing_key_is_a_401_at_once_with_the_servers_message() {
    let server = FakeModelServer::start(Scenario::new().rule(Rule::text("x")))
        .await
        .expect("server starts");
    let client = OpenAiClient::new(config(&server, None, 5)).expect("config");
    let (events, done) = run(&client, request("hi")).await;
    let err = done.expect_err("401 is final");
    match &err {
        ModelError::Api {
            provider,
            status,
            message,
            request_id,
            ..
        } => {
            assert_eq!((*provider, *status), ("openai", 401));
            assert!(
                message.contains("You didn't provide an API key"),
                "{message}"
            );
            assert!(request_id.is_some());
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    assert!(err.to_string().contains("401"), "{err}");
    assert!(retries(&events).is_empty());
    let log = server.requests();
    assert_eq!(log.len(), 1, "no retry");
    assert_eq!(log[0].header("authorization"), None, "no key, no header");
}

#[tokio::test]
async fn rejected_key_reports_the_apis_type_and_message() {
    let scenario = Scenario::new().rule(
        Rule::text("x")
            .fault_status(401)
            .fault_message("Incorrect API key provided: sk-test-***"),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (_, done) = run(&client(&server, 5), request("hi")).await;
    let err = done.expect_err("401 is final");
    assert!(
        matches!(&err, ModelError::Api { status: 401, error_type, message, .. }
        if error_type == "authentication_error" && message == "Incorrect API key provided: sk-test-***"),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn error_chunk_after_content_is_a_stream_error_not_a_replay() {
    let scenario = Scenario::new().rule(Rule::text("partial answer here, long enough").sse_error(
        "server_error",
        "Upstream failed",
        3,
    ));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    let err = done.expect_err("stream error");
    assert!(
        matches!(&err, ModelError::StreamError { provider: "openai", error_type, message }
        if error_type == "server_error" && message == "Upstream failed"),
        "{err:?}"
    );
    assert!(!streamed_text(&events).is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_before_finish_is_interrupted() {
    let scenario = Scenario::new()
        .rule(Rule::text("This reply will be cut off halfway through.").drop_after_events(3));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 3), request("hi")).await;
    let err = done.expect_err("cut off");
    assert!(
        matches!(err, ModelError::StreamInterrupted { when, .. } if when.contains("after")),
        "{err:?}"
    );
    assert!(!streamed_text(&events).is_empty());
    assert_eq!(server.requests().len(), 1, "never replayed");
}

#[tokio::test]
async fn malformed_tool_arguments_name_the_tool() {
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
    assert_eq!(server.requests().len(), 1, "not retried");
}

/// A second turn as the agent loop sends it: cached system blocks, the assistant's thinking,
/// text and two tool calls, and their results (one failed) followed by more user text.
fn second_turn() -> ModelRequest {
    let mut system = SystemBlock::text("You are a careful coding agent.");
    system.cache_control = Some(fleet_protocol::CacheControl::ephemeral());
    let messages = vec![
        Message::user_text("Read a.rs and b.rs"),
        Message::with_blocks(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "Both files.".into(),
                    signature: String::new(),
                },
                ContentBlock::text("Reading both."),
                ContentBlock::tool_use("call_1", "Read", json!({"file_path": "a.rs"})),
                ContentBlock::tool_use("call_2", "Read", json!({"file_path": "b.rs"})),
            ],
        ),
        Message::with_blocks(
            Role::User,
            vec![
                ContentBlock::tool_result("call_1", "fn a() {}", false),
                ContentBlock::tool_result("call_2", "b.rs: no such file", true),
                ContentBlock::text("Then summarise."),
            ],
        ),
    ];
    let mut body = MessagesRequest::new("qwen3-coder", 2048, messages);
    body.system = Some(SystemPrompt::Blocks(vec![
        system,
        SystemBlock::text("Be brief."),
    ]));
    body.tools = vec![read_tool()].into();
    body.tool_choice = Some(json!({"type": "auto"}));
    body.temperature = Some(0.0);
    let mut req = ModelRequest::from(body);
    req.headers
        .push(("x-fleet-agent".into(), "worker-1".into()));
    req
}

#[tokio::test]
async fn the_server_receives_the_expected_chat_completions_body() {
    let server = FakeModelServer::start(
        Scenario::new().rule(Rule::text("a.rs defines a(); b.rs is missing.")),
    )
    .await
    .expect("server starts");
    // A base URL with `/v1` and a trailing slash, as OpenAI documents it.
    let mut config = config(&server, Some("sk-test-secret"), 1);
    config.base_url = format!("{}/v1/", server.base_url());
    let client = OpenAiClient::new(config).expect("config");
    let (_, done) = run(&client, second_turn()).await;
    done.expect("completes");
    let log = server.requests();
    let sent = &log[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("<redacted>"));
    assert_eq!(sent.header("x-fleet-agent"), Some("worker-1"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert!(!format!("{log:?}").contains("sk-test-secret"));
    let expected = json!({
        "model": "qwen3-coder",
        "messages": [
            {"role": "system", "content": "You are a careful coding agent.\nBe brief."},
            {"role": "user", "content": "Read a.rs and b.rs"},
            {"role": "assistant", "content": "Reading both.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a.rs\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"b.rs\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn a() {}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: b.rs: no such file"},
            {"role": "user", "content": "Then summarise."}
        ],
        "tools": [{"type": "function", "function": {
            "name": "Read",
            "description": "Reads a file",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}
        }}],
        "tool_choice": "auto",
        "max_tokens": 2048,
        "temperature": 0.0,
        "stream": true,
        "stream_options": {"include_usage": true}
    });
    assert_eq!(sent.body, expected);
}

#[tokio::test]
async fn complete_returns_the_assembled_reply() {
    let scenario = Scenario::new().rule(
        Rule::new()
            .then_text("Reading.")
            .then_tool_use("Read", json!({"file_path": "z"})),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let done = client(&server, 1)
        .complete(request("go"))
        .await
        .expect("completes");
    assert_eq!(done.message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(calls(&done)[0].2, json!({"file_path": "z"}));
}

#[tokio::test]
async fn a_base_url_that_is_not_http_is_a_config_error() {
    let err = OpenAiClient::new(OpenAiConfig::new("localhost:11434", None)).expect_err("no scheme");
    assert!(matches!(err, ModelError::Config(_)), "{err:?}");
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_gives_the_whole_reply() {
    let scenario = Scenario::new().ignore_stream(true).rule(
        Rule::new()
            .then_text("Whole reply.")
            .then_tool_use("Read", json!({"file_path": "/a"}))
            .then_tool_use("Read", json!({"file_path": "/b"})),
    );
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let (events, done) = run(&client(&server, 1), request("hi")).await;
    let done = done.expect("a JSON reply is accepted");
    assert_eq!(done.message.text(), "Whole reply.");
    assert_eq!(streamed_text(&events), "Whole reply.");
    assert_eq!(done.message.stop_reason, Some(StopReason::ToolUse));
    let inputs: Vec<_> = done
        .message
        .to_message()
        .tool_uses()
        .map(|u| u.input.clone())
        .collect();
    assert_eq!(
        inputs,
        vec![json!({"file_path": "/a"}), json!({"file_path": "/b"})]
    );
}
