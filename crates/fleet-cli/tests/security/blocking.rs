//! Nothing that blocks can hold fleet: Read and Grep refuse or skip FIFOs instead of waiting on
//! them, and SIGTERM ends fleet even while something waits forever (stdin that is never closed,
//! a question at the terminal nobody answers).
//!
//! The waits below are hang detectors, not speed checks: each gives fleet a minute to do what
//! takes it well under a second, and fails (killing it) only if it never happens.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const HANG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

/// Waits for `child` to exit; kills it and fails if it is still running after [`HANG`].
/// (Its output is read while it runs, so a full pipe cannot hold it.)
fn exits(child: Child, what: &str) -> Output {
    fleet_testkit::wait_output(child, HANG, &format!("fleet: {what}"))
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + HANG;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn read_and_grep_of_fifos_return_at_once() {
    let project = Project::new(&[("logs/old.txt", "needle in a log\n")]);
    mkfifo(&project.repo.join("pipe"));
    mkfifo(&project.repo.join("logs/live"));
    let server = server(Scenario::queue([
        Rule::tool_use("Read", json!({"file_path": project.path("pipe")})),
        Rule::tool_use(
            "Grep",
            json!({"pattern": "needle", "path": project.path("pipe")}),
        ),
        Rule::tool_use(
            "Grep",
            json!({"pattern": "needle", "path": "logs", "output_mode": "content"}),
        ),
        Rule::tool_use("Glob", json!({"pattern": "logs/*"})),
        Rule::text("done"),
    ]))
    .await;
    let cmd = project
        .command(&server, &["-p", "go", "--output-format", "stream-json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = tokio::task::spawn_blocking(move || exits(cmd, "reading FIFOs"))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let results: Vec<_> = json_lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "user")
        .map(|l| l["message"]["content"][0].clone())
        .collect();
    assert_eq!(results.len(), 4, "{results:#?}");
    let text = |i: usize| results[i]["content"].as_str().unwrap().to_string();
    assert_eq!(results[0]["is_error"], true);
    assert!(text(0).contains("not a regular file"), "{}", text(0));
    assert_eq!(results[1]["is_error"], true);
    assert!(text(1).contains("not a regular file"), "{}", text(1));
    assert!(
        text(2).ends_with("logs/old.txt:1:needle in a log"),
        "{}",
        text(2)
    );
    assert!(
        text(3).ends_with("logs/old.txt"),
        "Glob lists files: {}",
        text(3)
    );
}

#[tokio::test]
async fn sigterm_ends_a_run_whose_input_never_closes() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": "echo $$ > sh.pid; sleep 300"}))
            .when_tool_result(false),
        Rule::text("never"),
    ]))
    .await;
    let mut child = project
        .command(
            &server,
            &[
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypassPermissions",
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One message, and stdin stays open: the caller might send more.
    let mut stdin = child.stdin.take().unwrap();
    let message = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    writeln!(stdin, "{message}").unwrap();
    let repo = project.repo.clone();
    let out = tokio::task::spawn_blocking(move || {
        wait_for_file(&repo.join("sh.pid"));
        kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
        let out = exits(child, "SIGTERM with stdin still open");
        drop(stdin);
        out
    })
    .await
    .unwrap();
    assert!(!out.status.success(), "a stopped run exits non-zero");
    let lines = json_lines(&out);
    assert_eq!(result_of(&lines)["is_error"], true);
}

/// Runs `fleet -p go` on a terminal made by `script` and returns the `script` process, fleet's
/// pid, and what the terminal showed up to `until`. `None` without util-linux `script`.
fn on_terminal_until(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
    until: &str,
) -> Option<(Child, i32, String)> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let fleet = env!("CARGO_BIN_EXE_fleet");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("exec {fleet} -p go"), "/dev/null"]);
    project.environment(&mut cmd, server);
    let mut script = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = script.stdout.take().unwrap();
    // Read on a thread, which keeps the pipe drained afterwards so fleet never blocks on a
    // full terminal; the wait for `until` has a deadline.
    let (chunks, arrived) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut listened = true;
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            listened = listened && chunks.send(buf[..n].to_vec()).is_ok();
        }
    });
    let deadline = Instant::now() + HANG;
    let mut screen = Vec::new();
    while !String::from_utf8_lossy(&screen).contains(until) {
        let left = deadline.saturating_duration_since(Instant::now());
        match arrived.recv_timeout(left) {
            Ok(chunk) => screen.extend_from_slice(&chunk),
            Err(e) => panic!(
                "the terminal never showed {until:?} ({e}): {}",
                String::from_utf8_lossy(&screen)
            ),
        }
    }
    let children =
        std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", script.id())).unwrap();
    let fleet_pid: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    // The reader thread keeps draining the pipe; with the receiver dropped here, it discards.
    drop(arrived);
    Some((
        script,
        fleet_pid,
        String::from_utf8_lossy(&screen).into_owned(),
    ))
}

#[tokio::test]
async fn sigterm_ends_fleet_while_a_question_waits_for_an_answer() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "touch asked.txt"})),
        Rule::text("never"),
    ]))
    .await;
    tokio::task::spawn_blocking(move || {
        let Some((script, fleet, screen)) = on_terminal_until(&project, &server, "allow?") else {
            return;
        };
        assert!(screen.contains("touch asked.txt"), "{screen}");
        // Nobody answers: fleet's reader of the terminal is stuck in a blocking read.
        kill(Pid::from_raw(fleet), Signal::SIGTERM).unwrap();
        let out = exits(script, "SIGTERM while a question waits");
        assert!(!out.status.success());
        assert!(
            !project.repo.join("asked.txt").exists(),
            "the unanswered call never ran"
        );
    })
    .await
    .unwrap();
}
