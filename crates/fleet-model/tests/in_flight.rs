//! `FLEET_MAX_MODEL_REQUESTS` bounds the model requests one process has in flight, across
//! clients. Its own test binary: the bound is read once per process.

use crate::common;

use common::{options, run};
use fleet_model::{AnthropicClient, AnthropicConfig, Auth, ModelRequest};
use fleet_protocol::{Message, MessagesRequest};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::Value;

const CAP: usize = 2;
const REQUESTS: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_requests_than_the_bound_are_in_flight_and_all_complete() {
    // Before any request: the bound is read when the first one is made.
    std::env::set_var("FLEET_MAX_MODEL_REQUESTS", CAP.to_string());
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("requests.jsonl");
    // Each reply waits before it starts, so requests sent together would overlap for long.
    let scenario = Scenario::new()
        .request_log_file(&log)
        .rule(Rule::text("done").delay_ms(300));
    let server = FakeModelServer::start(scenario)
        .await
        .expect("server starts");
    // Two clients: the bound is the process's, not a client's.
    let clients: Vec<AnthropicClient> = (0..2)
        .map(|_| {
            let mut config =
                AnthropicConfig::new(server.base_url(), Auth::ApiKey("sk-test".into()));
            config.http = options(1);
            AnthropicClient::new(config).expect("valid config")
        })
        .collect();
    let runs = (0..REQUESTS).map(|i| {
        let client = &clients[i % clients.len()];
        let body = MessagesRequest::new(
            "claude-sonnet-4-5",
            64,
            vec![Message::user_text(format!("request {i}"))],
        );
        run(client, ModelRequest::from(body))
    });
    let outcomes = futures::future::join_all(runs).await;
    assert!(
        outcomes.iter().all(|(_, done)| done.is_ok()),
        "every request completes: {:?}",
        outcomes.iter().map(|(_, d)| d.is_ok()).collect::<Vec<_>>()
    );

    // A request is in flight at the server from its arrival to its first byte; with the bound
    // a new one is only sent once an earlier one has completed (after its first byte).
    let text = std::fs::read_to_string(&log).expect("request log");
    let (mut open, mut most, mut received) = (0usize, 0usize, 0usize);
    for line in text.lines() {
        let event: Value = serde_json::from_str(line).expect("a JSON log line");
        match event["event"].as_str() {
            Some("received") => {
                received += 1;
                open += 1;
                most = most.max(open);
            }
            Some("first_byte") => open = open.saturating_sub(1),
            _ => {}
        }
    }
    assert_eq!(received, REQUESTS, "{text}");
    assert!(
        most <= CAP,
        "{most} requests in flight at once, bound {CAP}:\n{text}"
    );
}
