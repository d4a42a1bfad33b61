use std::sync::Arc;

use fleet_runtime::mcp::{McpConnection, McpServerConfig, McpSource, McpTool, McpTransport};
use fleet_tools::{Tool, ToolContext, Workspace};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::mcp::support::{connect, timeouts};

#[tokio::test]
async fn lists_tools_with_schemas_hints_and_instructions() {
    let conn = connect("fault", &["--instructions", "Use echo to echo."]).await;
    let tools = conn.tools().await;
    let echo = tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("echo listed");
    assert!(echo.read_only_hint);
    assert_eq!(echo.input_schema["type"], "object");
    let slow = tools
        .iter()
        .find(|t| t.name == "slow")
        .expect("slow listed");
    assert!(!slow.read_only_hint, "no readOnlyHint means not read-only");
    assert_eq!(
        conn.instructions().await.as_deref(),
        Some("Use echo to echo.")
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn echo_add_image_resource_and_is_error() {
    let conn = connect("fault", &[]).await;
    let cancel = CancellationToken::new();
    let out = conn
        .call("echo", json!({"text": "hi"}), &cancel)
        .await
        .unwrap();
    assert_eq!(out.content, "hi");
    assert!(!out.is_error);
    let out = conn
        .call("add", json!({"a": 2, "b": 40}), &cancel)
        .await
        .unwrap();
    assert_eq!(out.content, "42");
    let out = conn.call("image", json!({}), &cancel).await.unwrap();
    assert!(out.content.contains("a red pixel"));
    assert!(out.content.contains("[image: image/png"));
    assert!(out.structured.is_some());
    let out = conn.call("resource", json!({}), &cancel).await.unwrap();
    assert!(out.content.contains("resource body"), "{}", out.content);
    let out = conn.call("fail", json!({}), &cancel).await.unwrap();
    assert!(out.is_error);
    assert_eq!(out.content, "it went wrong");
    conn.shutdown().await;
}

#[tokio::test]
async fn ten_megabytes_are_capped_with_a_note() {
    let conn = connect("fault", &[]).await.with_max_output_tokens(1000);
    let out = conn
        .call(
            "big",
            json!({"bytes": 10 * 1024 * 1024}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(out.content.starts_with(&"x".repeat(4000)));
    assert!(!out.content.starts_with(&"x".repeat(4001)));
    assert!(out.content.contains("MCP output truncated"));
    assert!(out.content.len() < 5000);
    conn.shutdown().await;
}

#[tokio::test]
async fn the_tool_adapter_is_named_mcp_server_tool_and_calls_through() {
    let conn = Arc::new(connect("faulty", &[]).await);
    let tools = McpTool::all(&conn).await;
    let echo = tools
        .iter()
        .find(|t| t.name() == "mcp__faulty__echo")
        .expect("adapter");
    assert!(echo.is_read_only());
    let slow = tools
        .iter()
        .find(|t| t.name() == "mcp__faulty__slow")
        .expect("adapter");
    assert!(!slow.is_read_only());
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(
        dir.path().to_path_buf(),
        Arc::new(Workspace::new(dir.path())),
    );
    let out = echo
        .call(json!({"text": "via adapter"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "via adapter");
}

#[tokio::test]
async fn streamable_http_lists_and_calls() {
    use tokio::io::AsyncBufReadExt as _;
    let command = fleet_testkit::mcp_fault_server().unwrap();
    let mut server = tokio::process::Command::new(command)
        .args(["--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = fleet_testkit::within(fleet_testkit::WAIT, "the listening line", lines.next_line())
        .await
        .unwrap()
        .expect("a listening line");
    let url = first
        .strip_prefix("listening ")
        .expect("listening URL")
        .to_string();
    let config = McpServerConfig {
        name: "web".to_string(),
        transport: McpTransport::Http {
            url,
            headers: Default::default(),
        },
        source: McpSource::FlagInline(0),
    };
    let conn = McpConnection::connect(&config, timeouts()).await.unwrap();
    assert!(conn.tools().await.iter().any(|t| t.name == "add"));
    let out = conn
        .call("add", json!({"a": 1, "b": 2}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.content, "3");
    assert_eq!(conn.server_pid().await, None);
    conn.shutdown().await;
    server.kill().await.unwrap();
}
