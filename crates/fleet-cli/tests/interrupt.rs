//! Ctrl-C during a Bash call: the command and everything it started die, every call still gets
//! a result, and the run ends with an error result.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Whether `pid` is still a running process (a zombie waiting to be reaped counts as dead).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_for(path: &Path) -> String {
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text.trim().to_string();
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never appeared", path.display());
}

#[tokio::test]
async fn interrupting_during_bash_kills_the_command_and_its_children() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let command = "sleep 300 & echo $! > bg.pid; echo $$ > sh.pid; wait";
    let server = server(Scenario::queue([Rule::tool_use(
        "Bash",
        json!({"command": command, "timeout": 600000}),
    )]))
    .await;
    let mut cmd = project.command(
        &server,
        &[
            "-p",
            "run it",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let repo = project.repo.clone();
    let out = tokio::task::spawn_blocking(move || {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let shell = wait_for(&repo.join("sh.pid"));
        let background = wait_for(&repo.join("bg.pid"));
        assert!(alive(&shell) && alive(&background));
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet after SIGINT");
        // The process group was killed before fleet exited; allow the kernel a moment to
        // finish tearing the processes down.
        let mut gone = false;
        for _ in 0..100 {
            if !alive(&shell) && !alive(&background) {
                gone = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            gone,
            "shell {shell} or its background child {background} survived"
        );
        out
    })
    .await
    .unwrap();

    assert!(!out.status.success(), "an interrupted run exits non-zero");
    let lines = json_lines(&out);
    let results: Vec<_> = lines.iter().filter(|l| l["type"] == "user").collect();
    assert_eq!(results.len(), 1, "the Bash call got its result");
    assert_eq!(results[0]["message"]["content"][0]["is_error"], true);
    let result = result_of(&lines);
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(server.request_count(), 1, "no turn after the interrupt");
}

#[tokio::test]
async fn interrupting_while_a_background_agent_works_stops_it_and_its_commands() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let command = "sleep 300 & echo $! > bg.pid; wait";
    let server = server(Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": command, "timeout": 600000}))
            .when_system_contains("running as a subagent")
            .when_tool_result(false),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use(
            "Agent",
            json!({"description": "long job", "prompt": "run it", "run_in_background": true}),
        )
        .when_tool_result(false),
    ]))
    .await;
    let mut cmd = project.command(
        &server,
        &[
            "-p",
            "start it",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let repo = project.repo.clone();
    let (out, sleeper) = tokio::task::spawn_blocking(move || {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let sleeper = wait_for(&repo.join("bg.pid"));
        assert!(alive(&sleeper));
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let out = fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet after SIGINT");
        (out, sleeper)
    })
    .await
    .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if !alive(&sleeper) {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone, "the background agent's sleep {sleeper} survived");
    let lines = json_lines(&out);
    let notified = lines
        .iter()
        .find(|l| l["subtype"] == "task_notification")
        .expect("the killed task is reported");
    // `stopped` on the notification, as Claude Code and the SDKs' types say it.
    assert_eq!(notified["status"], "stopped");
    let result = result_of(&lines);
    assert_eq!(result["result"], "MAIN-WAITING");
    // The result carries the tree's final figures, the kill on the way out included.
    assert_eq!(result["subagent_stats"]["killed"]["user"], 1);
    assert_eq!(result["usage_by_agent"][1]["status"], "killed");
}
