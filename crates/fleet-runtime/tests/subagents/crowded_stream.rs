//! A fan-out whose events outnumber the stream's room many times over still ends.
//!
//! The reproducer of the 10,000-agent hang, made small and deterministic: the stream holds one
//! event, read a little slower than it fills, and 200 children start in one reply. Each child announces its start from inside the
//! parent's batch of calls; when the parent waited for room to report a result without also
//! driving that batch, the room went to announcements that were never finished, and the whole
//! tree stopped with the stream empty and no room left. Each wait for the next event is bounded
//! (`fleet_testkit::WAIT`), so a regression fails here instead of hanging.

use super::harness::*;
use fleet_runtime::SpawnLimits;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;

const CHILDREN: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_through_a_stream_of_one_event_ends_with_every_child_reported() {
    let calls = (0..CHILDREN).fold(Rule::new(), |rule, i| {
        rule.then_tool_use(
            "Agent",
            json!({"description": format!("job {i}"), "prompt": format!("job {i}")}),
        )
    });
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("job done").when_system_contains(CHILD),
        Rule::text("DONE").when_tool_result(true),
        calls,
    ]))
    .await
    .unwrap();
    let setup = Setup {
        limits: SpawnLimits {
            max_depth: 2,
            max_concurrent: CHILDREN,
        },
        event_buffer: Some(1),
        ..Setup::default()
    };
    for round in 0..3 {
        let (events, spawner) = run_slowly(&server, setup_like(&setup)).await;
        let results = tool_results_of(&events, true);
        assert_eq!(results.len(), CHILDREN, "round {round}");
        assert!(results.iter().all(|r| !r.is_error), "round {round}");
        assert_eq!(spawner.ledger().stats().completed, CHILDREN as u64);
        assert_eq!(main_results(&events)[0].result, "DONE");
    }
}

/// Runs the session, reading its events a little slower than they come, so the stream stays
/// full while the children start (the condition of the hang).
async fn run_slowly(
    server: &FakeModelServer,
    setup: Setup<'_>,
) -> (
    Vec<fleet_protocol::AgentEvent>,
    std::sync::Arc<fleet_runtime::Spawner>,
) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tree = tree(server, dir.path(), home.path(), setup);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(fleet_protocol::Message::user_text("go"))
        .await
        .unwrap();
    drop(tx);
    let spawner = tree.spawner.clone();
    let mut handle = fleet_runtime::Session::spawn_with(
        tree.agent,
        rx,
        tree.sink,
        tree.events,
        Some(tree.spawner),
    );
    let mut events = Vec::new();
    while let Some(event) = fleet_testkit::within(
        fleet_testkit::WAIT,
        "the session's next event",
        handle.recv(),
    )
    .await
    {
        events.push(event);
        tokio::time::sleep(std::time::Duration::from_micros(300)).await;
    }
    (events, spawner)
}

fn setup_like(setup: &Setup<'_>) -> Setup<'static> {
    Setup {
        limits: setup.limits,
        event_buffer: setup.event_buffer,
        ..Setup::default()
    }
}
