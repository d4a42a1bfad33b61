//! One session, one process: a second `fleet -p --resume` of a session that is running is
//! refused with the holder's pid, and a session whose holder ended — normally or by `kill -9` —
//! can be resumed again.

use crate::common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::json;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A run whose prompt holds `hold-N` sits in a Bash call until the test creates `go-N`.
fn scenario() -> Scenario {
    let hold = |n: u32| {
        Rule::tool_use(
            "Bash",
            json!({"command": format!(
                "touch started-{n}; while [ ! -f go-{n} ]; do sleep 0.05; done; echo released"
            )}),
        )
        .when_last_user_contains(format!("hold-{n}"))
    };
    Scenario::with_rules([
        Rule::text("held-and-released").when_tool_result(true),
        hold(1),
        hold(2),
        Rule::text("ok"),
    ])
}

fn start_holding(project: &Project, server: &FakeModelServer, id: &str, n: u32) -> Child {
    let prompt = format!("hold-{n}");
    project
        .command(
            server,
            &[
                "-p",
                &prompt,
                "--resume",
                id,
                "--permission-mode",
                "bypassPermissions",
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `marker` exists in the repository: the holder is inside its Bash call, and so
/// holds the session. Fails only if it never happens.
async fn wait_for(repo: &Path, marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !repo.join(marker).exists() {
        assert!(Instant::now() < deadline, "{marker} never appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A project with one finished session: its server, transcript and id.
async fn one_session() -> (Project, FakeModelServer, std::path::PathBuf, String) {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(scenario()).await;
    let out = project.run(&server, &["-p", "first"], "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let transcript = project.transcripts().pop().unwrap();
    let id = transcript
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    (project, server, transcript, id)
}

async fn resume(project: &Project, server: &FakeModelServer, id: &str) -> std::process::Output {
    project
        .run(server, &["-p", "again", "--resume", id], "")
        .await
}

#[tokio::test]
async fn a_running_session_cannot_be_resumed_twice_and_is_free_once_its_holder_ends() {
    let (project, server, _transcript, id) = one_session().await;

    // A holds the session; B is refused by name and pid, before any request.
    let holder = start_holding(&project, &server, &id, 1);
    wait_for(&project.repo, "started-1").await;
    let requests_before = server.request_count();
    let refused = resume(&project, &server, &id).await;
    assert!(!refused.status.success());
    let err = stderr(&refused);
    assert!(
        err.contains(&format!("session {id} is in use by pid {}", holder.id())),
        "{err}"
    );
    assert_eq!(server.request_count(), requests_before, "B sent nothing");

    // A ends normally: the session is free, and its transcript holds A's turn whole.
    std::fs::write(project.repo.join("go-1"), "").unwrap();
    let held = tokio::task::spawn_blocking(move || {
        fleet_testkit::wait_output(holder, fleet_testkit::WAIT, "the holding run")
    })
    .await
    .unwrap();
    assert!(held.status.success(), "{}", stderr(&held));
    assert_eq!(stdout(&held), "held-and-released\n");
    let out = resume(&project, &server, &id).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
}

#[tokio::test]
async fn the_lock_of_a_killed_holder_is_taken_over() {
    let (project, server, transcript, id) = one_session().await;

    let mut holder = start_holding(&project, &server, &id, 2);
    wait_for(&project.repo, "started-2").await;
    let lock = transcript.with_extension("lock");
    let pid = std::fs::read_to_string(&lock).unwrap();
    assert_eq!(pid.trim(), holder.id().to_string());
    holder.kill().unwrap();
    let _ = holder.wait();
    // The killed run's Bash loop may outlive it; let it end.
    std::fs::write(project.repo.join("go-2"), "").unwrap();
    assert!(lock.exists(), "a killed holder leaves its lock file behind");

    let out = resume(&project, &server, &id).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    assert!(!lock.exists(), "released at the end of the run");
}
