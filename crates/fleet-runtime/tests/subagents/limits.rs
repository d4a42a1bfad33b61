//! Limits: depth, concurrency, budget.

use super::common::Rendezvous;
use super::harness::*;
use fleet_runtime::SpawnLimits;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::Tool;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Barrier;

#[tokio::test]
async fn spawning_deeper_than_the_limit_is_refused_with_a_clear_result() {
    let server = FakeModelServer::start(delegation(
        [
            agent_call(json!({"description": "deeper", "prompt": "go deeper"}))
                .when_system_contains(CHILD)
                .when_tool_result(false),
            child_done(),
        ],
        json!({"description": "first", "prompt": "start"}),
    ))
    .await
    .unwrap();
    let setup = Setup {
        limits: SpawnLimits {
            max_depth: 1,
            max_concurrent: 20,
        },
        ..Setup::default()
    };
    let (events, spawner) = run_throwaway(&server, setup, "go").await;
    let refused = tool_results_of(&events, false).remove(0);
    assert!(refused.is_error);
    assert!(
        refused.content.contains("nesting limit is 1"),
        "{}",
        refused.content
    );
    let stats = spawner.ledger().stats();
    assert_eq!(
        (stats.spawned, stats.refused.depth_limit, stats.max_depth),
        (1, 1, 1)
    );
    assert_eq!(main_results(&events)[0].result, "DONE");
}

#[tokio::test]
async fn agent_calls_of_one_reply_run_together_up_to_the_concurrency_limit() {
    let three = |n: usize| {
        (0..n).fold(Rule::new(), |rule, i| {
            rule.then_tool_use(
                "Agent",
                json!({"description": format!("job {i}"), "prompt": format!("job {i}")}),
            )
        })
    };
    // Limit 3: the three children meet at a 3-party barrier, which only works if they overlap.
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use("Rendezvous", json!({"name": "x"}))
            .when_system_contains(CHILD)
            .when_tool_result(false),
        child_done(),
        three(3)
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let barrier: Arc<dyn Tool> = Arc::new(Rendezvous {
        barrier: Arc::new(Barrier::new(3)),
    });
    let setup = Setup {
        extra_tools: vec![barrier],
        ..Setup::default()
    };
    let (events, _) = run_throwaway(&server, setup, "go").await;
    let met: Vec<String> = tool_results_of(&events, false)
        .into_iter()
        .map(|r| r.content)
        .collect();
    assert_eq!(met, ["met:x", "met:x", "met:x"]);

    // Limit 2: the third call of the same reply is refused, the others complete.
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done")
            .when_system_contains(CHILD)
            .delay_ms(400),
        three(3)
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let setup = Setup {
        limits: SpawnLimits {
            max_depth: 3,
            max_concurrent: 2,
        },
        ..Setup::default()
    };
    let (events, spawner) = run_throwaway(&server, setup, "go").await;
    let results = tool_results_of(&events, true);
    let refused: Vec<_> = results.iter().filter(|r| r.is_error).collect();
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].content.contains("2 are already running"),
        "{}",
        refused[0].content
    );
    let stats = spawner.ledger().stats();
    assert_eq!((stats.completed, stats.refused.concurrency_limit), (2, 1));
}

#[tokio::test]
async fn the_budget_binds_the_whole_tree() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(json!({"description": "x", "prompt": "x"}))
            .when_system_contains(PARENT)
            .when_tool_result(false)
            .input_tokens(100_000),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let setup = Setup {
        budget: Some(0.01),
        ..Setup::default()
    };
    let (events, spawner) = run_throwaway(&server, setup, "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(
        refused.is_error && refused.content.contains("budget"),
        "{}",
        refused.content
    );
    assert_eq!(spawner.ledger().stats().refused.budget, 1);
    assert_eq!(
        main_results(&events).last().unwrap().subtype,
        fleet_protocol::ResultSubtype::ErrorMaxBudgetUsd
    );
}
