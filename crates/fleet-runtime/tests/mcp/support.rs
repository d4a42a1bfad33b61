use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use fleet_runtime::mcp::{McpConnection, McpServerConfig, McpSource, McpTimeouts, McpTransport};
use nix::sys::signal::kill;
use nix::unistd::Pid;

pub fn fault_config(name: &str, args: &[&str]) -> McpServerConfig {
    let command = fleet_testkit::mcp_fault_server().expect("build fleet-mcp-fault");
    McpServerConfig {
        name: name.to_string(),
        transport: McpTransport::Stdio {
            command: command.display().to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        source: McpSource::FlagInline(0),
    }
}

pub fn timeouts() -> McpTimeouts {
    McpTimeouts {
        connect: Duration::from_secs(60),
        call: None,
    }
}

pub async fn connect(name: &str, args: &[&str]) -> McpConnection {
    McpConnection::connect(&fault_config(name, args), timeouts())
        .await
        .expect("connect")
}

/// Gone: no such process, or a zombie nobody has reaped yet (it runs nothing).
pub fn is_gone(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return true;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the parenthesised command name.
    stat.rsplit_once(") ")
        .is_none_or(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'))
}

/// Waits until `pid` is gone; a kill is asynchronous, so this polls (the deadline only keeps
/// a broken build from hanging the suite, it asserts nothing about speed).
pub async fn wait_gone(pid: i32) -> bool {
    for _ in 0..600 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

pub async fn wait_for_line(path: &Path, line: &str) -> bool {
    for _ in 0..600 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().any(|l| l == line) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// server-everything's entry point (see `fleet_testkit::mcp_everything_entry`).
pub fn everything_entry() -> Option<String> {
    fleet_testkit::mcp_everything_entry()
}

/// Waits for the server's `list_changed` to reach `conn`: the notification travels beside the
/// call's result, so a test waits for it rather than racing it.
pub async fn wait_tools_changed(conn: &McpConnection) -> bool {
    for _ in 0..600 {
        if conn.take_tools_changed() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// An agent holding `servers`' tools (in bypassPermissions) and watching them for changes
/// before each request, as the session's main agent does.
pub async fn watching_agent(
    model: &fleet_testkit::FakeModelServer,
    dir: &Path,
    servers: &fleet_runtime::mcp::McpServers,
) -> fleet_runtime::Agent {
    let mut config = super::common::config(
        dir,
        servers.tools().await,
        fleet_tools::permissions::PermissionMode::BypassPermissions,
    );
    config.tools.mcp_live = fleet_runtime::mcp::McpLive::for_session(servers, false);
    super::common::agent_with(model, dir, config)
}
