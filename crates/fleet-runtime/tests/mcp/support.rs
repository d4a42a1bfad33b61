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

/// server-everything's entry point, installing it first if needed (pinned, under the target
/// folder, by `scripts/mcp-everything.sh`); `None`, saying so, when node or npm is missing.
pub fn everything_entry() -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-everything.sh");
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
