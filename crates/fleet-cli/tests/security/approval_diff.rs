//! The terminal prompt of `fleet -p` for a Write or Edit shows the change it would make — the
//! file's line numbers, `-` and `+` lines, red and green unless `NO_COLOR` says otherwise,
//! folded when long — and a file change that would fail (a file not read, an `old_string`
//! not found) is never put to the person: the model gets the error at once. Through a real
//! pseudo-terminal made by util-linux `script`, as in `approval.rs`.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `fleet -p go` on a terminal, typing `typed`, with `NO_COLOR` set or not; the terminal's
/// output, or `None` when this machine has no `script` to make the terminal.
async fn on_terminal(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
    typed: &str,
    no_color: bool,
) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let fleet = env!("CARGO_BIN_EXE_fleet");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("{fleet} -p go"), "/dev/null"]);
    project.environment(&mut cmd, server);
    if no_color {
        cmd.env("NO_COLOR", "1");
    } else {
        cmd.env_remove("NO_COLOR");
    }
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
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet at a terminal")
    })
    .await
    .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|i| format!("line {i}\n")).collect()
}

/// What the model got back for its `n`th call (0-based), from the request after it.
fn result_of(server: &fleet_testkit::FakeModelServer, n: usize) -> serde_json::Value {
    let requests = server.requests();
    let messages = requests[n + 1].body["messages"].as_array().unwrap().clone();
    messages.last().unwrap()["content"][0].clone()
}

#[tokio::test]
async fn an_edit_is_asked_about_with_its_diff_in_colour() {
    let project = Project::new(&[("notes.txt", &numbered(1..=40))]);
    let path = project.path("notes.txt");
    let server = server(Scenario::queue([
        Rule::tool_use("Read", json!({ "file_path": path })),
        Rule::tool_use(
            "Edit",
            json!({"file_path": path, "old_string": "line 20\n",
                   "new_string": "LINE TWENTY\nline 20 and a half\n"}),
        ),
        Rule::text("finished"),
    ]))
    .await;
    let Some(screen) = on_terminal(&project, &server, "y\n", false).await else {
        return;
    };
    assert!(
        screen.contains("? Edit wants to write (2 lines added, 1 removed):\r\n"),
        "{screen:?}"
    );
    assert!(screen.contains(&format!("  │ {path}\r\n")), "{screen:?}");
    assert!(screen.contains("  │ 17   line 17\r\n"), "{screen:?}");
    assert!(
        screen.contains("  │ \u{1b}[31m20 - line 20\u{1b}[0m\r\n"),
        "removed in red: {screen:?}"
    );
    assert!(
        screen.contains("  │ \u{1b}[32m20 + LINE TWENTY\u{1b}[0m\r\n"),
        "added in green: {screen:?}"
    );
    assert!(
        screen.contains("  │ \u{1b}[32m21 + line 20 and a half\u{1b}[0m\r\n"),
        "{screen:?}"
    );
    assert!(screen.contains("  │ 22   line 21\r\n"), "{screen:?}");
    assert_eq!(result_of(&server, 1)["is_error"], serde_json::Value::Null);
    assert!(project
        .read("notes.txt")
        .contains("LINE TWENTY\nline 20 and a half\nline 21\n"));
}

#[tokio::test]
async fn a_new_file_is_shown_as_added_lines_folded_without_colour_under_no_color() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let path = project.path("big.txt");
    let server = server(Scenario::queue([
        Rule::tool_use(
            "Write",
            json!({"file_path": path, "content": numbered(1..=300)}),
        ),
        Rule::text("finished"),
    ]))
    .await;
    let Some(screen) = on_terminal(&project, &server, "n\n", true).await else {
        return;
    };
    assert!(
        screen.contains("? Write wants to write (new file, 300 lines):\r\n"),
        "{screen:?}"
    );
    assert!(
        !screen.contains('\u{1b}'),
        "no colour under NO_COLOR: {screen:?}"
    );
    let asked = &screen[screen.find("? Write").unwrap()..screen.find("allow?").unwrap()];
    let rows: Vec<&str> = asked.split("\r\n").collect();
    assert!(rows.contains(&"  │   1 + line 1"), "{asked}");
    assert!(rows.contains(&"  │  12 + line 12"), "{asked}");
    assert!(!rows.contains(&"  │  13 + line 13"), "{asked}");
    assert!(rows.contains(&"  │ … 282 more lines"), "{asked}");
    assert!(rows.contains(&"  │ 295 + line 295"), "{asked}");
    assert!(rows.contains(&"  │ 300 + line 300"), "{asked}");
    assert!(rows.len() < 30, "a typical screen holds it: {asked}");
    assert!(
        !project.repo.join("big.txt").exists(),
        "refused, not written"
    );
}

/// An Edit of a file the agent never read, one whose `old_string` is not there, and a Write
/// over an unread file would all fail: nobody is asked, and each error reaches the model. The
/// `y`s typed would approve anything that was asked.
#[tokio::test]
async fn a_change_that_would_fail_is_never_asked_about() {
    let project = Project::new(&[("kept.txt", "original\n"), ("read.txt", "one\n")]);
    let kept = project.path("kept.txt");
    let read = project.path("read.txt");
    let server = server(Scenario::queue([
        Rule::tool_use(
            "Edit",
            json!({"file_path": kept, "old_string": "original", "new_string": "changed"}),
        ),
        Rule::tool_use(
            "Write",
            json!({"file_path": kept, "content": "clobbered\n"}),
        ),
        Rule::tool_use("Read", json!({ "file_path": read })),
        Rule::tool_use(
            "Edit",
            json!({"file_path": read, "old_string": "two", "new_string": "three"}),
        ),
        Rule::text("finished"),
    ]))
    .await;
    let Some(screen) = on_terminal(&project, &server, "y\ny\ny\ny\n", true).await else {
        return;
    };
    assert!(!screen.contains("wants to"), "asked: {screen:?}");
    let unread_edit = result_of(&server, 0);
    assert_eq!(unread_edit["is_error"], true, "{unread_edit}");
    assert!(
        unread_edit["content"]
            .as_str()
            .unwrap()
            .contains("not read"),
        "{unread_edit}"
    );
    let unread_write = result_of(&server, 1);
    assert!(
        unread_write["content"]
            .as_str()
            .unwrap()
            .contains("not read"),
        "{unread_write}"
    );
    let not_found = result_of(&server, 3);
    assert!(
        not_found["content"]
            .as_str()
            .unwrap()
            .contains("was not found"),
        "{not_found}"
    );
    assert_eq!(project.read("kept.txt"), "original\n");
    assert_eq!(project.read("read.txt"), "one\n");
    assert!(screen.contains("finished"), "{screen:?}");
}
