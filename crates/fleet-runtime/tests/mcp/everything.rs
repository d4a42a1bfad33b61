//! The reference server, `@modelcontextprotocol/server-everything` (pinned, installed under the
//! target folder by `scripts/mcp-everything.sh`), through fleet's client in both of its modes,
//! stdio and streamable HTTP: its tools listed, plain and numeric calls, an image result, a
//! long-running operation that reports progress before it answers, and its resources listed
//! and read (text shown, binary described). Skipped, saying so, where node or npm is missing.

use super::support::{everything_entry, is_gone, timeouts, wait_gone};
use fleet_runtime::mcp::config::{parse_server, process_env};
use fleet_runtime::mcp::{
    McpConnection, McpServerConfig, McpSource, McpTransport, ResourceServers,
};
use fleet_tools::{ToolContext, Workspace};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

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

/// What both modes must do alike: the tools, the calls, the resources.
async fn exercise(conn: &McpConnection) {
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
    assert!(long.content.contains("Steps: 3"), "{}", long.content);
    assert!(
        conn.progress_notifications() >= 2,
        "the operation reported its progress: {}",
        conn.progress_notifications()
    );

    assert!(conn.offers_resources().await);
    let resources = conn.list_resources(&cancel).await.expect("resources/list");
    let doc = resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .unwrap_or_else(|| panic!("no static document among {resources:?}"));
    assert!(!doc.name.is_empty());
    let text = conn
        .read_resource(&doc.uri, &cancel)
        .await
        .expect("read a document");
    let (header, body) = text.split_once('\n').expect("a header line and the text");
    assert!(
        header.starts_with(&format!("[resource {}", doc.uri)),
        "{header}"
    );
    assert!(body.trim().len() > 20, "the document's text: {text}");
    // A template resource (not listed) whose contents are base64: described, never dumped.
    let blob = conn
        .read_resource("demo://resource/dynamic/blob/1", &cancel)
        .await
        .expect("read a binary resource");
    assert!(
        blob.starts_with("[resource demo://resource/dynamic/blob/1: binary, text/plain, ")
            && blob.ends_with(" bytes, not shown]"),
        "{blob}"
    );
}

#[tokio::test]
async fn the_reference_server_over_stdio() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let conn = Arc::new(
        McpConnection::connect(&stdio_config(&entry), timeouts())
            .await
            .expect("connect to server-everything"),
    );
    exercise(&conn).await;

    // The same resources through the tools the model gets.
    let tools = ResourceServers::new([conn.clone()]).await.tools();
    let dir = std::env::temp_dir();
    let ctx = ToolContext::new(dir.clone(), Arc::new(Workspace::new(&dir)));
    let listed = tools[0]
        .call(json!({"server": "everything"}), &ctx)
        .await
        .expect("ListMcpResourcesTool");
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&listed.content).expect("a JSON list");
    let uri = entries
        .iter()
        .find_map(|e| {
            e["uri"]
                .as_str()
                .filter(|u| u.contains("/static/document/"))
        })
        .expect("a document listed");
    assert!(entries.iter().all(|e| e["server"] == "everything"));
    let read = tools[1]
        .call(json!({"server": "everything", "uri": uri}), &ctx)
        .await
        .expect("ReadMcpResourceTool");
    assert!(read.content.starts_with(&format!("[resource {uri}")));
    drop(tools);

    let pid = conn.server_pid().await.expect("a stdio server has a pid");
    drop(conn);
    fleet_testkit::wait_until_async(
        fleet_testkit::WAIT,
        "the server's process to be gone after the connection",
        || is_gone(pid),
    )
    .await;
}

/// `node <entry> streamableHttp` on a free loopback port, in its own process group.
struct HttpServer {
    child: Child,
    pid: i32,
    url: String,
}

impl HttpServer {
    /// Starts the server on a port that was free a moment ago; the server reads `PORT` and
    /// says on stderr when it listens. Another process can take the port in between: then
    /// the server exits saying so, and another port is tried.
    async fn start(entry: &str) -> Self {
        let mut last = String::new();
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let mut child = Command::new("node")
                .args([entry, "streamableHttp"])
                .env("PORT", port.to_string())
                // It logs every request on stdout; nobody reads that.
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true)
                .spawn()
                .expect("start node");
            let pid = child.id().and_then(|p| i32::try_from(p).ok()).expect("pid");
            let stderr = child.stderr.take().expect("stderr");
            let mut lines = BufReader::new(stderr).lines();
            let listening = tokio::time::timeout(Duration::from_secs(30), async {
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.contains(&format!("listening on port {port}")) {
                        return Ok(());
                    }
                    last = line;
                }
                Err(())
            })
            .await;
            if listening == Ok(Ok(())) {
                // Keep draining stderr so the server never blocks on a full pipe.
                tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
                return Self {
                    child,
                    pid,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                };
            }
            let _ = child.kill().await;
        }
        panic!("server-everything did not start in streamableHttp mode: {last}");
    }

    /// Kills the server's group and reaps it.
    async fn stop(mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait().await;
    }
}

#[tokio::test]
async fn the_reference_server_over_streamable_http() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let server = HttpServer::start(&entry).await;
    // Configured as a user would write it in .mcp.json.
    let config = parse_server(
        "everything",
        &json!({"type": "http", "url": server.url}),
        &McpSource::FlagInline(0),
        &std::env::temp_dir(),
        &process_env,
    )
    .expect("an http server definition");
    assert!(matches!(config.transport, McpTransport::Http { .. }));
    let conn = McpConnection::connect(&config, timeouts())
        .await
        .expect("connect to server-everything over HTTP");
    assert_eq!(conn.server_pid().await, None, "no process of fleet's own");
    exercise(&conn).await;
    conn.shutdown().await;

    let pid = server.pid;
    server.stop().await;
    assert!(wait_gone(pid).await, "the node process is gone");
}

/// A call that reports progress is not cut off by `MCP_TOOL_TIMEOUT` while it does: the
/// timeout counts from the last progress notification, not from the start.
#[tokio::test]
async fn progress_keeps_a_long_call_alive_past_the_call_timeout() {
    let Some(entry) = everything_entry() else {
        return;
    };
    let timeouts = fleet_runtime::mcp::McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_millis(1200)),
    };
    let conn = McpConnection::connect(&stdio_config(&entry), timeouts)
        .await
        .expect("connect");
    let cancel = CancellationToken::new();
    // Four steps over 2.4 s: twice the timeout, with progress every 0.6 s.
    let long = conn
        .call(
            "trigger-long-running-operation",
            json!({"duration": 2.4, "steps": 4}),
            &cancel,
        )
        .await
        .expect("kept alive by its progress");
    assert!(long.content.contains("Steps: 4"), "{}", long.content);
    // Without progress the same timeout ends a quiet call.
    let quiet = conn
        .call(
            "trigger-long-running-operation",
            json!({"duration": 2.4, "steps": 1}),
            &cancel,
        )
        .await;
    assert!(quiet.is_err(), "a silent call over the timeout is cut off");
    conn.shutdown().await;
}
