//! With a person at a terminal, a call that needs approval is asked about — here through a
//! real pseudo-terminal made by util-linux `script` — and the answer decides whether it runs.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `fleet -p go --verbose` on a terminal, typing `typed`; `None` when this machine has no
/// `script` to make the terminal.
async fn on_terminal(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
    typed: &str,
) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let fleet = env!("CARGO_BIN_EXE_fleet");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("{fleet} -p go --verbose"), "/dev/null"]);
    project.environment(&mut cmd, server);
    let typed = typed.to_string();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(typed.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn scenario() -> Scenario {
    Scenario::queue([
        Rule::tool_use(
            "Bash",
            json!({"command": "touch made.txt && echo ran-for-real"}),
        ),
        Rule::text("finished"),
    ])
}

#[tokio::test]
async fn yes_at_the_prompt_runs_the_call() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let Some(screen) = on_terminal(&project, &server, "y\n").await else {
        return;
    };
    assert!(
        screen.contains("Bash wants to run `touch made.txt && echo ran-for-real`"),
        "{screen}"
    );
    assert!(
        screen.contains("ran-for-real\r\n") || screen.contains("⎿ ran-for-real"),
        "{screen}"
    );
    let second = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(second["content"], "ran-for-real", "{second}");
}

#[tokio::test]
async fn no_at_the_prompt_refuses_the_call() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let Some(screen) = on_terminal(&project, &server, "n\n").await else {
        return;
    };
    assert!(screen.contains("allow?"), "{screen}");
    let second = server.requests()[1].body["messages"][2]["content"][0].clone();
    assert_eq!(second["is_error"], true, "{second}");
    assert!(
        second["content"].as_str().unwrap().contains("refused"),
        "{second}"
    );
}
