use crate::common::*;
use fleet_protocol::ApiErrorBody;
use fleet_testkit::{FakeModelServer, Protocol, Rule, Scenario};
use serde_json::{json, Value};

/// Sends a non-streaming Messages request and returns (status, text or error message).
async fn ask(server: &FakeModelServer, body: &Value) -> (u16, String) {
    let (status, _, raw) = send(anthropic_request(server, body)).await;
    if status == 200 {
        let m: fleet_protocol::AssistantMessage = serde_json::from_slice(&raw).expect("message");
        (status, m.text())
    } else {
        let e: ApiErrorBody = serde_json::from_slice(&raw).expect("error");
        (status, e.error.message)
    }
}

fn conversation(system: &str, first: &str, last: Value) -> Value {
    json!({
        "model": "m", "max_tokens": 100, "system": system,
        "messages": [
            {"role": "user", "content": first},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
            {"role": "user", "content": last},
        ],
    })
}

#[tokio::test]
async fn each_condition_selects_its_rule() {
    let scenario = Scenario::with_rules([
        Rule::text("by system").when_system_contains("You are a reviewer"),
        Rule::text("by marker").when_marker("[case:abc]"),
        Rule::text("by tool result text").when_tool_result_contains("secret contents"),
        Rule::text("by tool result").when_tool_result(true),
        Rule::text("by last user").when_last_user_contains("please summarise"),
        Rule::text("by protocol").when_protocol(Protocol::OpenAi),
    ]);
    let server = FakeModelServer::start(scenario).await.expect("start");
    let result =
        |id: &str, text: &str| json!([{"type": "tool_result", "tool_use_id": id, "content": text}]);

    let r = ask(
        &server,
        &conversation("You are a reviewer.", "hi", result("toolu_1", "x")),
    )
    .await;
    assert_eq!(r, (200, "by system".into()));
    let r = ask(
        &server,
        &conversation("", "[case:abc] hi", result("toolu_1", "x")),
    )
    .await;
    assert_eq!(r, (200, "by marker".into()));
    let r = ask(
        &server,
        &conversation("", "hi", result("toolu_1", "the secret contents")),
    )
    .await;
    assert_eq!(r, (200, "by tool result text".into()));
    let r = ask(&server, &conversation("", "hi", result("toolu_1", "x"))).await;
    assert_eq!(r, (200, "by tool result".into()));
    let r = ask(&server, &user_body("please summarise this", false)).await;
    assert_eq!(r, (200, "by last user".into()));

    let body = json!({"model": "m", "messages": [{"role": "user", "content": "anything"}]});
    let (_, _, raw) = send(openai_request(&server, &body)).await;
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["choices"][0]["message"]["content"], "by protocol");

    let (status, message) = ask(&server, &user_body("unmatched words", false)).await;
    assert_eq!(status, 400);
    assert!(
        message.contains("no scenario rule matched request #7"),
        "{message}"
    );
    assert!(message.contains("unmatched words"), "{message}");
}

#[tokio::test]
async fn call_number_and_times() {
    let scenario = Scenario::with_rules([
        Rule::text("second call").when_call(2),
        Rule::text("twice").times(2),
        Rule::text("fallback"),
    ]);
    let server = FakeModelServer::start(scenario).await.expect("start");
    let mut answers = Vec::new();
    for _ in 0..5 {
        answers.push(ask(&server, &user_body("x", false)).await.1);
    }
    assert_eq!(
        answers,
        ["twice", "second call", "twice", "fallback", "fallback"]
    );
    assert_eq!(server.rule_uses(1), 2);
}

#[tokio::test]
async fn queue_answers_in_turn_and_then_runs_out() {
    let server = FakeModelServer::start(Scenario::queue([Rule::text("one"), Rule::text("two")]))
        .await
        .expect("start");
    assert_eq!(ask(&server, &user_body("x", false)).await.1, "one");
    assert_eq!(ask(&server, &user_body("x", false)).await.1, "two");
    let (status, message) = ask(&server, &user_body("x", false)).await;
    assert_eq!(status, 400);
    assert!(message.contains("request #3"));
}

#[tokio::test]
async fn openai_last_user_turn_includes_tool_messages() {
    let scenario = Scenario::with_rules([
        Rule::text("after tool")
            .when_tool_result(true)
            .when_tool_result_contains("42"),
        Rule::text("first")
            .when_marker("[m1]")
            .when_last_user_contains("question"),
    ]);
    let server = FakeModelServer::start(scenario).await.expect("start");
    let first = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "[m1] question"}]}]});
    let (_, _, raw) = send(openai_request(&server, &first)).await;
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["choices"][0]["message"]["content"], "first");

    let second = json!({"model": "m", "messages": [
        {"role": "user", "content": "[m1] question"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "the answer is 42"},
    ]});
    let (_, _, raw) = send(openai_request(&server, &second)).await;
    let v: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(v["choices"][0]["message"]["content"], "after tool");
}
