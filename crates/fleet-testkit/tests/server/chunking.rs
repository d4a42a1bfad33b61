use crate::common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};

fn rule() -> Rule {
    // Multi-byte characters everywhere, so 7-byte pieces split characters.
    Rule::text("ünïcödé — 日本語のテキスト — emoji 🚀🚀🚀 done")
        .then_tool_use("Write", serde_json::json!({"content": "çà et là"}))
}

#[tokio::test]
async fn chunked_bytes_are_the_same_bytes() {
    let whole = FakeModelServer::start(Scenario::with_rules([rule()]))
        .await
        .expect("start");
    let chunked = FakeModelServer::start(
        Scenario::with_rules([rule()])
            .chunk_size(7)
            .chunk_delay_ms(1),
    )
    .await
    .expect("start");
    let body = user_body("write", true);
    let (_, _, expected) = send(anthropic_request(&whole, &body)).await;
    let pieces = send_pieces(anthropic_request(&chunked, &body)).await;
    assert!(pieces.len() > 1, "a paced body arrives in several reads");
    let mid_char = pieces.iter().any(|p| std::str::from_utf8(p).is_err());
    assert!(mid_char, "some reads end inside a UTF-8 character");
    assert_eq!(pieces.concat(), expected);
    let message = accumulate(&anthropic_events(&expected));
    assert_eq!(message.content.len(), 2);
}

#[tokio::test]
async fn rule_pacing_overrides_the_scenario() {
    let server = FakeModelServer::start(Scenario::with_rules([rule()
        .chunk_size(3)
        .chunk_delay_ms(1)]))
    .await
    .expect("start");
    let pieces = send_pieces(anthropic_request(&server, &user_body("write", true))).await;
    assert!(pieces.iter().all(|p| !p.is_empty()));
    assert!(pieces.len() > 1);
    let all = pieces.concat();
    assert_eq!(accumulate(&anthropic_events(&all)).content.len(), 2);
}

#[tokio::test]
async fn openai_stream_survives_chunking() {
    let server = FakeModelServer::start(Scenario::with_rules([rule()]).chunk_size(5))
        .await
        .expect("start");
    let body = serde_json::json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let pieces = send_pieces(openai_request(&server, &body)).await;
    let (chunks, done) = openai_chunks(&pieces.concat());
    assert!(done);
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "ünïcödé — 日本語のテキスト — emoji 🚀🚀🚀 done");
}
