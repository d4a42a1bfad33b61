use std::time::Duration;

use fleet_runtime::mcp::{McpConnection, McpError, McpStatus, McpTimeouts};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::mcp::support::{connect, fault_config, wait_for_line, wait_gone, wait_tools_changed};

async fn pids(conn: &McpConnection) -> (i32, Option<i32>) {
    let out = conn
        .call("pids", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    let value: Value = serde_json::from_str(&out.content).unwrap();
    let pid = value["pid"].as_i64().unwrap() as i32;
    (pid, value["child"].as_i64().map(|c| c as i32))
}

#[tokio::test]
async fn the_whole_process_group_is_gone_after_shutdown() {
    let conn = connect("fault", &["--spawn-child"]).await;
    let (pid, child) = pids(&conn).await;
    let child = child.expect("the server started a child");
    assert_eq!(conn.server_pid().await, Some(pid));
    conn.shutdown().await;
    assert!(wait_gone(pid).await, "server {pid} still alive");
    assert!(wait_gone(child).await, "grandchild {child} still alive");
}

#[tokio::test]
async fn the_whole_process_group_is_gone_after_drop() {
    let conn = connect("fault", &["--spawn-child"]).await;
    let (pid, child) = pids(&conn).await;
    drop(conn);
    assert!(wait_gone(pid).await, "server {pid} still alive");
    assert!(wait_gone(child.unwrap()).await, "grandchild still alive");
}

#[tokio::test]
async fn a_hung_call_times_out_and_the_server_hears_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let config = fault_config("fault", &["--log", log.to_str().unwrap()]);
    let timeouts = McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_millis(300)),
    };
    let conn = McpConnection::connect(&config, timeouts).await.unwrap();
    let err = conn
        .call("hang", json!({}), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::CallTimeout { .. }), "{err}");
    assert!(
        wait_for_line(&log, "cancelled hang").await,
        "no notifications/cancelled"
    );
    // A timeout is not a failure: the server still answers.
    let out = conn
        .call(
            "echo",
            json!({"text": "still here"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(out.unwrap().content, "still here");
    conn.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_call_sends_notifications_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let conn = connect("fault", &["--log", log.to_str().unwrap()]).await;
    let cancel = CancellationToken::new();
    let call = conn.call("hang", json!({}), &cancel);
    let trigger = async {
        assert!(wait_for_line(&log, "started hang").await);
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, trigger);
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(
        wait_for_line(&log, "cancelled hang").await,
        "no notifications/cancelled"
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_that_call_and_the_next_call_restarts_once() {
    let conn = connect("fault", &[]).await;
    let (first_pid, _) = pids(&conn).await;
    let err = conn
        .call("crash", json!({}), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Failed { .. }), "{err}");
    assert!(matches!(
        conn.status().await,
        McpStatus::Failed {
            restart_left: true,
            ..
        }
    ));
    let (second_pid, _) = pids(&conn).await;
    assert_ne!(first_pid, second_pid, "a new server process");
    assert_eq!(conn.status().await, McpStatus::Connected);
    // A second crash: no more restarts.
    let _ = conn
        .call("crash", json!({}), &CancellationToken::new())
        .await
        .unwrap_err();
    let err = conn
        .call("echo", json!({"text": "x"}), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Failed { .. }), "{err}");
    assert!(matches!(
        conn.status().await,
        McpStatus::Failed {
            restart_left: false,
            ..
        }
    ));
    assert!(wait_gone(second_pid).await);
}

#[tokio::test]
async fn list_changed_raises_the_flag_and_refresh_shows_the_new_tool() {
    let conn = connect("fault", &[]).await;
    assert!(!conn.take_tools_changed());
    assert!(!conn.tools().await.iter().any(|t| t.name == "extra"));
    conn.call("change_tools", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        wait_tools_changed(&conn).await,
        "list_changed never arrived"
    );
    let tools = conn.refresh_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "extra"));
    conn.shutdown().await;
}

#[tokio::test]
async fn a_bad_schema_is_skipped_and_named() {
    let conn = connect("fault", &["--bad-schema"]).await;
    assert!(!conn.tools().await.iter().any(|t| t.name == "broken"));
    let skipped = conn.skipped_tools().await;
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0, "broken");
    assert!(skipped[0].1.contains("not an object schema"));
    conn.shutdown().await;
}

#[tokio::test]
async fn a_slow_start_within_the_timeout_connects() {
    let conn = connect("fault", &["--start-delay-ms", "300"]).await;
    assert!(!conn.tools().await.is_empty());
    conn.shutdown().await;
}

#[tokio::test]
async fn a_start_slower_than_the_timeout_fails_naming_the_server() {
    let config = fault_config("slowpoke", &["--start-delay-ms", "60000", "--spawn-child"]);
    let timeouts = McpTimeouts {
        connect: Duration::from_millis(200),
        call: None,
    };
    let err = McpConnection::connect(&config, timeouts)
        .await
        .err()
        .expect("timeout");
    assert!(matches!(err, McpError::ConnectTimeout { .. }), "{err}");
    assert!(err.to_string().contains("slowpoke"));
}

#[tokio::test]
async fn a_missing_command_is_a_spawn_error_naming_the_server() {
    let mut config = fault_config("ghost", &[]);
    if let fleet_runtime::mcp::McpTransport::Stdio { command, .. } = &mut config.transport {
        *command = "/nonexistent/mcp-server".to_string();
    }
    let err = McpConnection::connect(&config, crate::mcp::support::timeouts())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, McpError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("ghost"));
}

/// Tool names the API would refuse (a space, `!`, 80 characters) must not make every request of
/// the session fail: odd characters become `_`, and a name that then collides with another or
/// is still too long is left out and named.
#[tokio::test]
async fn odd_tool_names_are_offered_safely_or_left_out_saying_why() {
    use fleet_runtime::mcp::McpTool;
    use fleet_tools::{Tool, ToolContext, Workspace};
    let conn = std::sync::Arc::new(connect("fault", &["--odd-names"]).await);
    let offered: Vec<String> = McpTool::all(&conn)
        .await
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert!(offered.contains(&"mcp__fault__odd_name_".to_string()));
    let pattern_ok = |n: &str| {
        n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    assert!(offered.iter().all(|n| pattern_ok(n)), "{offered:?}");
    let skipped = conn.skipped_tools().await;
    assert!(
        skipped
            .iter()
            .any(|(name, why)| name == "odd_name_" && why.contains("odd name!")),
        "{skipped:?}"
    );
    assert!(
        skipped
            .iter()
            .any(|(name, why)| name.len() == 80 && why.contains("longer than")),
        "{skipped:?}"
    );
    // The renamed tool still reaches the server under its own name.
    let tool = McpTool::all(&conn)
        .await
        .into_iter()
        .find(|t| t.name() == "mcp__fault__odd_name_")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let ctx = ToolContext::new(root.clone(), std::sync::Arc::new(Workspace::new(&root)));
    let out = tool.call(json!({}), &ctx).await.unwrap();
    assert_eq!(out.content, "odd answered");
}

/// A stdio server that dies before `initialize`: its whole stderr is in an owner-only log, the
/// reason is one line saying how it exited and what it said (its name not repeated inside), the
/// status report names the log, and a reconnect writes to the same log.
#[tokio::test]
async fn a_failed_start_keeps_its_stderr_in_a_private_log_that_its_status_names() {
    use fleet_runtime::mcp::config::McpConfig;
    use fleet_runtime::mcp::{McpLogs, McpServers, McpSource, McpTransport};
    use std::os::unix::fs::PermissionsExt as _;

    let home = tempfile::tempdir().unwrap();
    let logs = std::sync::Arc::new(McpLogs::open(home.path()).unwrap());
    let server = fleet_runtime::mcp::McpServerConfig {
        name: "db".into(),
        transport: McpTransport::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                "echo 'db: starting' >&2; echo 'Error: no DB_URL' >&2; \
                 echo '  at main (db.js:3)' >&2; exit 3"
                    .into(),
            ],
            env: Default::default(),
            cwd: None,
        },
        source: McpSource::FlagInline(0),
    };
    let config = McpConfig {
        servers: vec![server],
        ..McpConfig::default()
    };
    let servers =
        McpServers::start_logged(&config, crate::mcp::support::timeouts(), None, Some(logs)).await;
    let entry = &servers.entries[0];
    assert_eq!(
        entry.error.as_deref(),
        Some("it exited with status 3 before answering initialize; it said: Error: no DB_URL")
    );
    let log = entry.log.clone().expect("a log");
    assert!(log.starts_with(home.path().join("logs/mcp")), "{log:?}");
    let mode = std::fs::metadata(&log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("db: starting\nError: no DB_URL\n  at main (db.js:3)\n"),
        "{text}"
    );

    let failures = servers.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(
        failures[0].to_string(),
        format!(
            "MCP server \"db\" failed to start: it exited with status 3 before answering \
             initialize; it said: Error: no DB_URL (its output: {})",
            log.display()
        )
    );
    let status = servers.status().await;
    let error = status[0].error.clone().unwrap();
    assert!(
        error.ends_with(&format!("(its output: {})", log.display())),
        "{error}"
    );

    let err = servers.reconnect("db").await.expect_err("it fails again");
    let said = err.to_string();
    assert_eq!(said.matches("MCP server").count(), 1, "{said}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("--- fleet started sh").count(), 2, "{text}");
}
