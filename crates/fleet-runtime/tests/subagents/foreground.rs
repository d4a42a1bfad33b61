//! Foreground subagents: results, events, transcripts, costs, request ids, models.

use super::harness::*;
use fleet_protocol::{AgentEvent, EventKind};
use fleet_store::FleetHome;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;

#[tokio::test]
async fn a_foreground_subagent_runs_reports_and_leaves_a_transcript() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("CHILD-ANSWER: the bug is in parse.rs").when_system_contains(CHILD),
        agent_call(json!({"description": "find bug", "prompt": "Find the bug", "subagent_type": "general-purpose"}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
        Rule::text("DONE").when_system_contains(PARENT).when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, spawner) = run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;

    let results = main_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].result, "DONE");
    // The child's events come through, stamped with the call that started it.
    let call_id = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::AssistantBlock {
                block: fleet_protocol::ContentBlock::ToolUse { id, .. },
                ..
            } if e.agent.is_main() => Some(id.clone()),
            _ => None,
        })
        .unwrap();
    let child: Vec<&AgentEvent> = events.iter().filter(|e| !e.agent.is_main()).collect();
    assert!(!child.is_empty());
    assert!(child
        .iter()
        .all(|e| e.agent.parent_tool_use_id.as_deref() == Some(call_id.as_str())));
    let label = child[0].agent.subagent.as_ref().unwrap();
    assert_eq!(
        (label.subagent_type.as_str(), label.description.as_str()),
        ("general-purpose", "find bug")
    );
    // The parent got the child's answer as the tool result.
    let tool_result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult(r) if e.agent.is_main() => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!tool_result.is_error);
    assert!(tool_result.content.contains("CHILD-ANSWER"));
    let structured = tool_result.structured.unwrap();
    assert_eq!(structured["status"], "completed");
    assert_eq!(structured["result"], "CHILD-ANSWER: the bug is in parse.rs");
    let child_id = structured["agentId"].as_str().unwrap().to_string();
    assert_eq!(child[0].agent.agent_id, child_id);

    // The child's conversation is on disk under the session.
    let path = fleet_store::SidechainWriter::path_for(
        &FleetHome::at(home.path()),
        dir.path(),
        "sess-1",
        &child_id,
    );
    let loaded = fleet_store::Transcript::load(&path).unwrap();
    let messages = loaded.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].text(), "Find the bug");

    // Cost is kept per agent and rolled up.
    let tree = results[0].tree.clone().unwrap();
    assert_eq!(tree.agents.len(), 2);
    let sum: f64 = tree.agents.iter().filter_map(|a| a.cost_usd).sum();
    assert!(sum > 0.0);
    assert!((tree.total_cost_usd - sum).abs() < 1e-9);
    assert!(
        tree.total_cost_usd > results[0].total_cost_usd,
        "the tree costs more than the main agent alone"
    );
    assert_eq!(tree.subagent_stats.spawned, 1);
    assert_eq!(tree.subagent_stats.completed, 1);
    assert_eq!(tree.subagent_stats.by_type.get("general-purpose"), Some(&1));
    assert_eq!(
        spawner.ledger().agent(&child_id).unwrap().status,
        "completed"
    );
}

#[tokio::test]
async fn the_invoking_request_id_goes_with_the_childs_first_request_only() {
    let server = FakeModelServer::start(delegation(
        [
            Rule::tool_use("Glob", json!({"pattern": "*.none"}))
                .when_system_contains(CHILD)
                .when_tool_result(false),
            child_done(),
        ],
        json!({"description": "look", "prompt": "Look around"}),
    ))
    .await
    .unwrap();
    run_throwaway(&server, Setup::default(), "go").await;
    let log = server.requests();
    let is_child = |r: &fleet_testkit::RecordedRequest| r.body.to_string().contains(CHILD);
    let parent_first = log.iter().find(|r| !is_child(r)).unwrap();
    // The fake server's request ids are `req_fake_<seq>`.
    let parent_request_id = format!("req_fake_{:06}", parent_first.seq);
    let child: Vec<_> = log.iter().filter(|r| is_child(r)).collect();
    assert_eq!(child.len(), 2);
    assert_eq!(
        child[0].header("x-fleet-invoking-request-id"),
        Some(parent_request_id.as_str())
    );
    assert_eq!(child[1].header("x-fleet-invoking-request-id"), None);
    assert!(log
        .iter()
        .filter(|r| !is_child(r))
        .all(|r| r.header("x-fleet-invoking-request-id").is_none()));
}

#[tokio::test]
async fn fleet_subagent_model_wins_over_the_call_and_the_definition() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(
            json!({"description": "x", "prompt": "x", "subagent_type": "Explore", "model": "opus"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The call's model beats the definition's (Explore: haiku).
    run(
        tree(&server, dir.path(), home.path(), Setup::default()),
        "go",
    )
    .await;
    let child_model = |server: &FakeModelServer| {
        server
            .requests()
            .into_iter()
            .find(|r| r.body.to_string().contains(CHILD))
            .map(|r| r.body["model"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        child_model(&server).contains("opus"),
        "{}",
        child_model(&server)
    );
    // FLEET_SUBAGENT_MODEL beats both.
    let server2 = FakeModelServer::start(Scenario::with_rules([
        Rule::text("child done").when_system_contains(CHILD),
        agent_call(
            json!({"description": "x", "prompt": "x", "subagent_type": "Explore", "model": "opus"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let setup = Setup {
        model_override: Some("claude-custom-1".into()),
        ..Setup::default()
    };
    run(tree(&server2, dir.path(), home.path(), setup), "go").await;
    assert_eq!(child_model(&server2), "claude-custom-1");
}

#[tokio::test]
async fn a_child_whose_model_fails_is_a_failed_result_not_a_failed_parent() {
    let server = FakeModelServer::start(delegation(
        [Rule::text("unused")
            .fault_status(400)
            .fault_message("prompt is too long")
            .when_system_contains(CHILD)],
        json!({"description": "big job", "prompt": "do it"}),
    ))
    .await
    .unwrap();
    let (events, spawner) = run_throwaway(&server, Setup::default(), "go").await;
    let failed = tool_results_of(&events, true).remove(0);
    assert!(failed.is_error);
    assert!(
        failed.content.contains("did not finish") && failed.content.contains("prompt is too long"),
        "{}",
        failed.content
    );
    assert_eq!(failed.structured.unwrap()["status"], "failed");
    assert_eq!(main_results(&events)[0].result, "DONE");
    let stats = spawner.ledger().stats();
    assert_eq!((stats.completed, stats.failed), (0, 1));
}
