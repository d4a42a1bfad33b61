//! Failures as a user meets them: nothing listening on this machine, a server slow to begin
//! or stalling mid-reply, a wrong base URL. Each must end soon, say which limit or address
//! was at fault once, and name what to change.

use crate::common;

use common::{options, retries, run};
use fleet_model::{
    AnthropicClient, AnthropicConfig, Auth, HttpOptions, ModelError, ModelRequest, OpenAiClient,
    OpenAiConfig,
};
use fleet_protocol::{Message, MessagesRequest};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::time::Duration;

fn request() -> ModelRequest {
    MessagesRequest::new("qwen-local", 256, vec![Message::user_text("hi")]).into()
}

fn client(base_url: String, http: HttpOptions) -> OpenAiClient {
    let mut config = OpenAiConfig::new(base_url, Some("sk-test".into()));
    config.http = http;
    OpenAiClient::new(config).expect("valid config")
}

/// Limits small enough for a test: `idle` between chunks, `first` before the first event.
fn limits(idle_ms: u64, first_ms: u64) -> HttpOptions {
    HttpOptions {
        idle_timeout: Duration::from_millis(idle_ms),
        first_token_timeout: Some(Duration::from_millis(first_ms)),
        ..options(1)
    }
}

#[tokio::test]
async fn nothing_listening_on_this_machine_fails_after_two_tries_naming_the_variable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let client = client(format!("http://127.0.0.1:{port}/v1"), options(9));
    let (events, done) = run(&client, request()).await;
    let err = done.expect_err("nobody listens");
    assert!(
        matches!(
            err.root(),
            ModelError::NothingListening {
                variable: "OPENAI_BASE_URL",
                ..
            }
        ),
        "{err:?}"
    );
    let announced = retries(&events);
    assert!(announced.len() <= 1, "at most 2 attempts: {announced:?}");
    let text = err.to_string();
    assert!(
        text.contains("OPENAI_BASE_URL") && text.contains("connection refused"),
        "{text}"
    );
    assert_eq!(text.matches(&format!(":{port}/")).count(), 1, "{text}");
}

#[tokio::test]
async fn a_slow_start_within_the_first_token_limit_is_not_an_idle_stall() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("Worth the wait.").delay_ms(400)
    ]))
    .await
    .expect("server starts");
    let client = client(server.base_url(), limits(100, 10_000));
    let (_, done) = run(&client, request()).await;
    assert_eq!(done.expect("completes").message.text(), "Worth the wait.");
}

#[tokio::test]
async fn headers_at_once_and_the_first_event_later_is_still_the_first_token_wait() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("Read the prompt.").first_event_delay_ms(400)
    ]))
    .await
    .expect("server starts");
    let client = client(server.base_url(), limits(100, 10_000));
    let (_, done) = run(&client, request()).await;
    assert_eq!(done.expect("completes").message.text(), "Read the prompt.");
}

#[tokio::test]
async fn a_stall_mid_reply_hits_the_idle_limit_and_names_its_variable() {
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text(
        "This reply stalls after its first chunk.",
    )
    .chunk_delay_ms(1_000)]))
    .await
    .expect("server starts");
    let client = client(server.base_url(), limits(100, 10_000));
    let (_, done) = run(&client, request()).await;
    let err = done.expect_err("stalled");
    assert!(
        matches!(err, ModelError::IdleTimeout(d) if d == Duration::from_millis(100)),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("FLEET_STREAM_IDLE_TIMEOUT_MS") && text.contains("100 ms"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_slower_than_the_first_token_limit_names_that_variable() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("too late").delay_ms(3_000)
    ]))
    .await
    .expect("server starts");
    let client = client(server.base_url(), limits(5_000, 150));
    let (_, done) = run(&client, request()).await;
    let err = done.expect_err("too slow");
    assert!(
        matches!(err, ModelError::FirstTokenTimeout { after, local: true } if after == Duration::from_millis(150)),
        "{err:?}"
    );
    assert!(
        !err.is_retryable(),
        "a local server would only be as slow again"
    );
    let text = err.to_string();
    assert!(
        text.contains("FLEET_FIRST_TOKEN_TIMEOUT_MS") && text.contains("150 ms"),
        "{text}"
    );
    assert!(!text.contains("FLEET_STREAM_IDLE_TIMEOUT_MS"), "{text}");
}

#[tokio::test]
async fn a_wrong_base_url_gets_a_404_that_names_the_url_and_the_variable() {
    let server = FakeModelServer::start(Scenario::demo())
        .await
        .expect("server starts");
    let client = client(format!("{}/api", server.base_url()), options(3));
    let (events, done) = run(&client, request()).await;
    let err = done.expect_err("no such endpoint");
    assert_eq!(err.status(), Some(404));
    assert!(retries(&events).is_empty(), "a 404 is final");
    let url = format!("{}/api/v1/chat/completions", server.base_url());
    let text = err.to_string();
    assert_eq!(text.matches(&url).count(), 1, "{text}");
    assert!(text.contains("OPENAI_BASE_URL"), "{text}");
    // The port may hold "404" too: count it outside the URL.
    assert_eq!(text.replace(&url, "").matches("404").count(), 1, "{text}");
}

#[tokio::test]
async fn a_connect_error_names_the_url_once() {
    // TEST-NET-1 is never routed: the attempt fails at connecting, wherever the test runs.
    let http = HttpOptions {
        connect_timeout: Duration::from_millis(300),
        ..options(1)
    };
    let client = client("http://192.0.2.1:9/v1".into(), http);
    let (_, done) = run(&client, request()).await;
    let err = done.expect_err("unreachable");
    assert!(matches!(err, ModelError::Connect { .. }), "{err:?}");
    let text = err.to_string();
    assert_eq!(text.matches("192.0.2.1").count(), 1, "the URL once: {text}");
}

#[tokio::test]
async fn anthropic_refused_on_this_machine_is_tried_twice_then_explained() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let mut config =
        AnthropicConfig::new(format!("http://127.0.0.1:{port}"), Auth::ApiKey("k".into()));
    config.http = options(9);
    let client = AnthropicClient::new(config).expect("config");
    let (events, done) = run(&client, request()).await;
    let err = done.expect_err("nobody listens");
    assert!(
        matches!(err.root(), ModelError::NothingListening { url, variable: "ANTHROPIC_BASE_URL" }
            if url.contains(&port.to_string())),
        "{err:?}"
    );
    assert!(retries(&events).len() <= 1, "{events:?}");
    let text = err.to_string();
    assert!(text.contains("ANTHROPIC_BASE_URL"), "{text}");
    assert_eq!(text.matches(&port.to_string()).count(), 1, "{text}");
}

#[tokio::test]
async fn anthropic_slow_to_begin_hits_the_first_token_limit() {
    let scenario = Scenario::new().rule(Rule::text("slow").delay_ms(2_000));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    let mut config = AnthropicConfig::new(server.base_url(), Auth::ApiKey("k".into()));
    config.http = HttpOptions {
        first_token_timeout: Some(Duration::from_millis(100)),
        ..options(1)
    };
    let client = AnthropicClient::new(config).expect("config");
    let (_, done) = run(&client, request()).await;
    assert!(
        matches!(done, Err(ModelError::FirstTokenTimeout { after, local: true }) if after == Duration::from_millis(100)),
        "{done:?}"
    );
}

/// `.invalid` never resolves (RFC 6761): the name is tried once more, a second later, and the
/// error names the host and the variable that set it, not a chain of connector messages.
#[tokio::test]
async fn a_name_that_does_not_resolve_is_tried_twice_then_named_with_its_variable() {
    let mut config = AnthropicConfig::new("http://nosuchhost.invalid", Auth::ApiKey("k".into()));
    config.http = options(9);
    let client = AnthropicClient::new(config).expect("config");
    let (events, done) = run(&client, request()).await;
    let err = done.expect_err("the name does not resolve");
    assert!(
        matches!(err.root(), ModelError::HostNotFound { host, variable: "ANTHROPIC_BASE_URL", .. }
            if host == "nosuchhost.invalid"),
        "{err:?}"
    );
    let announced = retries(&events);
    assert_eq!(announced.len(), 1, "one more try: {events:?}");
    assert_eq!(announced[0].1, Duration::from_secs(1));
    let text = err.to_string();
    assert!(
        text.contains("`nosuchhost.invalid`") && text.contains("ANTHROPIC_BASE_URL"),
        "{text}"
    );
    assert!(!text.contains("client error (Connect)"), "{text}");

    let openai = client_named("http://nosuchhost.invalid/v1", options(1));
    let (events, done) = run(&openai, request()).await;
    let err = done.expect_err("the name does not resolve");
    assert!(retries(&events).is_empty(), "retries are off: {events:?}");
    assert!(
        matches!(
            &err,
            ModelError::HostNotFound {
                variable: "OPENAI_BASE_URL",
                ..
            }
        ),
        "{err:?}"
    );
}

fn client_named(base_url: &str, http: HttpOptions) -> OpenAiClient {
    client(base_url.to_owned(), http)
}
