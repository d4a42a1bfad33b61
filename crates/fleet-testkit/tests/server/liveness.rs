//! Faults a liveness soak needs (a stall mid-stream, a TCP reset) and the request event log
//! that lets a hang be read from the server's side.

use crate::common::{anthropic_events, anthropic_request, user_body};
use fleet_testkit::wait::{wait_for_async, within, WAIT};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use futures::StreamExt;
use serde_json::Value;
use std::path::PathBuf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A fresh log path under the system's temporary folder.
fn log_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fleet-testkit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    let path = dir.join(format!("{name}.jsonl"));
    let _ = std::fs::remove_file(&path);
    path
}

fn log_lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each log line is JSON"))
        .collect()
}

/// Waits until the log holds a `finished` line for request `seq` and returns it.
async fn finished(path: &PathBuf, seq: u64) -> Value {
    wait_for_async(WAIT, "the request log's finished line", || {
        log_lines(path)
            .into_iter()
            .find(|l| l["event"] == "finished" && l["seq"] == seq)
    })
    .await
}

#[tokio::test]
async fn a_stall_mid_stream_delays_the_rest_and_the_log_tells_the_whole_story() {
    let log = log_path("stall");
    let rule = Rule::text("a reply that pauses in the middle").stall_after_events(3, 50);
    let server = FakeModelServer::start(Scenario::with_rules([rule]).request_log_file(&log))
        .await
        .expect("start");
    let resp = anthropic_request(&server, &user_body("hi", true))
        .send()
        .await
        .expect("headers");
    let body = resp.bytes().await.expect("the whole body, after the pause");
    let events = anthropic_events(&body);
    assert!(events.len() > 3, "{events:?}");

    let done = finished(&log, 1).await;
    assert_eq!(done["ended"], "complete", "{done}");
    assert_eq!(done["writes"], events.len(), "{done}");
    assert_eq!(done["bytes"], body.len(), "{done}");
    let lines = log_lines(&log);
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    assert_eq!(kinds, ["received", "first_byte", "finished"]);
    assert_eq!(lines[0]["stream"], true);
    assert_eq!(lines[0]["rule"], "rules[0]");
    assert_eq!(lines[0]["conn"], 1);
    assert!(
        lines[0]["peer_port"].as_u64().unwrap_or(0) > 0,
        "{}",
        lines[0]
    );
}

#[tokio::test]
async fn a_client_that_gives_up_on_a_stalled_stream_is_logged_as_gone() {
    let log = log_path("gone");
    let rule = Rule::text("never finished").stall_forever_after_events(2);
    let server = FakeModelServer::start(Scenario::with_rules([rule]).request_log_file(&log))
        .await
        .expect("start");
    let resp = anthropic_request(&server, &user_body("hi", true))
        .send()
        .await
        .expect("headers");
    let mut stream = resp.bytes_stream();
    let mut received = Vec::new();
    while anthropic_events(&received).len() < 2 {
        let piece = within(WAIT, "the events before the stall", stream.next())
            .await
            .expect("the stream goes on")
            .expect("a piece");
        received.extend_from_slice(&piece);
    }
    drop(stream);
    let done = finished(&log, 1).await;
    assert_eq!(done["ended"], "client_gone", "{done}");
    assert_eq!(done["writes"], 2, "{done}");
}

#[tokio::test]
async fn a_reset_fault_ends_the_connection_with_econnreset() {
    let log = log_path("reset");
    let rule = Rule::text("cut by a reset").reset_after_events(2);
    let server = FakeModelServer::start(Scenario::with_rules([rule]).request_log_file(&log))
        .await
        .expect("start");
    let body = serde_json::to_string(&user_body("hi", true)).expect("json");
    let mut tcp = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.expect("send");
    let mut buf = vec![0u8; 64 * 1024];
    let error = within(WAIT, "the end of the connection", async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) => return None,
                Ok(_) => continue,
                Err(e) => return Some(e),
            }
        }
    })
    .await;
    let kind = error.map(|e| e.kind());
    assert_eq!(
        kind,
        Some(std::io::ErrorKind::ConnectionReset),
        "a reset, not an end of file"
    );
    let done = finished(&log, 1).await;
    assert_eq!(done["ended"], "reset_by_fault", "{done}");
    assert_eq!(done["writes"], 2, "{done}");
}

#[test]
fn the_new_faults_read_from_yaml_and_refuse_half_written_ones() {
    let scenario = Scenario::from_yaml_str(
        "rules:\n  - respond: [{text: a}]\n    fault: {stall_after_events: 2, stall_ms: 10}\n  - respond: [{text: b}]\n    fault: {stall_after_events: 1}\n  - respond: [{text: c}]\n    fault: {reset_after_events: 3}\n",
    )
    .expect("valid");
    assert_eq!(scenario.rules[0], Rule::text("a").stall_after_events(2, 10));
    assert_eq!(
        scenario.rules[1],
        Rule::text("b").stall_forever_after_events(1)
    );
    assert_eq!(scenario.rules[2], Rule::text("c").reset_after_events(3));
    let err =
        Scenario::from_yaml_str("rules:\n  - respond: [{text: a}]\n    fault: {stall_ms: 10}\n")
            .expect_err("stall_ms alone");
    assert!(err.to_string().contains("stall_ms"), "{err}");
}
