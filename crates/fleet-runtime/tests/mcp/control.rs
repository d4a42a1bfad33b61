//! The servers under the user's hand: the status report, turning a server off and on (its
//! tools leave and come back in the model's requests), reconnecting (a new process, a new
//! handshake), and a server that failed at the start brought back.

use std::collections::BTreeMap;

use fleet_protocol::{McpServerState, ResultSubtype};
use fleet_runtime::mcp::{McpControlError, McpServerConfig, McpSource, McpTransport};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common;
use super::sdk::{offered, sdk_config, start};
use super::sdk_bridge::ForwardingBridge;
use super::support::{fault_config, wait_gone, watching_agent};

fn mcp_tools(body: &serde_json::Value, server: &str) -> Vec<String> {
    let prefix = format!("mcp__{server}__");
    offered(body)
        .into_iter()
        .filter(|name| name.starts_with(&prefix))
        .collect()
}

#[tokio::test]
async fn the_status_lists_every_server_with_its_tools_and_why_one_failed() {
    let bridge = ForwardingBridge::new("calc", &[]);
    let missing = McpServerConfig {
        name: "gone".into(),
        transport: McpTransport::Stdio {
            command: "/nonexistent/fleet-test-server".into(),
            args: Vec::new(),
            env: BTreeMap::from([("TOKEN".into(), "s3cret".into())]),
            cwd: None,
        },
        source: McpSource::Project("/p/.mcp.json".into()),
    };
    let servers = start(vec![sdk_config("calc"), missing], &bridge).await;
    let status = serde_json::to_value(servers.status().await).unwrap();
    let by_name = |name: &str| {
        status
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing from {status}"))
    };

    let calc = by_name("calc");
    assert_eq!(calc["status"], "connected");
    assert_eq!(calc["config"], json!({"type": "sdk", "name": "calc"}));
    assert_eq!(calc["scope"], "dynamic");
    assert_eq!(calc["source"], "sdk");
    assert!(calc["serverInfo"]["name"].is_string() && calc["serverInfo"]["version"].is_string());
    let echo = calc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .cloned()
        .unwrap();
    assert_eq!(echo["description"], "Returns its text.");
    assert_eq!(echo["annotations"]["readOnly"], true);
    assert!(calc.get("error").is_none());

    let gone = by_name("gone");
    assert_eq!(gone["status"], "failed");
    assert!(gone["error"]
        .as_str()
        .unwrap()
        .contains("fleet-test-server"));
    assert_eq!(gone["scope"], "project");
    assert_eq!(gone["config"]["env"]["TOKEN"], "[redacted]");
    assert!(gone.get("tools").is_none() && gone.get("serverInfo").is_none());
    assert!(!status.to_string().contains("s3cret"));
}

#[tokio::test]
async fn a_disabled_server_leaves_the_next_request_and_comes_back_when_enabled() {
    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(
        vec![sdk_config("calc"), fault_config("fault", &[])],
        &bridge,
    )
    .await;
    let fault = servers.server("fault").unwrap().clone();
    let pid = fault.server_pid().await.unwrap();
    let model = common::server(Scenario::with_rules([Rule::text("ok")])).await;
    let dir = tempfile::tempdir().unwrap();
    let agent = watching_agent(&model, dir.path(), &servers).await;

    let (_, agent) = common::run(agent, "first").await;
    servers.set_enabled("fault", false).await.unwrap();
    assert!(
        wait_gone(pid).await,
        "the disabled server's process is stopped"
    );
    let status = serde_json::to_value(servers.status().await).unwrap();
    assert_eq!(status[1]["status"], "disabled", "{status}");
    let err = fault
        .call("echo", json!({"text": "x"}), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("disabled"), "{err}");

    let (_, agent) = common::run(agent, "second").await;
    servers.set_enabled("fault", true).await.unwrap();
    let (events, _) = common::run(agent, "third").await;
    assert_eq!(common::result(&events).subtype, ResultSubtype::Success);

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let first = mcp_tools(&requests[0].body, "fault");
    assert!(first.contains(&"mcp__fault__echo".to_string()), "{first:?}");
    assert!(
        mcp_tools(&requests[1].body, "fault").is_empty(),
        "disabled: no fault tools in the request"
    );
    assert_eq!(
        mcp_tools(&requests[1].body, "calc"),
        mcp_tools(&requests[0].body, "calc"),
        "the other server's tools stay"
    );
    assert_eq!(
        mcp_tools(&requests[2].body, "fault"),
        first,
        "enabled: back"
    );
    assert_ne!(fault.server_pid().await.unwrap(), pid, "a new process");
}

#[tokio::test]
async fn reconnect_starts_a_new_process_or_a_new_handshake() {
    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(
        vec![sdk_config("calc"), fault_config("fault", &[])],
        &bridge,
    )
    .await;
    let fault = servers.server("fault").unwrap().clone();
    let old = fault.server_pid().await.unwrap();
    servers.reconnect("fault").await.unwrap();
    let new = fault.server_pid().await.unwrap();
    assert_ne!(old, new);
    assert!(wait_gone(old).await, "the old process was stopped");
    let out = fault
        .call("echo", json!({"text": "again"}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.content, "again");

    let before = bridge.pid().await.unwrap();
    servers.reconnect("calc").await.unwrap();
    let initializations = bridge.seen().iter().filter(|m| *m == "initialize").count();
    assert_eq!(initializations, 2, "the SDK server was initialized again");
    assert_ne!(bridge.pid().await.unwrap(), before);
    let calc = servers.server("calc").unwrap();
    let sum = calc
        .call("add", json!({"a": 20, "b": 22}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(sum.content, "42");

    let unknown = servers.reconnect("nope").await.unwrap_err();
    assert!(matches!(unknown, McpControlError::Unknown { .. }));
    let message = unknown.to_string();
    assert!(
        message.contains("\"nope\"") && message.contains("calc, fault"),
        "{message}"
    );
    assert!(matches!(
        servers.set_enabled("nope", false).await,
        Err(McpControlError::Unknown { .. })
    ));
}

#[tokio::test]
async fn a_server_that_failed_at_the_start_reaches_the_agent_once_reconnected() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("late-server.sh");
    let mut late = fault_config("late", &[]);
    let McpTransport::Stdio { command, .. } = &mut late.transport else {
        unreachable!()
    };
    let fault_binary = std::mem::replace(command, script.display().to_string());
    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(vec![sdk_config("calc"), late], &bridge).await;
    assert_eq!(servers.entries[1].status, McpServerState::Failed);

    let model = common::server(Scenario::queue([
        Rule::text("no late tools yet"),
        Rule::tool_use("mcp__late__echo", json!({"text": "here"})),
        Rule::text("done"),
    ]))
    .await;
    let agent = watching_agent(&model, dir.path(), &servers).await;
    let (_, agent) = common::run(agent, "first").await;

    // The program appears; a reconnect starts it.
    std::fs::write(&script, format!("#!/bin/sh\nexec '{fault_binary}'\n")).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    servers.reconnect("late").await.unwrap();
    let (events, _) = common::run(agent, "second").await;

    let requests = model.requests();
    assert!(mcp_tools(&requests[0].body, "late").is_empty());
    assert!(mcp_tools(&requests[1].body, "late").contains(&"mcp__late__echo".to_string()));
    let results = common::tool_results(&events);
    assert_eq!((results[0].1.as_str(), results[0].2), ("here", false));
}
