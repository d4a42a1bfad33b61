//! The reference server, `@modelcontextprotocol/server-everything` (pinned, installed under the
//! target folder by `scripts/mcp-everything.sh`), through fleet's client in stdio mode: its
//! tools listed, plain and numeric calls, an image result, and a long-running operation that
//! reports progress before it answers. Skipped, saying so, where node or npm is missing.

use super::support::{is_gone, timeouts};
use fleet_runtime::mcp::{McpConnection, McpServerConfig, McpSource, McpTransport};
use serde_json::json;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

/// The server's entry point, installing it first if needed; `None` (with a message) when node
/// or npm is missing.
fn entry() -> Option<String> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-everything.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if path.is_empty() {
        eprintln!(
            "skipped: server-everything is not installed (node/npm missing): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(path)
}

fn stdio_config(entry: &str) -> McpServerConfig {
    McpServerConfig {
        name: "everything".into(),
        transport: McpTransport::Stdio {
            command: "node".into(),
            args: vec![entry.into(), "stdio".into()],
            env: BTreeMap::new(),
            cwd: None,
        },
        source: McpSource::FlagInline(0),
    }
}

#[tokio::test]
async fn the_reference_server_over_stdio() {
    let Some(entry) = entry() else { return };
    let conn = McpConnection::connect(&stdio_config(&entry), timeouts())
        .await
        .expect("connect to server-everything");
    let tools = conn.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for wanted in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    let cancel = CancellationToken::new();
    let echo = conn
        .call("echo", json!({"message": "hello everything"}), &cancel)
        .await
        .expect("echo");
    assert!(
        echo.content.contains("hello everything"),
        "{}",
        echo.content
    );
    assert!(!echo.is_error);
    let sum = conn
        .call("get-sum", json!({"a": 2, "b": 40}), &cancel)
        .await
        .expect("sum");
    assert!(sum.content.contains("42"), "{}", sum.content);
    let image = conn
        .call("get-tiny-image", json!({}), &cancel)
        .await
        .expect("image");
    assert!(
        image.content.to_lowercase().contains("image"),
        "an image result is described, not dropped: {}",
        image.content
    );
    let long = conn
        .call(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            &cancel,
        )
        .await
        .expect("long-running operation");
    assert!(!long.is_error, "{}", long.content);
    let pid = conn.server_pid().await.expect("a stdio server has a pid");
    drop(conn);
    let mut gone = false;
    for _ in 0..100 {
        if is_gone(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(gone, "the server's process is gone after the connection");
}
