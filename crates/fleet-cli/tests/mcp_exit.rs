//! No MCP server outlives fleet, checked by pid on the real binary: not after Ctrl-C in the
//! middle of a call that never answers, and not after a panic. The servers run with
//! `--spawn-child`, so a grandchild in the server's process group must go too.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{server, Project};
use fleet_testkit::{Rule, Scenario};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

/// Gone: no such process, or a zombie (it runs nothing).
fn gone(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return true;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(") ")
        .is_none_or(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'))
}

/// Waits for `pid` to be gone; the deadline only keeps a broken build from hanging.
fn wait_gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_hung_call_leaves_no_server_behind() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let log = project.repo.join("server.log");
    let config = json!({"mcpServers": {"faulty": {
        "command": fault, "args": ["--spawn-child", "--log", log]
    }}})
    .to_string();
    let server = server(Scenario::with_rules([
        Rule::text("NEVER").when_tool_result_contains("cancelled"),
        Rule::tool_use("mcp__faulty__hang", json!({})).when_tool_result_contains("child"),
        Rule::tool_use("mcp__faulty__pids", json!({})).when_tool_result(false),
    ]))
    .await;
    let mut cmd = project.command(
        &server,
        &[
            "-p",
            "hang",
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__faulty",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    cmd.env("MCP_TIMEOUT", "10000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    // The server's pids come back as the first tool result; then the model calls `hang`.
    // The reader drains stdout to the end, so fleet never writes into a closed pipe.
    let (found, pids_found) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut found = Some(found);
        for line in BufReader::new(stdout).lines() {
            let Ok(value) = serde_json::from_str::<Value>(&line.unwrap()) else {
                continue;
            };
            let text = value["message"]["content"][0]["content"]
                .as_str()
                .unwrap_or("");
            if value["type"] == "user" && text.contains("\"child\"") {
                let parsed: Value = serde_json::from_str(text).unwrap();
                let pids = (
                    parsed["pid"].as_i64().unwrap() as i32,
                    parsed["child"].as_i64().unwrap() as i32,
                );
                if let Some(found) = found.take() {
                    found.send(pids).unwrap();
                }
            }
        }
    });
    let pids = tokio::task::spawn_blocking(move || {
        pids_found
            .recv_timeout(Duration::from_secs(60))
            .expect("the pids tool answered")
    })
    .await
    .unwrap();
    // Ctrl-C only once the server is inside the call that never answers.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("started hang")
    {
        assert!(Instant::now() < deadline, "the hang call never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!gone(pids.0) && !gone(pids.1), "both run before Ctrl-C");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = tokio::task::spawn_blocking(move || {
        fleet_testkit::wait_child(&mut child, fleet_testkit::WAIT, "fleet to exit on SIGINT")
    })
    .await
    .unwrap();
    reader.join().unwrap();
    assert!(!status.success(), "an interrupted run does not succeed");
    assert!(wait_gone(pids.0), "the server {} outlived fleet", pids.0);
    assert!(
        wait_gone(pids.1),
        "the server's child {} outlived fleet",
        pids.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_leaves_no_server_behind() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {
        "one": {"command": fault, "args": ["--spawn-child"]},
        "two": {"command": fault, "args": ["--spawn-child"]}
    }})
    .to_string();
    let server = server(Scenario::with_rules([])).await;
    let out = project
        .run_with_env(
            &server,
            &["dev", "mcp-crash", "--mcp-config", &config],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    let stderr = common::stderr(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("crashing on purpose"), "{stderr}");
    let pids: Vec<i32> = stderr
        .split("(pids ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{stderr}");
    for pid in pids {
        assert!(wait_gone(pid), "the server {pid} outlived the crash");
        // Its `sleep 600` grandchild shares its process group, which is the server's pid.
        // (pgrep also lists zombies nobody has reaped yet; those run nothing.)
        let group = std::process::Command::new("pgrep")
            .args(["-g", &pid.to_string()])
            .output()
            .unwrap();
        for member in String::from_utf8_lossy(&group.stdout).split_whitespace() {
            let member: i32 = member.parse().unwrap();
            assert!(
                wait_gone(member),
                "process {member} of server {pid}'s group outlived the crash"
            );
        }
    }
}
