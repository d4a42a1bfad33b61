//! The worker's event publisher against a real nats-server that dies mid-job: the queue stays
//! within its bounds (the writer is held back instead), and once the broker is back every line
//! is stored, in order, once, with a notice saying the output was held back.
#![allow(clippy::unwrap_used)]

use fleet_remote::worker::publish::{Events, Gauge, Limits};
use fleet_remote::{Broker, Remote};
use fleet_testkit::NatsServer;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(60);

/// Waits (up to [`WAIT`]) for `ready`, checking every few milliseconds.
async fn wait_for(what: &str, ready: impl Fn() -> bool) {
    tokio::time::timeout(WAIT, async {
        while !ready() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

/// Writes lines `{"n": from}` … `{"n": to - 1}`, counting each once `line` returned, then
/// waits until all are stored.
fn produce(
    mut events: Events,
    from: u64,
    to: u64,
    written: Arc<AtomicU64>,
) -> tokio::task::JoinHandle<Events> {
    tokio::spawn(async move {
        for n in from..to {
            events.line(json!({"n": n}).to_string()).await;
            written.store(n + 1, Ordering::Release);
        }
        events.flush().await;
        events
    })
}

async fn stored_numbers(url: &str, task: &str) -> (Vec<u64>, Vec<serde_json::Value>) {
    let remote = Remote::connect(url).await.unwrap();
    let logs = remote.logs(task).await.unwrap();
    let numbers = logs.iter().filter_map(|e| e.line["n"].as_u64()).collect();
    let notices = logs
        .into_iter()
        .map(|e| e.line)
        .filter(|l| l["type"] == "fleet_remote")
        .collect();
    (numbers, notices)
}

fn assert_within(gauge: &Gauge, limits: Limits) {
    assert!(
        gauge.queued() <= limits.lines as u64,
        "{} lines wait for the broker, over the bound of {}",
        gauge.queued(),
        limits.lines
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_holds_the_output_back_in_a_bounded_queue_and_loses_none() {
    let Some(mut server) = NatsServer::start() else {
        return;
    };
    let broker = Broker::connect(&server.url()).await.unwrap();
    let task = "r00000000000c0001";
    let limits = Limits {
        lines: 64,
        bytes: 1 << 20,
    };
    let mut events = Events::start_with(&broker, task, 1, CancellationToken::new(), limits);
    let gauge = events.gauge();
    events.line(json!({"n": 0}).to_string()).await;
    tokio::time::timeout(WAIT, events.flush()).await.unwrap();
    assert_eq!(gauge.stored(), 1);

    // The broker dies mid-job; the job goes on writing far more than the queue holds.
    server.kill();
    const TOTAL: u64 = 1000;
    let written = Arc::new(AtomicU64::new(1));
    let producer = produce(events, 1, TOTAL, written.clone());
    wait_for("the held-back writer to be reported", || {
        gauge.reported() >= 1
    })
    .await;
    let held_at = written.load(Ordering::Acquire);
    assert_within(&gauge, limits);
    assert!(
        held_at <= 1 + limits.lines as u64,
        "the writer got {held_at} lines out with the broker away and room for {}",
        limits.lines
    );
    assert!(!producer.is_finished(), "the writer is held back");
    // Said once while the broker stays away. It may be held back more than once: a line in
    // flight when the broker died can still be stored after the queue filled up (under load),
    // giving its room back to the writer, who fills it and waits again — within the bound.
    assert_eq!(gauge.reported(), 1);
    assert!(gauge.pauses() >= 1);
    assert_within(&gauge, limits);
    assert!(!producer.is_finished(), "the writer is still held back");

    server.restart();
    let events = tokio::time::timeout(WAIT, producer)
        .await
        .expect("the writer finished once the broker was back")
        .unwrap();
    assert_eq!(gauge.queued(), 0);
    assert!(
        gauge.peak() <= limits.lines as u64,
        "at most {} lines ever waited (the bound is {})",
        gauge.peak(),
        limits.lines
    );

    let (numbers, notices) = stored_numbers(&server.url(), task).await;
    assert_eq!(
        numbers,
        (0..TOTAL).collect::<Vec<_>>(),
        "every line stored once, in order"
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    let notice = &notices[0];
    assert_eq!(notice["event"], "output_paused");
    assert!(notice["queued"].as_u64().unwrap() <= limits.lines as u64);
    assert!(notice["paused_ms"].is_u64());
    assert!(
        notice["message"]
            .as_str()
            .unwrap()
            .contains("nothing was lost"),
        "{notice}"
    );
    assert_eq!(events.stored(), TOTAL + 1, "the lines and the notice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_lines_are_bounded_by_bytes_too_and_a_line_over_the_bound_still_goes() {
    let Some(mut server) = NatsServer::start() else {
        return;
    };
    let broker = Broker::connect(&server.url()).await.unwrap();
    let task = "r00000000000c0002";
    let limits = Limits {
        lines: 1000,
        bytes: 64 * 1024,
    };
    let events = Events::start_with(&broker, task, 1, CancellationToken::new(), limits);
    let gauge = events.gauge();
    server.kill();
    // 16 KiB lines: four fill the byte bound long before the line bound.
    let filler = "x".repeat(16 * 1024);
    let written = Arc::new(AtomicU64::new(0));
    let (tx, count) = (filler.clone(), written.clone());
    let producer = tokio::spawn(async move {
        let mut events = events;
        for n in 0..40u64 {
            events.line(json!({"n": n, "pad": tx}).to_string()).await;
            count.store(n + 1, Ordering::Release);
        }
        // One line over the whole byte bound: it goes alone.
        events
            .line(json!({"n": 40, "pad": "y".repeat(200 * 1024)}).to_string())
            .await;
        events.flush().await;
        events
    });
    wait_for("the byte bound to hold the writer back", || {
        gauge.reported() >= 1
    })
    .await;
    let held_at = written.load(Ordering::Acquire);
    assert!(
        held_at <= 4,
        "{held_at} lines of 16 KiB queued within a 64 KiB bound"
    );
    server.restart();
    tokio::time::timeout(WAIT, producer)
        .await
        .expect("the writer finished once the broker was back")
        .unwrap();
    let (numbers, notices) = stored_numbers(&server.url(), task).await;
    assert_eq!(numbers, (0..=40).collect::<Vec<_>>());
    assert!(notices.iter().all(|n| n["event"] == "output_paused"));
    assert!(!notices.is_empty());
}
