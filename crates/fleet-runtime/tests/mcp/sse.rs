//! The legacy HTTP+SSE transport (`"type": "sse"`) against `fleet-mcp-fault --sse`, a real
//! process on loopback: the stream, the endpoint, POSTed messages, and what happens when any
//! of them goes wrong.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fleet_runtime::mcp::{
    McpConnection, McpError, McpServerConfig, McpSource, McpStatus, McpTimeouts, McpTransport,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::mcp::support::{everything_entry, wait_for_line, wait_tools_changed};

/// A `fleet-mcp-fault --sse` process and where it listens.
struct SseServer {
    child: Child,
    /// `HOST:PORT`, to start a successor on the same address.
    addr: String,
    /// `http://HOST:PORT/sse`.
    url: String,
}

impl SseServer {
    async fn start(args: &[&str]) -> Self {
        Self::start_at("127.0.0.1:0", args).await
    }

    /// Starts the server and waits for its `listening` line: from then on it accepts.
    async fn start_at(addr: &str, args: &[&str]) -> Self {
        let command = fleet_testkit::mcp_fault_server().expect("build fleet-mcp-fault");
        let mut child = Command::new(command)
            .args(["--sse", addr])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start fleet-mcp-fault");
        let stdout = child.stdout.take().expect("stdout");
        let first = fleet_testkit::within(
            fleet_testkit::WAIT,
            "the fault server's listening line",
            BufReader::new(stdout).lines().next_line(),
        )
        .await
        .expect("read stdout");
        let Some(first) = first else {
            // Say why: a fault server built from a tree without `--sse` says so here.
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr).await;
            }
            panic!("fleet-mcp-fault --sse {addr} printed no listening line: {stderr}");
        };
        let url = first
            .strip_prefix("listening ")
            .expect("listening URL")
            .to_string();
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/sse"))
            .expect("http://HOST:PORT/sse")
            .to_string();
        Self { child, addr, url }
    }

    fn pid(&self) -> i64 {
        i64::from(self.child.id().expect("running"))
    }

    fn config(&self, name: &str, headers: &[(&str, &str)]) -> McpServerConfig {
        sse_config(name, &self.url, headers)
    }

    /// Waits until the process has exited (the `crash` tool ends it).
    async fn exited(&mut self) {
        fleet_testkit::within(fleet_testkit::WAIT, "the server to exit", self.child.wait())
            .await
            .expect("wait for the server");
    }
}

/// Generous timeouts that still end every call: a transport that loses an answer (or never
/// notices the stream closing) fails the test instead of hanging it.
fn timeouts() -> McpTimeouts {
    McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_secs(30)),
    }
}

fn sse_config(name: &str, url: &str, headers: &[(&str, &str)]) -> McpServerConfig {
    McpServerConfig {
        name: name.to_string(),
        transport: McpTransport::Sse {
            url: url.to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        },
        source: McpSource::FlagInline(0),
    }
}

async fn call(conn: &McpConnection, tool: &str, args: Value) -> Result<String, McpError> {
    conn.call(tool, args, &CancellationToken::new())
        .await
        .map(|out| out.content)
}

async fn server_pid(conn: &McpConnection) -> i64 {
    let out = call(conn, "pids", json!({})).await.expect("pids");
    let value: Value = serde_json::from_str(&out).expect("pids JSON");
    value["pid"].as_i64().expect("pid")
}

#[tokio::test]
async fn sse_lists_tools_and_calls_echo_and_add() {
    let server = SseServer::start(&["--instructions", "Talk over SSE."]).await;
    let conn = McpConnection::connect(&server.config("legacy", &[]), timeouts())
        .await
        .expect("connect over SSE");
    let tools = conn.tools().await;
    let echo = tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("echo listed");
    assert!(echo.read_only_hint);
    assert_eq!(echo.input_schema["type"], "object");
    assert!(tools.iter().any(|t| t.name == "add"));
    assert_eq!(conn.instructions().await.as_deref(), Some("Talk over SSE."));
    assert_eq!(
        call(&conn, "echo", json!({"text": "héllo 🦀"}))
            .await
            .unwrap(),
        "héllo 🦀"
    );
    assert_eq!(
        call(&conn, "add", json!({"a": 2, "b": 40})).await.unwrap(),
        "42"
    );
    let failed = conn
        .call("fail", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(conn.server_pid().await, None, "nothing spawned by fleet");
    assert_eq!(conn.status().await, McpStatus::Connected);
    conn.shutdown().await;
}

#[tokio::test]
async fn sse_concurrent_calls_get_their_own_results() {
    let server = SseServer::start(&[]).await;
    let conn = McpConnection::connect(&server.config("legacy", &[]), timeouts())
        .await
        .unwrap();
    // Slow calls first, the earliest slowest, so answers come back in another order than the
    // requests went out; quick `add`s run between them.
    let calls = (0..16u64).map(|i| {
        let conn = &conn;
        async move {
            if i % 2 == 0 {
                let ms = (16 - i) * 20;
                let out = call(conn, "slow", json!({"ms": ms})).await;
                (out, format!("slept {ms} ms"))
            } else {
                let out = call(conn, "add", json!({"a": i, "b": 1000})).await;
                (out, format!("{}", i + 1000))
            }
        }
    });
    for (out, expected) in futures::future::join_all(calls).await {
        assert_eq!(out.unwrap(), expected);
    }
    conn.shutdown().await;
}

#[tokio::test]
async fn sse_a_call_timeout_sends_notifications_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let server = SseServer::start(&["--log", log.to_str().unwrap()]).await;
    let timeouts = McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_millis(300)),
    };
    let conn = McpConnection::connect(&server.config("legacy", &[]), timeouts)
        .await
        .unwrap();
    let err = call(&conn, "hang", json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::CallTimeout { .. }), "{err}");
    assert!(
        wait_for_line(&log, "cancelled hang").await,
        "the server never got notifications/cancelled"
    );
    // A timeout is not a failure: the same session still answers.
    assert_eq!(
        call(&conn, "echo", json!({"text": "still here"}))
            .await
            .unwrap(),
        "still here"
    );
    assert_eq!(conn.status().await, McpStatus::Connected);
    conn.shutdown().await;
}

#[tokio::test]
async fn sse_a_server_dying_mid_call_fails_the_call_and_the_next_call_reconnects_once() {
    let mut first = SseServer::start(&[]).await;
    let conn = McpConnection::connect(&first.config("legacy", &[]), timeouts())
        .await
        .unwrap();
    assert_eq!(server_pid(&conn).await, first.pid());

    let err = call(&conn, "crash", json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::Failed { .. }), "{err}");
    assert!(err.to_string().contains("legacy"), "{err}");
    assert!(
        matches!(
            conn.status().await,
            McpStatus::Failed {
                restart_left: true,
                ..
            }
        ),
        "{:?}",
        conn.status().await
    );

    // A remote server is not fleet's to start: another comes up on the same address, and the
    // next call reconnects to it.
    first.exited().await;
    let mut second = SseServer::start_at(&first.addr, &[]).await;
    assert_eq!(server_pid(&conn).await, second.pid(), "reconnected");
    assert_eq!(conn.status().await, McpStatus::Connected);

    // A second death: no more reconnecting, even with a server there to reach.
    let _ = call(&conn, "crash", json!({})).await.unwrap_err();
    second.exited().await;
    let _third = SseServer::start_at(&first.addr, &[]).await;
    let err = call(&conn, "echo", json!({"text": "x"})).await.unwrap_err();
    assert!(matches!(err, McpError::Failed { .. }), "{err}");
    assert!(matches!(
        conn.status().await,
        McpStatus::Failed {
            restart_left: false,
            ..
        }
    ));
}

/// Connects with a short connect timeout and expects a clear `McpError::Connect` well before a
/// hang could pass for one; gives the message and how long it took.
async fn connect_error(config: &McpServerConfig, connect: Duration) -> (String, Duration) {
    let timeouts = McpTimeouts {
        connect,
        call: None,
    };
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        connect + Duration::from_secs(30),
        McpConnection::connect(config, timeouts),
    )
    .await
    .expect("the connect timeout was not kept");
    let err = outcome.err().expect("connecting must fail");
    assert!(matches!(err, McpError::Connect { .. }), "{err}");
    (err.to_string(), started.elapsed())
}

#[tokio::test]
async fn sse_a_url_that_is_not_one_or_refuses_fails_at_once_naming_server_and_url() {
    let (message, _) = connect_error(
        &sse_config("typo", "not a url", &[]),
        Duration::from_secs(20),
    )
    .await;
    assert!(message.contains("\"typo\""), "{message}");
    assert!(message.contains("\"not a url\" is not a URL"), "{message}");

    // A port nobody listens on: bound, then freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/sse");
    let connect = Duration::from_secs(20);
    let (message, took) = connect_error(&sse_config("nobody", &url, &[]), connect).await;
    assert!(message.contains("\"nobody\""), "{message}");
    assert!(message.contains(&format!("GET {url}")), "{message}");
    assert!(took < connect, "a refused connection is not a timeout");
}

#[tokio::test]
async fn sse_a_404_fails_at_once_naming_server_url_and_status() {
    let server = SseServer::start(&[]).await;
    let url = server.url.replace("/sse", "/nope");
    let connect = Duration::from_secs(20);
    let (message, took) = connect_error(&sse_config("lost", &url, &[]), connect).await;
    assert!(message.contains("\"lost\""), "{message}");
    assert!(message.contains(&format!("GET {url}")), "{message}");
    assert!(message.contains("404"), "{message}");
    assert!(took < connect, "a 404 is not a timeout");
}

#[tokio::test]
async fn sse_a_stream_without_endpoint_fails_at_the_connect_timeout() {
    let server = SseServer::start(&["--sse-no-endpoint"]).await;
    let connect = Duration::from_millis(400);
    let (message, took) = connect_error(&server.config("mute", &[]), connect).await;
    assert!(message.contains("\"mute\""), "{message}");
    assert!(message.contains(&server.url), "{message}");
    assert!(message.contains("no `endpoint` event within"), "{message}");
    assert!(
        took >= connect,
        "gave up after {took:?}, before the timeout"
    );
}

#[tokio::test]
async fn sse_configured_headers_go_with_the_stream_and_the_posts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let server = SseServer::start(&["--log", log.to_str().unwrap()]).await;
    let headers = [
        ("Authorization", "Bearer t0k3n"),
        ("X-Fleet-Test", "sse headers"),
    ];
    let conn = McpConnection::connect(&server.config("legacy", &headers), timeouts())
        .await
        .unwrap();
    assert_eq!(
        call(&conn, "echo", json!({"text": "hi"})).await.unwrap(),
        "hi"
    );
    for line in [
        "GET /sse header accept: text/event-stream",
        "GET /sse header authorization: Bearer t0k3n",
        "GET /sse header x-fleet-test: sse headers",
        "POST /message header content-type: application/json",
        "POST /message header authorization: Bearer t0k3n",
        "POST /message header x-fleet-test: sse headers",
    ] {
        assert!(wait_for_line(&log, line).await, "no {line:?} in the log");
    }
    conn.shutdown().await;
}

#[tokio::test]
async fn sse_notifications_and_big_results_travel_the_stream() {
    let server = SseServer::start(&[]).await;
    let conn = McpConnection::connect(&server.config("legacy", &[]), timeouts())
        .await
        .unwrap()
        .with_max_output_tokens(1000);
    let big = call(&conn, "big", json!({"bytes": 2 * 1024 * 1024}))
        .await
        .unwrap();
    assert!(
        big.starts_with(&"x".repeat(4000)),
        "the whole event arrived"
    );
    assert!(big.contains("MCP output truncated"));

    assert!(!conn.take_tools_changed());
    call(&conn, "change_tools", json!({})).await.unwrap();
    assert!(
        wait_tools_changed(&conn).await,
        "list_changed never arrived"
    );
    let tools = conn.refresh_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "extra"));
    conn.shutdown().await;
}

#[tokio::test]
async fn sse_shutdown_closes_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let server = SseServer::start(&["--log", log.to_str().unwrap()]).await;
    let conn = McpConnection::connect(&server.config("legacy", &[]), timeouts())
        .await
        .unwrap();
    let session = format!("{}-1", server.pid());
    assert!(wait_for_line(&log, &format!("sse session opened {session}")).await);
    conn.shutdown().await;
    assert!(
        wait_for_line(&log, &format!("sse session closed {session}")).await,
        "the server still holds the stream"
    );
}

/// The reference server in `sse` mode — the TypeScript SDK's own `SSEServerTransport` — so the
/// client is held to the real implementation, not only to the fault server written beside it.
#[tokio::test]
async fn sse_the_reference_server() {
    let Some(entry) = everything_entry() else {
        return;
    };
    // It prints the port it was given, not the one it got, so it is given a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("node")
        .args([entry.as_str(), "sse"])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything");
    let mut stderr = BufReader::new(server.stderr.take().expect("stderr")).lines();
    loop {
        let line = fleet_testkit::within(
            fleet_testkit::WAIT,
            "server-everything's start line",
            stderr.next_line(),
        );
        match line.await {
            Ok(Some(line)) if line.contains("Server is running on port") => break,
            Ok(Some(_)) => {}
            other => panic!("server-everything did not start: {other:?}"),
        }
    }
    // It logs every message to stderr: keep reading so the pipe never fills.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });

    let url = format!("http://localhost:{port}/sse");
    let conn = McpConnection::connect(&sse_config("everything", &url, &[]), timeouts())
        .await
        .expect("connect to server-everything over SSE");
    let names: Vec<String> = conn.tools().await.iter().map(|t| t.name.clone()).collect();
    for wanted in ["echo", "get-sum"] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} missing from {names:?}"
        );
    }
    let echo = call(&conn, "echo", json!({"message": "hello over sse"}))
        .await
        .unwrap();
    assert!(echo.contains("hello over sse"), "{echo}");
    let sum = call(&conn, "get-sum", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert!(sum.contains("42"), "{sum}");
    conn.shutdown().await;
    server.kill().await.unwrap();
}
