//! Forks: what they are sent (the parent's request, then the same placeholders, then their own
//! directive), that they run in the background, and that they cannot fork.

use super::harness::*;
use fleet_protocol::EventKind;
use fleet_runtime::subagent::{Orchestration, FORK_TAG, PLACEHOLDER_RESULT};
use fleet_testkit::{FakeModelServer, RecordedRequest, Rule, Scenario};
use serde_json::{json, Value};
use std::path::Path;

const FILE_MARK: &str = "HISTORY-FILE-CONTENT";

fn fork_setup() -> Setup<'static> {
    Setup {
        orchestration: Orchestration::Fork,
        ..Setup::default()
    }
}

/// The main agent reads a file, then forks twice in one reply; each fork answers at once.
fn two_forks(dir: &Path, fork_reply: Vec<Rule>) -> Scenario {
    let mut rules = fork_reply;
    rules.extend([
        Rule::text("MAIN-DONE")
            .when_system_contains(PARENT)
            .when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING")
            .when_system_contains(PARENT)
            .when_tool_result_contains("Forked"),
        agent_call(json!({"description": "alpha", "prompt": "DIRECTIVE-ALPHA"}))
            .then_tool_use(
                "Agent",
                json!({"description": "beta", "prompt": "DIRECTIVE-BETA"}),
            )
            .when_system_contains(PARENT)
            .when_tool_result_contains(FILE_MARK),
        Rule::tool_use("Read", json!({"file_path": dir.join("notes.txt")}))
            .when_system_contains(PARENT)
            .when_tool_result(false),
    ]);
    Scenario::with_rules(rules)
}

fn is_fork_request(r: &RecordedRequest) -> bool {
    last_user_text(&r.body).contains(FORK_TAG)
}

fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

/// The body without `cache_control` marks, which move from request to request by design.
fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

#[tokio::test]
async fn sibling_forks_send_the_parents_request_then_identical_bytes_up_to_their_directives() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeModelServer::start(two_forks(
        dir.path(),
        vec![Rule::text("fork report").when_last_user_contains(FORK_TAG)],
    ))
    .await
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), format!("{FILE_MARK}\n")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), fork_setup()), "go").await;

    let requests = server.requests();
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork_request(r)).collect();
    assert_eq!(forks.len(), 2, "two forks, one request each");
    // The parent's request whose reply made the Agent calls.
    let parent = requests
        .iter()
        .find(|r| {
            !is_fork_request(r)
                && r.body.to_string().contains(FILE_MARK)
                && !r.body.to_string().contains("Forked")
        })
        .expect("the parent's forking request");

    // Byte-identical up to the directive: with the directives swapped out, the bodies are the
    // same string.
    let bodies: Vec<String> = forks
        .iter()
        .map(|r| {
            serde_json::to_string(&r.body)
                .unwrap()
                .replace("DIRECTIVE-ALPHA", "<D>")
                .replace("DIRECTIVE-BETA", "<D>")
        })
        .collect();
    assert_eq!(bodies[0], bodies[1]);
    let directives: Vec<bool> = forks
        .iter()
        .map(|r| last_user_text(&r.body).contains("DIRECTIVE-ALPHA"))
        .collect();
    assert!(directives.contains(&true) && directives.contains(&false));

    // Each fork's request begins with exactly the parent's: model, system, tools, messages.
    for fork in &forks {
        for key in ["model", "system", "tools", "max_tokens"] {
            assert_eq!(
                unmarked(&fork.body[key]),
                unmarked(&parent.body[key]),
                "{key}"
            );
        }
        let parent_messages = parent.body["messages"].as_array().unwrap();
        let fork_messages = fork.body["messages"].as_array().unwrap();
        let n = parent_messages.len();
        assert_eq!(fork_messages.len(), n + 2);
        assert_eq!(
            unmarked(&Value::Array(fork_messages[..n].to_vec())),
            unmarked(&Value::Array(parent_messages.clone()))
        );
        // Then the parent's reply with both calls, then the placeholders and the directive.
        let reply = &fork_messages[n];
        assert_eq!(reply["role"], "assistant");
        let call_ids: Vec<&str> = reply["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["id"].as_str().unwrap())
            .collect();
        assert_eq!(call_ids.len(), 2);
        let turn = fork_messages[n + 1]["content"].as_array().unwrap();
        assert_eq!(turn.len(), 3);
        for (block, id) in turn.iter().zip(&call_ids) {
            assert_eq!(block["type"], "tool_result");
            assert_eq!(block["tool_use_id"], *id);
            assert_eq!(block["content"], PLACEHOLDER_RESULT);
        }
        assert!(turn[2]["text"].as_str().unwrap().starts_with(FORK_TAG));
    }

    // Forks ran in the background and reported; the parent heard from both.
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskStarted(t) => Some(t.subagent_type.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["fork", "fork"]);
    let results = main_results(&events);
    assert_eq!(results.last().unwrap().result, "MAIN-DONE");
    assert_eq!(spawner.ledger().stats().by_type.get("fork"), Some(&2));

    // A fork's transcript holds what it inherited, so it can be resumed from it.
    let launch = tool_results_of(&events, true)
        .into_iter()
        .find_map(|r| r.structured.filter(|s| s["status"] == "async_launched"))
        .unwrap();
    let transcript = std::fs::read_to_string(launch["outputFile"].as_str().unwrap()).unwrap();
    assert!(transcript.lines().next().unwrap().contains("\"go\""));
    assert!(transcript.contains(FILE_MARK));
}

#[tokio::test]
async fn a_fork_cannot_fork_but_the_tool_stays_in_its_pool() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeModelServer::start(two_forks(
        dir.path(),
        vec![
            Rule::text("FORK-CARRIED-ON").when_tool_result_contains("not available inside a fork"),
            agent_call(json!({"description": "again", "prompt": "fork more"}))
                .when_last_user_contains(FORK_TAG),
        ],
    ))
    .await
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), format!("{FILE_MARK}\n")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (events, spawner) = run(tree(&server, dir.path(), home.path(), fork_setup()), "go").await;

    let refusals: Vec<_> = tool_results_of(&events, false)
        .into_iter()
        .filter(|r| r.is_error && r.content.contains("not available inside a fork"))
        .collect();
    assert_eq!(refusals.len(), 2, "each fork's attempt was refused");
    let notified: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskNotified(n) => Some(n.result.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notified, ["FORK-CARRIED-ON", "FORK-CARRIED-ON"]);
    assert_eq!(spawner.ledger().stats().spawned, 2, "no grandchild started");
    // The fork kept the Agent tool: its requests offer the parent's exact tools.
    let fork_tools: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| is_fork_request(r))
        .map(|r| unmarked(&r.body["tools"]))
        .collect();
    assert!(fork_tools[0]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "Agent"));
}

#[tokio::test]
async fn asking_for_a_fork_with_forking_off_names_the_switch() {
    let server = FakeModelServer::start(delegation(
        [],
        json!({"description": "x", "prompt": "y", "subagent_type": "fork"}),
    ))
    .await
    .unwrap();
    let (events, spawner) = run_throwaway(&server, Setup::default(), "go").await;
    let result = tool_results_of(&events, true).remove(0);
    assert!(result.is_error);
    assert!(
        result.content.contains("FLEET_FORK_SUBAGENT=1"),
        "{}",
        result.content
    );
    assert_eq!(spawner.ledger().stats().spawned, 0);
}
