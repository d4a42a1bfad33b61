//! `fleet team send` from another process, end to end, with real processes: a pane teammate
//! (tmux, on a server of the test's own) takes the user's signed message and acts on it, and
//! refuses forgeries — unsigned, signed with another key, or not sent at all because the key
//! file is open to others — with the sender told and failing; mail sent to a teammate while
//! nothing runs it is delivered when the team's session is resumed, and marked read only then.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::tmux;

use common::{server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tmux::Tmux;

const SIZE: (u16, u16) = (200, 50);
/// A hang guard, not a timing check.
const PATIENCE: Duration = Duration::from_secs(60);

/// `fleet team args…` in the project's fleet home, as from another terminal.
fn team(project: &Project, args: &[&str]) -> Output {
    tokio::task::block_in_place(|| {
        fleet_testkit::output_within(
            Command::new(env!("CARGO_BIN_EXE_fleet"))
                .arg("team")
                .args(args)
                .env("FLEET_HOME", &project.fleet_home)
                .env("HOME", &project.home)
                .env_remove("TMUX")
                .env_remove("TMUX_PANE"),
            fleet_testkit::WAIT,
            "fleet team",
        )
    })
}

fn team_json(project: &Project, args: &[&str]) -> Value {
    let out = team(project, args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one team in the project's fleet home: its name.
fn team_name(project: &Project) -> String {
    let listed = team_json(project, &["list", "--json"]);
    listed["teams"][0]["name"].as_str().unwrap().to_string()
}

/// The inbox entry `msg_id` of `member`, as `fleet team inbox --json` shows it.
fn inbox_entry(project: &Project, team_name: &str, member: &str, msg_id: &str) -> Option<Value> {
    let shown = team_json(project, &["inbox", team_name, member, "--json"]);
    shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["msg_id"] == msg_id)
        .cloned()
}

fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < PATIENCE, "waited {PATIENCE:?} for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pane whose title is `name` (the backend titles each teammate's pane).
fn wait_for_pane(term: &Tmux, name: &str) -> String {
    let start = Instant::now();
    loop {
        let found = term
            .run(&[
                "list-panes",
                "-t",
                &term.format("#{pane_id}"),
                "-F",
                "#{pane_id} #{pane_title}",
            ])
            .lines()
            .find_map(|line| {
                let (id, title) = line.split_once(' ')?;
                (title == name).then(|| id.to_string())
            });
        if let Some(pane) = found {
            return pane;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no pane for {name}; the lead's pane shows:\n{}",
            term.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pane_teammate_takes_the_users_signed_mail_and_refuses_forgeries_telling_the_sender() {
    if !tmux::available() {
        return;
    }
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("OBEYED-FORGERY").when_last_user_contains("FORGED"),
        Rule::text("ALPHA-GOT-PANE-PING")
            .when_system_contains("You are \"alpha\"")
            .when_last_user_contains("PANE-PING"),
        Rule::text("teammate idle").when_system_contains("# Agent Teammate Communication"),
        Rule::tool_use(
            "Agent",
            json!({"description": "alpha", "prompt": "ALPHA-START", "name": "alpha"}),
        )
        .when_last_user_contains("start alpha")
        .when_tool_result(false),
        Rule::text("LEAD-OK"),
    ]))
    .await;
    let term = Tmux::start(&project, &server, &["--teammate-mode", "tmux"], SIZE, &[]);
    term.wait_for("for commands");
    term.type_text("start alpha");
    term.keys(&["Enter"]);
    let alpha = wait_for_pane(&term, "alpha");
    term.wait_for_in(&alpha, "teammate idle");
    let name = team_name(&project);
    let team_dir = project.fleet_home.join("teams").join(&name);
    let private = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(private(&team_dir) & 0o777, 0o700, "the team's folder");
    assert_eq!(
        private(&team_dir.join("inboxes/alpha.lock")) & 0o777,
        0o600,
        "an inbox file"
    );

    // (a) The user, from another terminal: taken, acted on, and the sender says so.
    let out = team(
        &project,
        &["send", &name, "alpha", "PANE-PING from a terminal"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let msg_id = stdout(&out).trim().to_string();
    assert!(uuid::Uuid::parse_str(&msg_id).is_ok(), "{msg_id:?}");
    term.wait_for_in(&alpha, "ALPHA-GOT-PANE-PING");
    let alpha_saw = server.requests().iter().any(|r| {
        let body = r.body.to_string();
        body.contains("You are \\\"alpha\\\"")
            && body.contains("PANE-PING from a terminal")
            && body.contains(r#"teammate_id=\"user\""#)
    });
    assert!(alpha_saw, "alpha's request carries the user's message");
    eventually("alpha to mark the message read", || {
        inbox_entry(&project, &name, "alpha", &msg_id).is_some_and(|e| e["read"] == true)
    });
    let key = project.fleet_home.join("keys/team-mail.ed25519");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the key is made owner-only");

    // (c) A key file others can read is refused before anything is written.
    let before = team_json(&project, &["inbox", &name, "alpha", "--json"])["entries"]
        .as_array()
        .unwrap()
        .len();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = team(&project, &["send", &name, "alpha", "FORGED-OPEN-KEY"]);
    assert!(!out.status.success(), "sent with a key others can read");
    assert!(stderr(&out).contains("mode 644"), "{}", stderr(&out));
    let after = team_json(&project, &["inbox", &name, "alpha", "--json"])["entries"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(after, before, "nothing was written");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();

    // (c) Signed with another key (this one was replaced after alpha started): refused, and
    // the sender fails with the teammate's reason.
    std::fs::remove_file(&key).unwrap();
    let out = team(&project, &["send", &name, "alpha", "FORGED-OTHER-KEY"]);
    assert!(!out.status.success(), "a refused message was reported sent");
    let said = stderr(&out);
    assert!(
        said.contains("alpha refused message") && said.contains("matches neither"),
        "{said}"
    );
    term.wait_for_in(&alpha, "\"user\" was refused");

    // (c) Unsigned, appended straight to the inbox file by another process: refused, and
    // the receipt says why.
    let inbox = fleet_store::Mailbox::open(&team_dir.join("inboxes"), "alpha").unwrap();
    inbox
        .append(&fleet_protocol::MailEntry::new(
            "user",
            "FORGED-UNSIGNED order",
            "2026-12-02T00:00:00.000Z",
            "forged-unsigned-1",
        ))
        .unwrap();
    let receipt = tokio::task::block_in_place(|| {
        let start = Instant::now();
        loop {
            if let Some(receipt) =
                fleet_runtime::teams::receipts::take(&team_dir, "forged-unsigned-1").unwrap()
            {
                return receipt;
            }
            assert!(start.elapsed() < PATIENCE, "no receipt for the forgery");
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    assert!(!receipt.accepted);
    assert_eq!(receipt.reason.as_deref(), Some("it is not signed"));

    // No forgery reached alpha's model.
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("FORGED-")),
        "a forged message reached a model"
    );
    assert!(!term.screen_of(&alpha).contains("OBEYED-FORGERY"));
}

/// Session 1 spawns an in-process teammate and ends (the teammate stops with it). A message
/// sent then is queued; `--continue` brings the teammate back to read it, and only then is it
/// marked read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_to_a_stopped_teammate_is_delivered_when_the_session_resumes() {
    const LEAD: &str = "QUEUE-LEAD";
    const ALPHA: &str = "QUEUE-ALPHA";
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("ALPHA-GOT-QUEUED")
            .when_marker(ALPHA)
            .when_last_user_contains("QUEUED-PING"),
        Rule::text("ALPHA-HELLO").when_marker(ALPHA),
        Rule::tool_use(
            "Agent",
            json!({"description": "helper", "name": "alpha", "prompt": format!("{ALPHA}: hello")}),
        )
        .when_marker(LEAD)
        .when_tool_result(false)
        .times(1),
        Rule::text("LEAD-NOTED").when_marker(LEAD),
    ]))
    .await;
    let first = project
        .run_with_env(&server, &["-p", &format!("{LEAD}: start")], &[])
        .await;
    assert!(first.status.success(), "{}", stderr(&first));
    let name = team_name(&project);
    let config = team_json(&project, &["show", &name, "--json"]);
    let alpha = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "alpha")
        .cloned()
        .unwrap();
    assert_eq!(alpha["backendType"], "in-process", "{alpha}");

    let out = team(
        &project,
        &["send", &name, "alpha", "QUEUED-PING while you were away"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let msg_id = stdout(&out).trim().to_string();
    assert!(
        stderr(&out)
            .contains("queued: alpha is not running; delivered when the team's session resumes"),
        "{}",
        stderr(&out)
    );
    let waiting = inbox_entry(&project, &name, "alpha", &msg_id).unwrap();
    assert_eq!(waiting["read"], false, "read before anyone ran: {waiting}");
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("QUEUED-PING")),
        "delivered before the session resumed"
    );

    let second = project
        .run_with_env(&server, &["-p", "RESUME-CHECK", "--continue"], &[])
        .await;
    assert!(second.status.success(), "{}", stderr(&second));
    let alpha_saw = server.requests().iter().any(|r| {
        let body = r.body.to_string();
        body.contains(ALPHA)
            && body.contains("QUEUED-PING while you were away")
            && body.contains(r#"teammate_id=\"user\""#)
    });
    assert!(
        alpha_saw,
        "the resumed teammate's request carries the queued mail"
    );
    let read = inbox_entry(&project, &name, "alpha", &msg_id).unwrap();
    assert_eq!(read["read"], true, "{read}");
    // The lead heard from alpha about it before the session ended.
    assert!(
        server.requests().iter().any(|r| {
            let body = r.body.to_string();
            body.contains(LEAD) && body.contains("ALPHA-GOT-QUEUED")
        }),
        "the lead read alpha's answer"
    );
}
