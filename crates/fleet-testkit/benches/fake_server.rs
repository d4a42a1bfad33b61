//! Requests per second of the fake model server with 1,000 concurrent streaming clients.
//!
//! `cargo bench -p fleet-testkit` (plain `main`, no harness). The client runs in the same
//! process and shares the machine, so the figure is a floor for the server alone. Each
//! request is a complete Anthropic SSE stream, read to its last byte.

use fleet_testkit::{FakeModelServer, Rule, Scenario};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONCURRENCY: usize = 1_000;
const TOTAL: usize = 5_000;

async fn run(server: &FakeModelServer, total: usize) -> Duration {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .expect("client");
    let url = Arc::new(format!("{}/v1/messages", server.base_url()));
    let body = Arc::new(serde_json::json!({
        "model": "claude-bench", "max_tokens": 256, "stream": true,
        "messages": [{"role": "user", "content": "benchmark"}],
    }));
    let started = Instant::now();
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|w| {
            let (client, url, body) = (client.clone(), url.clone(), body.clone());
            tokio::spawn(async move {
                for _ in (w..total).step_by(CONCURRENCY) {
                    let resp = client
                        .post(url.as_str())
                        .header("x-api-key", "bench")
                        .header("anthropic-version", "2023-06-01")
                        .json(&*body)
                        .send()
                        .await
                        .expect("sent");
                    assert_eq!(resp.status(), 200);
                    let bytes = resp.bytes().await.expect("body");
                    assert!(bytes.ends_with(b"data: {\"type\":\"message_stop\"}\n\n"));
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("worker");
    }
    started.elapsed()
}

async fn bench(label: &str, scenario: Scenario) {
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    run(&server, CONCURRENCY).await; // warm up: open the connections
    let elapsed = run(&server, TOTAL).await;
    let rps = TOTAL as f64 / elapsed.as_secs_f64();
    println!(
        "fake_server/{label}: {TOTAL} streaming requests, {CONCURRENCY} concurrent, {:.2}s: {rps:.0} requests/s",
        elapsed.as_secs_f64()
    );
    assert_eq!(server.request_count(), TOTAL + CONCURRENCY);
    server.shutdown().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let reply = "A short scripted answer, streamed as several text deltas.";
        bench(
            "one-write-per-event",
            Scenario::with_rules([Rule::text(reply)]),
        )
        .await;
        bench(
            "16-byte-writes",
            Scenario::with_rules([Rule::text(reply)]).chunk_size(16),
        )
        .await;
    });
}
