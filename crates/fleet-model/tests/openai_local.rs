//! The OpenAI-compatible client against the fake server behaving like the local servers users
//! run (llama-server, llama-cpp-python, vLLM): a small context window, no usage reported, a
//! model served under its own name, empty streams, and what the server says about itself.

use crate::common;

use common::{options, run};
use fleet_model::{
    ClientDefaults, ModelClient, ModelError, ModelRequest, OpenAiClient, OpenAiConfig,
    ServerLimits, ToolChoiceMode,
};
use fleet_protocol::{Message, MessagesRequest, StopReason, ToolDefinition, Usage};
use fleet_testkit::{FakeModelServer, Overflow, Rule, Scenario};
use serde_json::{json, Value};

const MAX_TOKENS: u64 = 1024;

fn client_with(server: &FakeModelServer, edit: impl FnOnce(&mut OpenAiConfig)) -> OpenAiClient {
    let mut config = OpenAiConfig::new(server.base_url(), Some("sk-test".into()));
    config.http = options(3);
    edit(&mut config);
    OpenAiClient::new(config).expect("valid config")
}

fn client(server: &FakeModelServer) -> OpenAiClient {
    client_with(server, |_| {})
}

fn request_with_tools(tools: bool) -> ModelRequest {
    let mut body = MessagesRequest::new(
        "qwen-local",
        MAX_TOKENS,
        vec![Message::user_text("Write the report to /tmp/report.md")],
    );
    if tools {
        body.tools = vec![ToolDefinition {
            name: "Write".into(),
            description: Some("Writes a file".into()),
            input_schema: json!({"type": "object"}),
            cache_control: None,
        }]
        .into();
    }
    body.into()
}

fn request() -> ModelRequest {
    request_with_tools(true)
}

/// The prompt's size as the fake server counts it, learnt from a server without limits.
async fn prompt_tokens() -> u64 {
    let probe = FakeModelServer::start(Scenario::with_rules([Rule::text("probe")]))
        .await
        .expect("server starts");
    let (_, done) = run(&client(&probe), request()).await;
    done.expect("completes").message.usage.input_tokens
}

#[tokio::test]
async fn usage_the_server_left_out_is_unreported_not_zero() {
    let quiet = FakeModelServer::start(Scenario::with_rules([Rule::text("hi")]).omit_usage())
        .await
        .expect("server starts");
    let (_, done) = run(&client(&quiet), request()).await;
    let usage = done.expect("completes").message.usage;
    assert!(!usage.is_reported(), "{usage:?}");
    assert_eq!(usage, Usage::unreported());

    let counting = FakeModelServer::start(Scenario::with_rules([Rule::text("hi")]))
        .await
        .expect("server starts");
    let (_, done) = run(&client(&counting), request()).await;
    let usage = done.expect("completes").message.usage;
    assert!(usage.is_reported());
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );
}

#[tokio::test]
async fn the_served_model_names_the_reply() {
    let server = FakeModelServer::start(
        Scenario::with_rules([Rule::text("hello")]).served_model("SmolLM2-135M.gguf"),
    )
    .await
    .expect("server starts");
    let (_, done) = run(&client(&server), request()).await;
    assert_eq!(done.expect("completes").message.model, "SmolLM2-135M.gguf");
}

#[tokio::test]
async fn a_reply_cut_by_the_context_window_is_told_from_one_cut_by_max_tokens() {
    let prompt = prompt_tokens().await;
    let long = "The report covers the quarter's sales, costs, hiring and the plans for next year.";
    let window = FakeModelServer::start(
        Scenario::with_rules([Rule::text(long)])
            .openai_context_window(prompt + 5, Overflow::Truncate),
    )
    .await
    .expect("server starts");
    let (_, done) = run(&client(&window), request()).await;
    let message = done.expect("a cut reply is still a reply").message;
    assert_eq!(
        message.stop_reason,
        Some(StopReason::ModelContextWindowExceeded)
    );
    assert_eq!(message.usage.output_tokens, 5);
    assert_eq!(message.text(), &long[..20]);

    let limit = FakeModelServer::start(Scenario::with_rules([
        Rule::text(long).stop_reason(StopReason::MaxTokens)
    ]))
    .await
    .expect("server starts");
    let (_, done) = run(&client(&limit), request()).await;
    let message = done.expect("completes").message;
    assert_eq!(message.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(message.usage.output_tokens, MAX_TOKENS);
}

fn invalid_input(err: ModelError) -> (Option<StopReason>, Usage, String) {
    let text = err.to_string();
    match err {
        ModelError::InvalidToolInput {
            stop_reason, usage, ..
        } => (stop_reason, *usage, text),
        other => panic!("expected invalid tool input, got {other:?}"),
    }
}

#[tokio::test]
async fn broken_tool_json_at_a_length_stop_carries_the_stop_and_the_usage() {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::tool_use(
        "Write",
        json!({"file_path": "/tmp/report.md", "content": "# Report"}),
    )
    .malformed_tool_json()
    .stop_reason(StopReason::MaxTokens)]))
    .await
    .expect("server starts");
    let (_, done) = run(&client(&server), request()).await;
    let (stop, usage, text) = invalid_input(done.expect_err("bad JSON"));
    assert_eq!(stop, Some(StopReason::MaxTokens));
    assert!(usage.is_reported());
    assert_eq!(usage.output_tokens, MAX_TOKENS);
    assert!(usage.input_tokens > 0, "{usage:?}");
    assert!(text.contains("output limit (max_tokens)"), "{text}");
    assert_eq!(server.request_count(), 1, "not retried");

    // Cut by a full window instead: the input was cut there, and the error says so.
    let prompt = prompt_tokens().await;
    let window = FakeModelServer::start(
        Scenario::with_rules([Rule::tool_use(
            "Write",
            json!({"file_path": "/tmp/report.md", "content": "# Report\n\nA long body."}),
        )])
        .openai_context_window(prompt + 8, Overflow::Truncate),
    )
    .await
    .expect("server starts");
    let (_, done) = run(&client(&window), request()).await;
    let (stop, usage, text) = invalid_input(done.expect_err("cut JSON"));
    assert_eq!(stop, Some(StopReason::ModelContextWindowExceeded));
    assert_eq!(usage.output_tokens, 8);
    assert!(text.contains("context window"), "{text}");
}

#[tokio::test]
async fn two_empty_streams_in_a_row_stop_with_the_context_hint() {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("x").empty_stream()]))
        .await
        .expect("server starts");
    let (events, done) = run(&client_with(&server, |c| c.http = options(9)), request()).await;
    let err = done.expect_err("nothing came");
    assert!(
        matches!(err, ModelError::EmptyStream { times: 2, .. }),
        "{err:?}"
    );
    assert!(
        !err.is_retryable(),
        "the whole turn must not be asked again"
    );
    let text = err.to_string();
    assert!(
        text.contains("twice") && text.contains("context window"),
        "{text}"
    );
    assert_eq!(server.request_count(), 2);
    assert_eq!(common::retries(&events).len(), 1);

    // llama-cpp-python's answer to a prompt over its window is the same silence.
    let overflow = FakeModelServer::start(
        Scenario::with_rules([Rule::text("never")]).openai_context_window(5, Overflow::Empty),
    )
    .await
    .expect("server starts");
    let (_, done) = run(&client(&overflow), request()).await;
    assert!(matches!(
        done,
        Err(ModelError::EmptyStream { times: 2, .. })
    ));
    assert_eq!(overflow.request_count(), 2);
}

#[tokio::test]
async fn one_empty_stream_then_a_reply_succeeds() {
    let server = FakeModelServer::start(Scenario::queue([
        Rule::text("x").empty_stream(),
        Rule::text("Here it is."),
    ]))
    .await
    .expect("server starts");
    let (_, done) = run(&client(&server), request()).await;
    let done = done.expect("the second attempt answers");
    assert_eq!(done.message.text(), "Here it is.");
    assert_eq!(done.attempts, 2);
}

/// The `tool_choice` of the only request the server received.
async fn sent_tool_choice(mode: Option<ToolChoiceMode>, tools: bool) -> Option<Value> {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("ok")]))
        .await
        .expect("server starts");
    let client = client_with(&server, |c| {
        if let Some(mode) = mode {
            c.tool_choice = mode;
        }
    });
    let (_, done) = run(&client, request_with_tools(tools)).await;
    done.expect("completes");
    server
        .last_request()
        .and_then(|r| r.body.get("tool_choice").cloned())
}

#[tokio::test]
async fn tool_choice_is_sent_with_tools_as_configured() {
    assert_eq!(sent_tool_choice(None, true).await, Some(json!("auto")));
    assert_eq!(
        sent_tool_choice(Some(ToolChoiceMode::Required), true).await,
        Some(json!("required"))
    );
    assert_eq!(
        sent_tool_choice(Some(ToolChoiceMode::Omit), true).await,
        None
    );
    assert_eq!(
        sent_tool_choice(Some(ToolChoiceMode::Required), false).await,
        None,
        "never without tools"
    );
}

#[test]
fn the_tool_choice_variable_beats_the_setting() {
    let omit = ClientDefaults {
        openai_tool_choice: Some(ToolChoiceMode::Omit),
    };
    std::env::remove_var("FLEET_OPENAI_TOOL_CHOICE");
    let config = OpenAiConfig::from_env_over(&omit).expect("valid");
    assert_eq!(config.tool_choice, ToolChoiceMode::Omit);
    assert_eq!(
        OpenAiConfig::from_env().expect("valid").tool_choice,
        ToolChoiceMode::Auto
    );
    std::env::set_var("FLEET_OPENAI_TOOL_CHOICE", "Required");
    let config = OpenAiConfig::from_env_over(&omit).expect("valid");
    assert_eq!(config.tool_choice, ToolChoiceMode::Required);
    std::env::set_var("FLEET_OPENAI_TOOL_CHOICE", "sometimes");
    let err = OpenAiConfig::from_env().expect_err("not a choice");
    assert!(
        err.to_string()
            .contains("FLEET_OPENAI_TOOL_CHOICE=\"sometimes\""),
        "{err}"
    );
    std::env::remove_var("FLEET_OPENAI_TOOL_CHOICE");
}

#[tokio::test]
async fn server_limits_come_from_the_models_list_and_props() {
    let server = FakeModelServer::start(
        Scenario::demo()
            .served_model("SmolLM2-135M.gguf")
            .openai_context_window(2048, Overflow::Truncate),
    )
    .await
    .expect("server starts");
    let limits = client(&server).server_limits("qwen-local").await;
    assert_eq!(
        limits,
        Some(ServerLimits {
            served_model: Some("SmolLM2-135M.gguf".into()),
            context_window: Some(2048),
            local: true,
            ..ServerLimits::default()
        }),
        "/props' running window beats the listed training context"
    );

    let vllm = FakeModelServer::start(
        Scenario::demo()
            .model("qwen-local")
            .openai_context_window(32768, Overflow::Reject),
    )
    .await
    .expect("server starts");
    assert_eq!(
        client(&vllm).server_limits("qwen-local").await,
        Some(ServerLimits {
            context_window: Some(32768),
            local: true,
            ..ServerLimits::default()
        })
    );

    let named = FakeModelServer::start(Scenario::demo().served_model("qwen-local"))
        .await
        .expect("server starts");
    let local_only = Some(ServerLimits {
        local: true,
        ..ServerLimits::default()
    });
    assert_eq!(
        client(&named).server_limits("qwen-local").await,
        local_only,
        "the asked-for name and no window: nothing new but where it is"
    );

    let bare = FakeModelServer::start(Scenario::demo())
        .await
        .expect("server starts");
    assert_eq!(client(&bare).server_limits("qwen-local").await, local_only);
    assert_eq!(bare.request_count(), 0, "no model request was made");
}

#[tokio::test]
async fn a_server_still_loading_is_to_be_asked_again_and_then_says_it_cannot_use_tools() {
    let server = FakeModelServer::start(
        Scenario::demo()
            .openai_context_window(4096, Overflow::Truncate)
            .supports_tools(false)
            .loading_probes(1),
    )
    .await
    .expect("server starts");
    let loading = client(&server).server_limits("qwen-local").await;
    assert_eq!(
        loading,
        Some(ServerLimits {
            local: true,
            ask_again: true,
            ..ServerLimits::default()
        })
    );
    let loaded = client(&server).server_limits("qwen-local").await;
    let loaded = loaded.expect("the server answers once loaded");
    assert_eq!(
        (
            loaded.context_window,
            loaded.supports_tools,
            loaded.ask_again
        ),
        (Some(4096), Some(false), false)
    );
}

#[tokio::test]
async fn the_prompt_is_counted_by_the_servers_tokenizer_without_the_tools_it_drops() {
    let scenario = |supports_tools| {
        Scenario::with_rules([Rule::text("ok")])
            .openai_context_window(16_384, Overflow::Truncate)
            .supports_tools(supports_tools)
    };
    let mut request = request_with_tools(true).body;
    request.tools = vec![
        ToolDefinition {
            name: "Big".into(),
            description: Some("x".repeat(20_000)),
            input_schema: json!({"type": "object"}),
            cache_control: None,
        };
        1
    ]
    .into();
    for supports_tools in [false, true] {
        let server = FakeModelServer::start(scenario(supports_tools))
            .await
            .expect("server starts");
        let counted = client(&server).count_prompt_tokens(&request).await;
        let counted = counted.expect("llama-server counts");
        // What a chat request with the same body is charged.
        let (_, reply) = run(&client(&server), ModelRequest::from(request.clone())).await;
        let reply = reply.expect("answered");
        assert_eq!(counted, reply.message.usage.input_tokens);
        assert_eq!(counted > 5_000, supports_tools, "{counted}");
    }

    let bare = FakeModelServer::start(Scenario::demo())
        .await
        .expect("server starts");
    assert_eq!(client(&bare).count_prompt_tokens(&request).await, None);

    // An older llama-server without the endpoints: after `/props` said the tools are
    // dropped, the estimate leaves them out too.
    let mut older = scenario(false);
    older.openai.no_tokenizer = true;
    let older = FakeModelServer::start(older).await.expect("server starts");
    let client = client(&older);
    assert_eq!(client.count_prompt_tokens(&request).await, None);
    assert!(client.server_limits("qwen-local").await.is_some());
    let estimate = client.count_prompt_tokens(&request).await;
    assert!(estimate.is_some_and(|n| n < 1_000), "{estimate:?}");
}
