//! A fan-out wider than the model's places builds only as many children as can soon be
//! answered (two per place); the rest start as permits come back, and every permit does.
//!
//! `FLEET_MAX_MODEL_REQUESTS` is read once per process, and nextest runs each test in its own.

use super::harness::*;
use fleet_protocol::EventKind;
use fleet_runtime::Session;
use fleet_runtime::SpawnLimits;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;
use std::collections::HashSet;

const CHILDREN: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_beyond_two_per_model_place_wait_unbuilt_until_one_is_answered() {
    // One model place: two start permits.
    std::env::set_var("FLEET_MAX_MODEL_REQUESTS", "1");
    let calls = (0..CHILDREN).fold(Rule::new(), |rule, i| {
        rule.then_tool_use(
            "Agent",
            json!({"description": format!("job {i}"), "prompt": format!("job {i}")}),
        )
    });
    let server = FakeModelServer::start(Scenario::with_rules([
        // The first child's reply is slow: meanwhile every unadmitted child would have started.
        Rule::text("job done")
            .when_system_contains(CHILD)
            .times(1)
            .delay_ms(1500),
        Rule::text("job done").when_system_contains(CHILD),
        Rule::text("DONE").when_tool_result(true),
        calls,
    ]))
    .await
    .unwrap();
    // Twice in one process: a permit that did not come back would hang the second round
    // (each wait for an event is bounded, so it fails instead).
    for round in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let setup = Setup {
            limits: SpawnLimits {
                max_depth: 2,
                max_concurrent: CHILDREN,
            },
            ..Setup::default()
        };
        let tree = tree(&server, dir.path(), home.path(), setup);
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tx.send(fleet_protocol::Message::user_text("go"))
            .await
            .unwrap();
        drop(tx);
        let mut handle = Session::spawn_with(
            tree.agent,
            rx,
            tree.sink,
            tree.events,
            Some(tree.spawner.clone()),
        );
        let mut started = HashSet::new();
        let mut before_first_answer = None;
        let mut events = Vec::new();
        while let Some(event) =
            fleet_testkit::within(fleet_testkit::WAIT, "the next event", handle.recv()).await
        {
            if !event.agent.is_main() {
                let answered = matches!(
                    event.kind,
                    EventKind::TextDelta(_) | EventKind::AssistantBlock { .. }
                );
                if answered && before_first_answer.is_none() {
                    before_first_answer = Some(started.len());
                }
                started.insert(event.agent.agent_id.clone());
            }
            events.push(event);
        }
        let seen = before_first_answer.unwrap_or(usize::MAX);
        // Two admitted; a third may slip in between the first answer's release of a permit
        // and that answer's event reaching the stream.
        assert!(
            seen <= 3,
            "round {round}: {seen} children started before any was answered"
        );
        assert_eq!(started.len(), CHILDREN, "round {round}: every child ran");
        let results = tool_results_of(&events, true);
        assert_eq!(results.len(), CHILDREN, "round {round}");
        assert!(results.iter().all(|r| !r.is_error), "round {round}");
        assert_eq!(main_results(&events)[0].result, "DONE", "round {round}");
    }
}
