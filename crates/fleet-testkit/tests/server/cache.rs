use crate::common::*;
use fleet_protocol::{AssistantMessage, Usage};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};

fn text(t: &str, breakpoint: bool) -> Value {
    if breakpoint {
        json!({"type": "text", "text": t, "cache_control": {"type": "ephemeral"}})
    } else {
        json!({"type": "text", "text": t})
    }
}

const SYSTEM: &str = "You are a careful coding agent. Follow the project's conventions closely.";

fn request(messages: Vec<(&str, Value)>) -> Value {
    json!({
        "model": "claude-test", "max_tokens": 100, "stream": true,
        "system": [text(SYSTEM, true)],
        "messages": messages.into_iter().map(|(role, block)| json!({"role": role, "content": [block]})).collect::<Vec<_>>(),
    })
}

async fn usage(server: &FakeModelServer, body: &Value) -> Usage {
    let (status, _, raw) = send(anthropic_request(server, body)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&raw));
    let message: AssistantMessage = accumulate(&anthropic_events(&raw));
    message.usage
}

async fn server() -> FakeModelServer {
    FakeModelServer::start(Scenario::with_rules([Rule::text("ok")]))
        .await
        .expect("start")
}

#[tokio::test]
async fn identical_prefix_is_read_from_cache() {
    let server = server().await;
    let body = request(vec![(
        "user",
        text("Please refactor the parser module.", true),
    )]);
    let first = usage(&server, &body).await;
    assert_eq!(first.cache_read(), 0);
    assert!(first.cache_creation() > 0);
    let second = usage(&server, &body).await;
    assert_eq!(second.cache_read(), first.cache_creation());
    assert_eq!(second.cache_creation(), 0);
    assert_eq!(second.input_tokens, first.input_tokens);
    assert_eq!(second.total_input(), first.total_input());
}

#[tokio::test]
async fn growing_conversation_reuses_the_previous_turn() {
    let server = server().await;
    let turn1 = request(vec![("user", text("Read main.rs", true))]);
    let u1 = usage(&server, &turn1).await;
    let turn2 = request(vec![
        ("user", text("Read main.rs", false)),
        ("assistant", text("It has a main function.", false)),
        ("user", text("Now add logging.", true)),
    ]);
    let u2 = usage(&server, &turn2).await;
    assert_eq!(
        u2.cache_read(),
        u1.cache_creation(),
        "the whole first turn is read"
    );
    assert!(u2.cache_creation() > 0 && u2.cache_creation() < u2.total_input());
}

#[tokio::test]
async fn changed_last_message_recreates_only_the_tail() {
    let server = server().await;
    let history = |last: &str| {
        request(vec![
            ("user", text("Read main.rs", false)),
            ("assistant", text("It has a main function.", false)),
            ("user", text(last, true)),
        ])
    };
    let system_only = usage(&server, &request(vec![("user", text("unrelated", false))])).await;
    let a = usage(&server, &history("Now add logging.")).await;
    assert_eq!(
        a.cache_read(),
        system_only.cache_creation(),
        "the system prefix is shared"
    );
    let b = usage(&server, &history("Now add metrics instead.")).await;
    assert_eq!(b.cache_read(), system_only.cache_creation());
    assert_eq!(
        b.cache_creation(),
        b.total_input() - b.input_tokens - b.cache_read()
    );
    assert!(b.cache_creation() > 0);
}

#[tokio::test]
async fn moving_a_breakpoint_keeps_content_hashes() {
    let server = server().await;
    let convo = |bp_first: bool| {
        json!({
            "model": "claude-test", "max_tokens": 100,
            "messages": [
                {"role": "user", "content": [text("A long first message about the task at hand.", bp_first)]},
                {"role": "assistant", "content": [text("An answer.", !bp_first)]},
                {"role": "user", "content": "and then?"},
            ],
        })
    };
    let a = usage_nonstream(&server, &convo(true)).await;
    assert!(a.cache_creation() > 0);
    // The breakpoint moved one block later: the first message's prefix is still found.
    let b = usage_nonstream(&server, &convo(false)).await;
    assert_eq!(b.cache_read(), a.cache_creation());
    // And moved back: the same prefix again.
    let c = usage_nonstream(&server, &convo(true)).await;
    assert_eq!(c.cache_read(), a.cache_creation());
    assert_eq!(c.cache_creation(), 0);
}

async fn usage_nonstream(server: &FakeModelServer, body: &Value) -> Usage {
    let (status, _, raw) = send(anthropic_request(server, body)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&raw));
    let message: AssistantMessage = serde_json::from_slice(&raw).expect("message");
    message.usage
}

#[tokio::test]
async fn model_is_part_of_the_prefix_and_limits_apply() {
    let server = server().await;
    let mut body = request(vec![("user", text("hello", true))]);
    let first = usage(&server, &body).await;
    body["model"] = json!("another-model");
    let other = usage(&server, &body).await;
    assert_eq!(other.cache_read(), 0);
    assert_eq!(other.cache_creation(), first.cache_creation());

    let five = json!({
        "model": "m", "max_tokens": 10,
        "system": [text("a", true), text("b", true), text("c", true)],
        "messages": [{"role": "user", "content": [text("d", true), text("e", true)]}],
    });
    let (status, _, raw) = send(anthropic_request(&server, &five)).await;
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&raw).contains("A maximum of 4 blocks with cache_control"));
}

#[tokio::test]
async fn short_prefixes_and_disabled_cache() {
    let server =
        FakeModelServer::start(Scenario::with_rules([Rule::text("ok")]).cache_min_tokens(100_000))
            .await
            .expect("start");
    let body = request(vec![("user", text("hello", true))]);
    for _ in 0..2 {
        let u = usage(&server, &body).await;
        assert_eq!(
            (u.cache_read_input_tokens, u.cache_creation_input_tokens),
            (Some(0), Some(0))
        );
    }
}
