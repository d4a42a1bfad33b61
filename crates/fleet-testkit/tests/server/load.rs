use crate::common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use futures::stream::{FuturesUnordered, StreamExt};

/// Every one of 5,000 simultaneous streaming requests completes with the full stream.
/// Bounded by count, not time: the barrier releases all requests together and the rule's
/// short delay keeps every one of them open at once (10,000 sockets on loopback).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_concurrent_streams() {
    const N: usize = 5_000;
    let server = FakeModelServer::start(Scenario::with_rules([Rule::text("ok").delay_ms(100)]))
        .await
        .expect("start");
    // One client per 500 requests so connections spread like independent agents'.
    let clients: Vec<reqwest::Client> = (0..N / 500).map(|_| client()).collect();
    let url = format!("{}/v1/messages", server.base_url());
    let body = user_body("x", true);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(N));
    let mut tasks = FuturesUnordered::new();
    for i in 0..N {
        let req = clients[i % clients.len()]
            .post(&url)
            .header("x-api-key", "k")
            .header("anthropic-version", "2023-06-01")
            .json(&body);
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let resp = req.send().await.expect("sent");
            assert_eq!(resp.status(), 200);
            resp.bytes().await.expect("body")
        }));
    }
    let mut completed = 0;
    while let Some(done) = tasks.next().await {
        let raw = done.expect("task");
        let events = anthropic_events(&raw);
        assert_eq!(events.last().map(|e| e.event_name()), Some("message_stop"));
        completed += 1;
    }
    assert_eq!(completed, N);
    assert_eq!(server.request_count(), N);
}
