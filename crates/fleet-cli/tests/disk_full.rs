//! A full disk and an unwritable `$FLEET_HOME`, on a real filesystem: a small tmpfs in a
//! private mount namespace (see `disk_full/small_disk.rs`), so ENOSPC and EROFS come from the
//! kernel. What must hold: the result names the file and the reason (not "cancelled") in
//! every output format, the exit code is non-zero, nothing written or acknowledged before is
//! lost or cut, and the session resumes once there is room again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
#[path = "disk_full/small_disk.rs"]
mod small_disk;

use common::{json_lines, result_of, stderr, stdout, Project};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};
use small_disk::SmallDisk;
use std::path::Path;
use std::process::Output;

/// Small enough to fill at once, big enough for a few sessions.
const DISK_KIB: u32 = 256;
const FULL: &str = "No space left on device (ENOSPC)";
const READ_ONLY: &str = "Read-only file system (EROFS)";

/// The project's fleet home on a small tmpfs, or `None` (said on stderr) where this machine
/// cannot mount one: no `unshare`, or no mount namespaces for this user.
fn small_disk(project: &Project) -> Option<SmallDisk> {
    match SmallDisk::mount(&project.fleet_home, DISK_KIB) {
        Ok(disk) => Some(disk),
        Err(why) => {
            eprintln!("SKIPPED: a disk-full test needs a real small filesystem: {why}");
            None
        }
    }
}

/// `fleet args…` in the project, with its fleet home on `disk`, off the async runtime.
async fn fleet(
    project: &Project,
    disk: &SmallDisk,
    server: &FakeModelServer,
    args: &[&str],
) -> Output {
    let mut cmd = disk.command_in(&project.repo, env!("CARGO_BIN_EXE_fleet"));
    cmd.args(args);
    project.environment(&mut cmd, server);
    let what = format!("fleet {}", args.join(" "));
    tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, &what)
    })
    .await
    .unwrap()
}

/// The one JSON object `--output-format json` prints.
fn json_result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON result ({e}): {}\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// Asserts `result` is an error naming `path` and `reason`, never "cancelled".
fn names_the_cause(result: &Value, path: &str, reason: &str) {
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    let text = result["result"].as_str().unwrap();
    assert!(text.contains(path), "names {path}: {text}");
    assert!(text.contains(reason), "says {reason}: {text}");
    assert!(!text.contains("cancelled"), "{text}");
}

/// Every line of a transcript is whole JSON.
fn all_lines_whole(bytes: &[u8]) -> usize {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(text.ends_with('\n'), "the last line is whole: {text:?}");
    for line in text.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("a transcript line is not JSON ({e}): {line}"));
    }
    text.lines().count()
}

/// Whether the model's last request carried `marker` in its conversation.
fn last_request_has(server: &FakeModelServer, marker: &str) -> bool {
    let requests = server.requests();
    let last = requests.last().expect("the model was asked");
    last.body["messages"].to_string().contains(marker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_the_result_in_every_format_and_the_session_resumes_once_space_is_back() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let Some(disk) = small_disk(&project) else {
        return;
    };
    let server = common::server(Scenario::demo()).await;
    let id = "5e55a0e0-0000-4000-8000-000000000001";

    let out = fleet(
        &project,
        &disk,
        &server,
        &[
            "-p",
            "FIRST-PROMPT",
            "--output-format",
            "json",
            "--session-id",
            id,
        ],
    )
    .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let transcripts = disk.files("projects", &format!("{id}.jsonl"));
    assert_eq!(transcripts.len(), 1, "{transcripts:?}");
    let transcript = transcripts[0].clone();
    let path = transcript.display().to_string();
    let before = disk.read(&transcript);
    let lines_before = all_lines_whole(&before);

    disk.fill();

    // Resumed with a prompt too big for what the transcript's last page has left: its line
    // cannot be written. json: the result says so.
    let big = format!("SECOND-PROMPT {}", "x".repeat(12_000));
    let out = fleet(
        &project,
        &disk,
        &server,
        &["-p", &big, "--output-format", "json", "--resume", id],
    )
    .await;
    assert!(!out.status.success(), "a full disk is a failure");
    names_the_cause(&json_result(&out), &path, FULL);
    let err = stderr(&out);
    assert!(err.contains(FULL), "{err}");
    assert_eq!(err.matches("No space left").count(), 1, "said once: {err}");
    assert_eq!(
        disk.read(&transcript),
        before,
        "the lines written before are intact, and nothing of the failed one stays"
    );

    // stream-json, a new session: its result line says it too.
    let out = fleet(
        &project,
        &disk,
        &server,
        &[
            "-p",
            "NEW-PROMPT",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    assert!(!out.status.success(), "a full disk is a failure");
    let lines = json_lines(&out);
    let home = project.fleet_home.display().to_string();
    names_the_cause(result_of(&lines), &home, FULL);

    // Text: one line on stderr, naming the file and the reason.
    let out = fleet(&project, &disk, &server, &["-p", "NEW-PROMPT"]).await;
    assert!(!out.status.success(), "a full disk is a failure");
    let said: Vec<_> = stderr(&out)
        .lines()
        .filter(|l| l.contains(FULL))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "said once: {}", stderr(&out));
    assert!(said[0].contains(&home), "{}", said[0]);
    assert!(!stderr(&out).contains("cancelled"), "{}", stderr(&out));

    // The sessions that never began left nothing behind: no empty transcript for `--continue`
    // to pick, no lock file.
    assert_eq!(disk.files("projects", ".jsonl"), vec![transcript.clone()]);
    assert_eq!(
        disk.files("projects", ".lock"),
        Vec::<std::path::PathBuf>::new()
    );

    disk.free();

    let out = fleet(
        &project,
        &disk,
        &server,
        &[
            "-p",
            "THIRD-PROMPT",
            "--output-format",
            "json",
            "--resume",
            id,
        ],
    )
    .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        last_request_has(&server, "FIRST-PROMPT") && last_request_has(&server, "THIRD-PROMPT"),
        "the resumed conversation goes on from the first run"
    );
    let after = disk.read(&transcript);
    assert!(after.starts_with(&before), "appended to, never rewritten");
    assert!(all_lines_whole(&after) > lines_before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_fleet_home_is_a_clear_error_naming_the_path() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let Some(disk) = small_disk(&project) else {
        return;
    };
    let server = common::server(Scenario::demo()).await;
    let id = "5e55a0e0-0000-4000-8000-000000000002";
    let out = fleet(
        &project,
        &disk,
        &server,
        &[
            "-p",
            "FIRST-PROMPT",
            "--output-format",
            "json",
            "--session-id",
            id,
        ],
    )
    .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let transcript = disk.files("projects", &format!("{id}.jsonl")).remove(0);
    let before = disk.read(&transcript);

    disk.read_only();

    let home = project.fleet_home.display().to_string();
    let out = fleet(
        &project,
        &disk,
        &server,
        &["-p", "NEW-PROMPT", "--output-format", "json"],
    )
    .await;
    assert!(!out.status.success(), "an unwritable home is a failure");
    names_the_cause(&json_result(&out), &home, READ_ONLY);

    // Resuming stops before the run, on the session's lock file: stderr names it.
    let out = fleet(
        &project,
        &disk,
        &server,
        &["-p", "AGAIN", "--output-format", "json", "--resume", id],
    )
    .await;
    assert!(!out.status.success(), "an unwritable home is a failure");
    let err = stderr(&out);
    assert!(err.contains(READ_ONLY) && err.contains(&home), "{err}");
    assert_eq!(
        err.matches("Read-only file system").count(),
        1,
        "said once: {err}"
    );
    assert_eq!(
        disk.read(&transcript),
        before,
        "the transcript is untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_acknowledged_before_the_disk_filled_is_still_there() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let Some(disk) = small_disk(&project) else {
        return;
    };
    let server = common::server(Scenario::queue([
        Rule::tool_use("TeamCreate", json!({"team_name": "crew"})),
        Rule::text("TEAM-MADE"),
    ]))
    .await;
    let out = fleet(&project, &disk, &server, &["-p", "make a team"]).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));

    let out = fleet(
        &project,
        &disk,
        &server,
        &["team", "send", "crew", "team-lead", "BEFORE-FULL"],
    )
    .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let acknowledged = stdout(&out).trim().to_string();

    disk.fill();

    let big = format!("AFTER-FULL {}", "y".repeat(12_000));
    let out = fleet(
        &project,
        &disk,
        &server,
        &["team", "send", "crew", "team-lead", &big],
    )
    .await;
    assert!(
        !out.status.success(),
        "a message that cannot be stored is refused"
    );
    let err = stderr(&out);
    assert!(err.contains(FULL) && err.contains("inboxes"), "{err}");
    // The refused message left no part of itself in the inbox file.
    let segments = disk.files("teams/crew/inboxes", ".jsonl");
    assert!(!segments.is_empty(), "the lead's inbox is on the disk");
    for segment in &segments {
        let bytes = disk.read(segment);
        assert!(
            !String::from_utf8_lossy(&bytes).contains("AFTER-FULL"),
            "{}",
            segment.display()
        );
        all_lines_whole(&bytes);
    }

    let inbox = |out: &Output| -> Vec<Value> {
        assert!(out.status.success(), "{}\n{}", stdout(out), stderr(out));
        assert!(
            !stderr(out).contains("cut short"),
            "no torn line: {}",
            stderr(out)
        );
        let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
        listed["entries"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("a list of messages: {listed}"))
    };
    let out = fleet(
        &project,
        &disk,
        &server,
        &["team", "inbox", "crew", "team-lead", "--json"],
    )
    .await;
    let messages = inbox(&out);
    let texts: Vec<_> = messages.iter().map(|m| m["text"].clone()).collect();
    assert_eq!(texts, vec![json!("BEFORE-FULL")], "{messages:#?}");
    let id = messages[0]["msg_id"].as_str().unwrap();
    assert!(
        acknowledged.contains(id),
        "the message acknowledged as {acknowledged:?}: {messages:#?}"
    );
    assert_eq!(messages[0]["read"], false, "still to be delivered");

    disk.free();
    let out = fleet(
        &project,
        &disk,
        &server,
        &["team", "send", "crew", "team-lead", "AFTER-SPACE"],
    )
    .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let out = fleet(
        &project,
        &disk,
        &server,
        &["team", "inbox", "crew", "team-lead", "--json"],
    )
    .await;
    let texts: Vec<_> = inbox(&out).iter().map(|m| m["text"].clone()).collect();
    assert_eq!(texts, vec![json!("BEFORE-FULL"), json!("AFTER-SPACE")]);
}

/// The mount is private: outside the namespace the fleet home is an ordinary empty folder.
#[test]
fn the_small_disk_is_seen_only_inside_its_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("home");
    let Ok(disk) = SmallDisk::mount(&dir, DISK_KIB) else {
        eprintln!("SKIPPED: no mount namespaces here");
        return;
    };
    let out = disk.sh(&format!("echo inside > '{}/mark'", dir.display()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(disk.read(&dir.join("mark")), b"inside\n");
    assert!(
        !Path::new(&dir).join("mark").exists(),
        "not on the machine's disk"
    );
}
