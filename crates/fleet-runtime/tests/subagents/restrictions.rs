//! What a child may do: never more than its parent; definitions narrowing it further.

use super::harness::*;
use fleet_runtime::definitions::AgentCatalog;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use serde_json::json;

#[tokio::test]
async fn a_child_holds_no_more_permission_than_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "precious").unwrap();
    let child_write = json!({"file_path": dir.path().join("new.txt"), "content": "x"});
    let scenario = |child_call: Rule| {
        Scenario::with_rules([
            child_call.when_system_contains(CHILD).when_tool_result(false),
            Rule::text("child done").when_system_contains(CHILD).when_tool_result(true),
            agent_call(json!({"description": "work", "prompt": "work", "subagent_type": "general-purpose"}))
                .when_system_contains(PARENT)
                .when_tool_result(false),
            Rule::text("DONE").when_system_contains(PARENT).when_tool_result(true),
        ])
    };

    // A plan-mode parent's child cannot write.
    let server = FakeModelServer::start(scenario(Rule::tool_use("Write", child_write.clone())))
        .await
        .unwrap();
    let setup = Setup {
        mode: PermissionMode::Plan,
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let denied = tool_results_of(&events, false).remove(0);
    assert!(denied.is_error, "{}", denied.content);
    assert!(!dir.path().join("new.txt").exists());

    // The parent's deny rule binds the child even in bypassPermissions.
    let server = FakeModelServer::start(scenario(Rule::tool_use(
        "Bash",
        json!({"command": "rm -f keep.txt", "description": "remove"}),
    )))
    .await
    .unwrap();
    let setup = Setup {
        deny: vec!["Bash(rm *)"],
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let denied = tool_results_of(&events, false).remove(0);
    assert!(denied.is_error, "{}", denied.content);
    assert!(dir.path().join("keep.txt").exists());
}

#[tokio::test]
async fn explore_is_not_given_tools_that_change_things() {
    let server = FakeModelServer::start(Scenario::with_rules([
        Rule::tool_use(
            "Edit",
            json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
        )
        .when_system_contains(CHILD)
        .when_tool_result(false),
        child_done(),
        agent_call(
            json!({"description": "explore", "prompt": "explore", "subagent_type": "Explore"}),
        )
        .when_system_contains(PARENT)
        .when_tool_result(false),
        Rule::text("DONE")
            .when_system_contains(PARENT)
            .when_tool_result(true),
    ]))
    .await
    .unwrap();
    let (events, _) = run_throwaway(&server, Setup::default(), "go").await;
    let child_request = server
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains(CHILD))
        .unwrap();
    let tools: Vec<String> = child_request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for read_only in ["Read", "Glob", "Grep", "Bash"] {
        assert!(tools.iter().any(|t| t == read_only), "{tools:?}");
    }
    for changing in ["Edit", "Write", "Agent"] {
        assert!(!tools.iter().any(|t| t == changing), "{tools:?}");
    }
    let refused = tool_results_of(&events, false).remove(0);
    assert!(
        refused.is_error && refused.content.contains("No such tool"),
        "{}",
        refused.content
    );
    // Explore runs on the fast model.
    assert!(child_request.body["model"]
        .as_str()
        .unwrap()
        .contains("haiku"));
}

#[tokio::test]
async fn an_unknown_agent_type_lists_the_available_ones() {
    let server = FakeModelServer::start(Scenario::with_rules([
        agent_call(json!({"description": "x", "prompt": "x", "subagent_type": "nope"}))
            .when_tool_result(false),
        Rule::text("DONE").when_tool_result(true),
    ]))
    .await
    .unwrap();
    let (events, _) = run_throwaway(&server, Setup::default(), "go").await;
    let err = tool_results_of(&events, true).remove(0);
    assert!(err.is_error);
    for name in ["general-purpose", "Explore", "Plan", "verification"] {
        assert!(err.content.contains(name), "{}", err.content);
    }
}

#[tokio::test]
async fn a_tools_entry_with_a_specifier_limits_the_tool_to_it() {
    use fleet_runtime::definitions::{AgentDefinition, AgentSource, ToolEntry};
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let server = FakeModelServer::start(delegation(
        [
            Rule::tool_use(
                "Bash",
                json!({"command": "git status --short", "description": "status"}),
            )
            .then_tool_use(
                "Bash",
                json!({"command": "rm keep.txt", "description": "remove"}),
            )
            .when_system_contains(CHILD)
            .when_tool_result(false),
            child_done(),
        ],
        json!({"description": "git", "prompt": "look", "subagent_type": "git-only"}),
    ))
    .await
    .unwrap();
    let mut def = AgentDefinition::new(
        "git-only",
        "Git helper",
        "You run git.",
        AgentSource::CommandLine,
    );
    def.tools = Some(vec![ToolEntry {
        name: "Bash".into(),
        specifier: Some("git *".into()),
    }]);
    let mut defs = vec![def];
    defs.extend(fleet_runtime::definitions::builtin_agents());
    let setup = Setup {
        agents: Some(AgentCatalog::from_definitions(defs)),
        ..Setup::default()
    };
    let (events, _) = run(tree(&server, dir.path(), home.path(), setup), "go").await;
    let results = tool_results_of(&events, false);
    assert_eq!(results.len(), 2);
    assert!(
        !results[0].content.contains("may use Bash only"),
        "{}",
        results[0].content
    );
    assert!(
        results[1].is_error && results[1].content.contains("git *"),
        "{}",
        results[1].content
    );
    assert!(dir.path().join("keep.txt").exists());
}

#[tokio::test]
async fn a_definition_asking_for_isolation_is_refused_until_fleet_can_isolate() {
    use fleet_runtime::definitions::{AgentDefinition, AgentSource, Isolation};
    let server = FakeModelServer::start(Scenario::with_rules([
        agent_call(json!({"description": "x", "prompt": "x", "subagent_type": "isolated"}))
            .when_tool_result(false),
        Rule::text("DONE").when_tool_result(true),
    ]))
    .await
    .unwrap();
    let mut def = AgentDefinition::new(
        "isolated",
        "Works apart",
        "You work apart.",
        AgentSource::CommandLine,
    );
    def.isolation = Some(Isolation::Worktree);
    let setup = Setup {
        agents: Some(AgentCatalog::from_definitions(vec![def])),
        ..Setup::default()
    };
    let (events, spawner) = run_throwaway(&server, setup, "go").await;
    let refused = tool_results_of(&events, true).remove(0);
    assert!(
        refused.is_error && refused.content.contains("isolation"),
        "{}",
        refused.content
    );
    assert_eq!(spawner.ledger().stats().spawned, 0);
    assert_eq!(server.request_count(), 2, "no child request was made");
}

/// A built-in child of `agent_type` runs `commands` with Bash, one per call of one reply.
async fn child_bash(
    agent_type: &str,
    dir: &std::path::Path,
    commands: &[&str],
) -> Vec<fleet_protocol::ToolResultEvent> {
    let home = tempfile::tempdir().unwrap();
    let calls = commands.iter().fold(Rule::new(), |rule, command| {
        rule.then_tool_use("Bash", json!({"command": command, "description": "run"}))
    });
    let server = FakeModelServer::start(delegation(
        [
            calls.when_system_contains(CHILD).when_tool_result(false),
            Rule::text("VERDICT: PASS")
                .when_system_contains(CHILD)
                .when_tool_result(true),
        ],
        json!({"description": "check", "prompt": "check", "subagent_type": agent_type}),
    ))
    .await
    .unwrap();
    let (events, _) = run(tree(&server, dir, home.path(), Setup::default()), "go").await;
    tool_results_of(&events, false)
}

#[tokio::test]
async fn explore_may_run_only_commands_that_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let results = child_bash(
        "Explore",
        dir.path(),
        &["ls", "rm keep.txt", "echo hi > new.txt"],
    )
    .await;
    assert!(
        !results[0].is_error && results[0].content.contains("keep.txt"),
        "{}",
        results[0].content
    );
    assert!(results[1].is_error, "{}", results[1].content);
    assert!(results[2].is_error, "{}", results[2].content);
    assert!(dir.path().join("keep.txt").exists());
    assert!(!dir.path().join("new.txt").exists());
}

#[tokio::test]
async fn verification_runs_checks_but_writes_only_under_the_temp_dir() {
    // The project is under the temp dir here, so the agent's scratch space is a folder of its
    // own there rather than the whole temp dir.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let scratch = std::env::temp_dir()
        .canonicalize()
        .unwrap()
        .join("fleet-scratch")
        .join(format!("verify-{}", std::process::id()));
    let write_scratch = format!("echo probe > {}", scratch.display());
    let results = child_bash(
        "verification",
        dir.path(),
        &[
            "cat keep.txt",
            &write_scratch,
            "echo changed > keep.txt",
            "rm keep.txt",
        ],
    )
    .await;
    assert!(!results[0].is_error, "{}", results[0].content);
    assert!(!results[1].is_error, "{}", results[1].content);
    assert!(
        results[2].is_error && results[3].is_error,
        "{} / {}",
        results[2].content,
        results[3].content
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "x"
    );
    assert_eq!(std::fs::read_to_string(&scratch).unwrap().trim(), "probe");
    let _ = std::fs::remove_file(scratch);
}
