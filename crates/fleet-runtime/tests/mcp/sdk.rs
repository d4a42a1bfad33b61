//! SDK-hosted servers (`"type": "sdk"`): JSON-RPC over an [`SdkMcpBridge`] to a real server
//! process (see `sdk_bridge.rs`), offered to the model as `mcp__<server>__<tool>` like any
//! other server.

use std::sync::Arc;
use std::time::Duration;

use fleet_protocol::{McpServerState, ResultSubtype};
use fleet_runtime::mcp::config::McpConfig;
use fleet_runtime::mcp::{
    McpError, McpServerConfig, McpServers, McpSource, McpTransport, SdkMcpBridge,
};
use fleet_testkit::{Rule, Scenario};
use fleet_tools::permissions::PermissionMode;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::common;
use super::sdk_bridge::ForwardingBridge;
use super::support::{timeouts, wait_for_line, watching_agent};

pub fn sdk_config(name: &str) -> McpServerConfig {
    McpServerConfig {
        name: name.to_string(),
        transport: McpTransport::Sdk { name: name.into() },
        source: McpSource::FlagInline(0),
    }
}

pub async fn start(servers: Vec<McpServerConfig>, bridge: &Arc<ForwardingBridge>) -> McpServers {
    let config = McpConfig {
        servers,
        ..McpConfig::default()
    };
    let bridge: Arc<dyn SdkMcpBridge> = bridge.clone();
    McpServers::start_with(&config, timeouts(), Some(bridge)).await
}

/// Names of the tools a recorded model request offered.
pub fn offered(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_model_calls_an_sdk_tool_and_gets_the_servers_answer() {
    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(vec![sdk_config("calc")], &bridge).await;
    assert_eq!(
        servers.entries[0].status,
        McpServerState::Connected,
        "{:?}",
        servers.entries
    );
    let model = common::server(Scenario::queue([
        Rule::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})),
        Rule::text("the sum is 5"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let agent = watching_agent(&model, dir.path(), &servers).await;
    let (events, _) = common::run(agent, "add 2 and 3").await;

    assert_eq!(common::result(&events).subtype, ResultSubtype::Success);
    let results = common::tool_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!((results[0].1.as_str(), results[0].2), ("5", false));
    assert!(offered(&model.requests()[0].body).contains(&"mcp__calc__add".to_string()));
    // The handshake went through the bridge in order, then the listing and the call.
    let seen = bridge.seen();
    assert_eq!(
        &seen[..3],
        ["initialize", "notifications/initialized", "tools/list"]
    );
    assert!(seen.contains(&"tools/call".to_string()), "{seen:?}");
}

#[tokio::test]
async fn a_slow_call_holds_up_no_other_and_a_cancelled_one_is_cancelled_at_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fault.log");
    let bridge = ForwardingBridge::new("calc", &["--log", log.to_str().unwrap()]);
    let servers = start(vec![sdk_config("calc")], &bridge).await;
    let conn = servers.connections()[0].clone();

    let cancel = CancellationToken::new();
    let hanging = {
        let conn = conn.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { conn.call("hang", json!({}), &cancel).await })
    };
    assert!(wait_for_line(&log, "started hang").await);
    // `hang` never answers; these only finish if they do not queue behind it. (The deadline
    // turns a queue into a failure instead of a hung suite; it measures nothing.)
    let others = async {
        let sum = conn
            .call("add", json!({"a": 1, "b": 1}), &CancellationToken::new())
            .await
            .unwrap();
        (sum, conn.refresh_tools().await.unwrap())
    };
    let (sum, listed) = tokio::time::timeout(Duration::from_secs(60), others)
        .await
        .expect("a call and a listing queued behind a hung call");
    assert_eq!(sum.content, "2");
    assert!(listed.iter().any(|t| t.name == "add"));

    cancel.cancel();
    let outcome = hanging.await.unwrap();
    assert!(
        matches!(outcome, Err(McpError::Cancelled { .. })),
        "{outcome:?}"
    );
    assert!(
        wait_for_line(&log, "cancelled hang").await,
        "notifications/cancelled reached the server through the bridge"
    );
    assert!(bridge
        .seen()
        .contains(&"notifications/cancelled".to_string()));
}

#[tokio::test]
async fn a_bridge_error_is_the_calls_error_result() {
    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(vec![sdk_config("calc")], &bridge).await;
    *bridge.fail_method.lock().unwrap() = Some("tools/call".into());
    let model = common::server(Scenario::queue([
        Rule::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})),
        Rule::text("it failed"),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = common::config(
        dir.path(),
        servers.tools().await,
        PermissionMode::BypassPermissions,
    );
    let agent = common::agent_with(&model, dir.path(), config);
    let (events, _) = common::run(agent, "add").await;

    let results = common::tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].2, "an error result: {results:?}");
    assert!(
        results[0].1.contains("the control link is closed"),
        "{}",
        results[0].1
    );
    assert_eq!(common::result(&events).subtype, ResultSubtype::Success);
    // One failed request does not fail the server.
    *bridge.fail_method.lock().unwrap() = None;
    let conn = servers.connections()[0].clone();
    let out = conn
        .call("add", json!({"a": 4, "b": 4}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.content, "8");
}

#[tokio::test]
async fn an_sdk_server_fails_clearly_without_a_bridge_or_with_a_name_the_sdk_does_not_serve() {
    let config = McpConfig {
        servers: vec![sdk_config("calc")],
        ..McpConfig::default()
    };
    let servers = McpServers::start(&config, timeouts()).await;
    assert_eq!(servers.entries[0].status, McpServerState::Failed);
    let error = servers.entries[0].error.clone().unwrap();
    assert!(error.contains("SDK"), "{error}");
    // The entry names the server; its error does not say the name again.
    assert_eq!(servers.entries[0].name, "calc");
    assert!(!error.contains("MCP server"), "{error}");

    let bridge = ForwardingBridge::new("calc", &[]);
    let servers = start(vec![sdk_config("other")], &bridge).await;
    assert_eq!(servers.entries[0].status, McpServerState::Failed);
    let error = servers.entries[0].error.clone().unwrap();
    assert!(error.contains("Server 'other' not found"), "{error}");
}
