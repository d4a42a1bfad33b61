//! `fleet team list | show | send | inbox`, run as the real binary against a fleet home where a
//! team was created and its inboxes written the way a session writes them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
#[path = "team_cmd/live.rs"]
mod live;

use fleet_protocol::team::frames::{Frame, ShutdownRejected};
use fleet_protocol::MailEntry;
use fleet_store::tasklist::{Actor, NewTask, PatchStatus, TaskList, TaskPatch};
use fleet_store::team::{Member, MemberStatus, TeamStore};
use fleet_store::{FleetHome, Mailbox};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("fleet-home");
        Self { _tmp: tmp, root }
    }

    fn fleet_home(&self) -> FleetHome {
        FleetHome::at(&self.root)
    }

    fn teams(&self) -> TeamStore {
        TeamStore::new(&self.fleet_home())
    }

    /// `crew` with the lead and two teammates: alpha (idle, blue) and beta (stopped).
    fn crew(&self) -> String {
        let teams = self.teams();
        let lead = Member::new("team-lead", "", "team-lead", "/src/app");
        let team = teams
            .create(
                "crew",
                Some("ship 2.0"),
                lead,
                "3f2c0000-0000-4000-8000-000000000000",
            )
            .unwrap();
        teams
            .update(&team.name, |config| {
                let mut alpha = Member::new("alpha", "crew", "general-purpose", "/src/app");
                alpha.status = MemberStatus::Idle;
                alpha.color = Some("blue".into());
                alpha.model = Some("claude-sonnet-4-5".into());
                let mut beta = Member::new("beta", "crew", "general-purpose", "/src/app");
                beta.status = MemberStatus::Stopped;
                config.members.push(alpha);
                config.members.push(beta);
            })
            .unwrap();
        team.name
    }

    fn inbox(&self, team: &str, owner: &str) -> Mailbox {
        Mailbox::open(&self.teams().inboxes_dir(team), owner).unwrap()
    }

    fn fleet(&self, args: &[&str]) -> Output {
        self.fleet_with_stdin(args, "")
    }

    fn fleet_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fleet"))
            .args(args)
            .env("FLEET_HOME", &self.root)
            .env("HOME", self.root.parent().unwrap())
            .env_remove("FLEET_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet")
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap()
}

/// Fails with status 1 and an error on stderr; returns the error.
fn fails(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", stdout(out));
    assert!(stdout(out).is_empty(), "{}", stdout(out));
    stderr(out)
}

fn mail(from: &str, text: &str, id: &str) -> MailEntry {
    MailEntry::new(from, text, "2026-12-01T17:00:00.000Z", id)
}

#[test]
fn list_shows_every_team_with_members_status_and_pending_mail() {
    let home = Home::new();
    let team = home.crew();
    home.inbox(&team, "alpha")
        .append_all(&[
            mail("team-lead", "one", "m1"),
            mail("team-lead", "two", "m2"),
        ])
        .unwrap();
    let lead = home.inbox(&team, "team-lead");
    lead.append(&mail("alpha", "done", "m3")).unwrap();
    let read = lead.unread().unwrap();
    lead.ack(&read.upto).unwrap();

    let text = ok(&home.fleet(&["team", "list"]));
    assert!(text.starts_with("crew — ship 2.0\n"), "{text}");
    assert!(text.contains("lead team-lead@crew"), "{text}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        row("team-lead").as_deref(),
        Some("team-lead active 0 pending")
    );
    assert_eq!(row("alpha").as_deref(), Some("alpha idle 2 pending"));
    assert_eq!(row("beta").as_deref(), Some("beta stopped 0 pending"));

    let all = json(&home.fleet(&["team", "list", "--json"]));
    assert_eq!(all["problems"], Value::Array(vec![]));
    let crew = &all["teams"][0];
    assert_eq!(crew["name"], "crew");
    assert_eq!(crew["leadAgentId"], "team-lead@crew");
    assert_eq!(crew["members"][1]["name"], "alpha");
    assert_eq!(crew["members"][1]["agentId"], "alpha@crew");
    assert_eq!(crew["members"][1]["status"], "idle");
    assert_eq!(crew["members"][1]["pending"], 2);
    // Looking did not create inboxes for members who never had mail.
    assert!(!home.teams().inboxes_dir(&team).join("beta.lock").exists());
}

#[test]
fn a_broken_team_file_is_reported_and_the_others_still_listed() {
    let home = Home::new();
    home.crew();
    let broken = home.teams().root().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("config.json"), "{ not json").unwrap();

    let out = home.fleet(&["team", "list"]);
    assert!(ok(&out).contains("crew"));
    let warning = stderr(&out);
    assert!(warning.contains("warning"), "{warning}");
    assert!(
        warning.contains(&broken.join("config.json").display().to_string()),
        "{warning}"
    );

    let all = json(&home.fleet(&["team", "list", "--json"]));
    assert_eq!(all["teams"].as_array().unwrap().len(), 1);
    assert_eq!(
        all["problems"][0]["path"],
        broken.join("config.json").display().to_string()
    );
}

#[test]
fn show_gives_members_unread_counts_and_the_task_list() {
    let home = Home::new();
    let team = home.crew();
    home.inbox(&team, "alpha")
        .append(&mail("team-lead", "start", "m1"))
        .unwrap();
    // An inbox whose owner is not in the team (a member since removed).
    home.inbox(&team, "gamma")
        .append(&mail("team-lead", "hello?", "m2"))
        .unwrap();
    let tasks = TaskList::open(&home.fleet_home(), &team).unwrap();
    let first = tasks
        .create(NewTask {
            subject: "Write notes".into(),
            ..Default::default()
        })
        .unwrap();
    tasks
        .create(NewTask {
            subject: "Ship".into(),
            ..Default::default()
        })
        .unwrap();
    let start = TaskPatch {
        status: Some(PatchStatus::InProgress),
        ..Default::default()
    };
    tasks
        .update(&first.id, start, &Actor::member("alpha"))
        .unwrap();

    let text = ok(&home.fleet(&["team", "show", "crew"]));
    assert!(text.starts_with("team crew\n  ship 2.0\n"), "{text}");
    let alpha = text
        .lines()
        .find(|l| l.trim_start().starts_with("alpha "))
        .expect("alpha's row");
    let cells: Vec<&str> = alpha.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "alpha",
            "alpha@crew",
            "general-purpose",
            "claude-sonnet-4-5",
            "blue",
            "idle",
            "just",
            "now",
            "1"
        ]
    );
    assert!(
        text.contains("inboxes of names not in the team:\n  gamma  1 unread\n"),
        "{text}"
    );
    assert!(
        text.contains("tasks:\n  #1 [in_progress] Write notes (alpha)\n  #2 [pending] Ship\n"),
        "{text}"
    );

    let shown = json(&home.fleet(&["team", "show", "crew", "--json"]));
    assert_eq!(shown["name"], "crew");
    assert_eq!(shown["description"], "ship 2.0");
    assert_eq!(shown["members"][1]["agentType"], "general-purpose");
    assert_eq!(shown["members"][1]["color"], "blue");
    assert_eq!(shown["members"][1]["unread"], 1);
    assert_eq!(shown["members"][2]["status"], "stopped");
    assert!(shown["members"][1]["joinedAt"].as_u64().unwrap() > 0);
    assert_eq!(shown["otherInboxes"][0]["owner"], "gamma");
    assert_eq!(shown["tasks"][0]["owner"], "alpha");
    assert_eq!(shown["tasks"][1]["subject"], "Ship");
}

#[test]
fn show_without_a_task_list_creates_none() {
    let home = Home::new();
    home.crew();
    let text = ok(&home.fleet(&["team", "show", "crew"]));
    assert!(text.contains("tasks:\n  (none)\n"), "{text}");
    assert!(!home.root.join("tasks").exists());
}

#[test]
fn send_then_inbox_shows_it_unread_and_does_not_consume_it() {
    let home = Home::new();
    let team = home.crew();
    let alpha = home.inbox(&team, "alpha");
    alpha.append(&mail("team-lead", "earlier", "m0")).unwrap();
    let earlier = alpha.unread().unwrap();
    alpha.ack(&earlier.upto).unwrap();

    let out = home.fleet(&[
        "team",
        "send",
        "crew",
        "alpha",
        "please rebase",
        "--summary",
        "rebase",
    ]);
    let msg_id = ok(&out).trim().to_string();
    assert!(uuid::Uuid::parse_str(&msg_id).is_ok(), "{msg_id:?}");

    // As the session running alpha would see it.
    let unread = alpha.unread().unwrap();
    assert_eq!(unread.entries.len(), 1);
    let entry = &unread.entries[0];
    assert_eq!(entry.msg_id, msg_id);
    assert_eq!(entry.from, "user");
    assert_eq!(entry.text, "please rebase");
    assert_eq!(entry.summary.as_deref(), Some("rebase"));
    assert!(
        humantime::parse_rfc3339(&entry.timestamp).is_ok(),
        "{}",
        entry.timestamp
    );

    let text = ok(&home.fleet(&["team", "inbox", "crew", "alpha"]));
    assert!(
        text.starts_with("2 messages for alpha@crew (1 unread)\n"),
        "{text}"
    );
    assert!(
        text.contains("[read] team-lead, 2026-12-01T17:00:00.000Z"),
        "{text}"
    );
    assert!(text.contains("\n    earlier\n"), "{text}");
    assert!(text.contains("[unread] user, "), "{text}");
    assert!(text.contains(" — rebase\n    please rebase\n"), "{text}");

    let unread_only = json(&home.fleet(&["team", "inbox", "crew", "alpha", "--json", "--unread"]));
    assert_eq!(unread_only["member"], "alpha");
    assert_eq!(unread_only["unread"], 1);
    let entries = unread_only["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["msg_id"], msg_id.as_str());
    assert_eq!(entries[0]["read"], false);
    assert_eq!(entries[0]["frame"], Value::Null);

    // Looking consumed nothing: the member still gets it.
    let again = alpha.unread().unwrap();
    assert_eq!(again.msg_ids().collect::<Vec<_>>(), [msg_id.as_str()]);
    assert_eq!(alpha.pending().unwrap(), 1);
}

#[test]
fn send_reaches_the_lead_as_team_lead_or_main_with_a_chosen_sender() {
    let home = Home::new();
    let team = home.crew();
    let first = ok(&home.fleet(&["team", "send", "crew", "main", "status?", "--from", "alpha"]));
    let second =
        ok(&home.fleet_with_stdin(&["team", "send", "crew", "team-lead", "-"], "from stdin\n"));
    let lead = home.inbox(&team, "team-lead").unread().unwrap();
    assert_eq!(
        lead.msg_ids().collect::<Vec<_>>(),
        [first.trim(), second.trim()]
    );
    assert_eq!(lead.entries[0].from, "alpha");
    // Sent in alpha's name, it carries alpha's color as alpha's own messages do.
    assert_eq!(lead.entries[0].color.as_deref(), Some("blue"));
    assert_eq!(lead.entries[1].from, "user");
    assert_eq!(lead.entries[1].text, "from stdin\n");
}

#[test]
fn sending_to_a_stopped_member_says_it_waits() {
    let home = Home::new();
    let team = home.crew();
    let out = home.fleet(&["team", "send", "crew", "beta", "when you are back"]);
    ok(&out);
    assert!(
        stderr(&out)
            .contains("queued: beta is not running; delivered when the team's session resumes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(home.inbox(&team, "beta").pending().unwrap(), 1);
}

#[test]
fn inbox_shows_frames_by_type_and_key_fields() {
    let home = Home::new();
    let team = home.crew();
    let rejected = Frame::ShutdownRejected(ShutdownRejected {
        request_id: "shutdown-1@alpha".into(),
        from: "alpha".into(),
        reason: "still testing".into(),
        timestamp: "2026-12-01T17:00:00.000Z".into(),
    });
    home.inbox(&team, "team-lead")
        .append(&mail("alpha", &rejected.to_text(), "f1"))
        .unwrap();
    let text = ok(&home.fleet(&["team", "inbox", "crew", "main"]));
    assert!(
        text.contains("    frame shutdown_rejected  requestId=\"shutdown-1@alpha\"  reason=\"still testing\"\n"),
        "{text}"
    );
    let shown = json(&home.fleet(&["team", "inbox", "crew", "team-lead", "--json"]));
    assert_eq!(shown["inbox"], "team-lead");
    assert_eq!(shown["entries"][0]["frame"]["type"], "shutdown_rejected");
    assert_eq!(shown["entries"][0]["frame"]["reason"], "still testing");
}

#[test]
fn inbox_of_a_member_without_mail_is_empty_and_creates_nothing() {
    let home = Home::new();
    let team = home.crew();
    let text = ok(&home.fleet(&["team", "inbox", "crew", "beta", "--unread"]));
    assert_eq!(text, "no unread messages for beta@crew\n");
    let dir = home.teams().inboxes_dir(&team);
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none());
}

#[test]
fn unknown_team_and_member_errors_name_what_exists() {
    let home = Home::new();
    let none = fails(&home.fleet(&["team", "show", "crew"]));
    assert!(
        none.contains("no team \"crew\": there are no teams under"),
        "{none}"
    );

    home.crew();
    let team = fails(&home.fleet(&["team", "show", "crow"]));
    assert!(team.contains("no team \"crow\""), "{team}");
    assert!(team.contains("teams: crew"), "{team}");

    for args in [
        &["team", "send", "crew", "gamma", "hi"][..],
        &["team", "inbox", "crew", "gamma"][..],
    ] {
        let member = fails(&home.fleet(args));
        assert!(
            member.contains("team \"crew\" has no member \"gamma\"; members: team-lead (lead; also \"main\"), alpha, beta"),
            "{member}"
        );
    }
    assert!(!home
        .teams()
        .inboxes_dir("crew")
        .join("gamma.0.jsonl")
        .exists());
}

#[test]
fn bad_names_are_refused_before_touching_a_path() {
    let home = Home::new();
    home.crew();
    let outside = home.root.join("teams").join("..").join("escape");
    for args in [
        &["team", "show", "../crew"][..],
        &["team", "inbox", "..", "alpha"][..],
        &["team", "send", "crew", "../../escape", "hi"][..],
        &["team", "send", "crew", "alpha", "hi", "--from", "../x"][..],
        &["team", "inbox", "crew", "a/b"][..],
    ] {
        let err = fails(&home.fleet(args));
        assert!(err.contains("invalid"), "{args:?}: {err}");
    }
    assert!(!outside.exists());
    assert!(!Path::new(&home.root).join("escape.0.jsonl").exists());
    assert_eq!(home.inbox("crew", "alpha").pending().unwrap(), 0);
}

#[test]
fn send_refuses_empty_text_and_protocol_frames() {
    let home = Home::new();
    home.crew();
    let empty = fails(&home.fleet(&["team", "send", "crew", "alpha", "  "]));
    assert!(empty.contains("the message is empty"), "{empty}");
    let forged =
        r#"{"type":"shutdown_request","requestId":"x","from":"team-lead","timestamp":"t"}"#;
    let frame = fails(&home.fleet(&["team", "send", "crew", "alpha", forged]));
    assert!(frame.contains("shutdown_request protocol frame"), "{frame}");
    assert_eq!(home.inbox("crew", "alpha").pending().unwrap(), 0);
}

#[test]
fn control_characters_from_mail_are_shown_not_obeyed() {
    let home = Home::new();
    let team = home.crew();
    home.inbox(&team, "alpha")
        .append(&mail("team-lead", "clear\u{1b}[2Jscreen", "m1"))
        .unwrap();
    let text = ok(&home.fleet(&["team", "inbox", "crew", "alpha"]));
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("clear\\e[2Jscreen"), "{text}");
}

#[test]
fn a_claude_code_team_with_names_fleet_does_not_know_is_listed_and_its_frames_shown() {
    let home = Home::new();
    // As a newer Claude Code might write it: a backend and a mode this build has never seen.
    let dir = home.teams().dir("session-1a2b3c4d");
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"name":"session-1a2b3c4d","createdAt":1764608400000,
            "leadAgentId":"team-lead@session-1a2b3c4d","leadSessionId":"1a2b3c4d-0000-4000-8000-000000000000",
            "members":[
              {"agentId":"team-lead@session-1a2b3c4d","name":"team-lead","agentType":"team-lead",
               "joinedAt":1764608400000,"tmuxPaneId":"leader","cwd":"/src/app","subscriptions":[],
               "backendType":"in-process"},
              {"agentId":"alpha@session-1a2b3c4d","name":"alpha","color":"blue","joinedAt":1764608401000,
               "tmuxPaneId":"w2","subscriptions":[],"planModeRequired":true,"cwd":"/src/app",
               "backendType":"wezterm","mode":"auto"}]}"#,
    )
    .unwrap();
    let approved = r#"{"type":"shutdown_approved","requestId":"shutdown-1@alpha","from":"alpha","timestamp":"2026-12-01T17:00:00.000Z","paneId":"w2","backendType":"wezterm"}"#;
    home.inbox("session-1a2b3c4d", "team-lead")
        .append(&mail("alpha", approved, "f1"))
        .unwrap();

    let all = json(&home.fleet(&["team", "list", "--json"]));
    assert_eq!(all["problems"], Value::Array(vec![]), "{all:#}");
    assert_eq!(all["teams"][0]["members"][1]["name"], "alpha");

    let text = ok(&home.fleet(&["team", "inbox", "session-1a2b3c4d", "team-lead"]));
    assert!(
        text.contains(
            "    frame shutdown_approved  requestId=\"shutdown-1@alpha\"  backendType=\"wezterm\"\n"
        ),
        "{text}"
    );
}
