//! What a headless team run prints, for a script and for a person, and what `fleet team list`
//! says after it: the real binary against the fake model server.
//!
//! - stream-json: every `init` and `result` line is the main session's (one per lead turn, as
//!   Claude Code prints one per main turn of a background run); a teammate's lines carry its
//!   `agent_id`; team lines come in the order things happened (`shutdown_approved`, then
//!   `teammate_terminated`).
//! - verbose text: a teammate's tag shows its whole `name@team`, the lead's SendMessage calls
//!   end with a short line, not the JSON the model reads.
//! - `fleet team list`: the lead is stopped once its session has ended — done, interrupted, or
//!   killed outright.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const LEAD: &str = "TEAM-OUTPUT";
const BOB: &str = "BOB-START";
const TEAM: &str = "party";

fn send(to: &str, message: Value) -> Value {
    json!({"to": to, "message": message})
}

/// The lead makes team "party", spawns bob; bob says hello; the lead asks bob to shut down,
/// bob agrees, the lead ends with LEAD-DONE.
fn scenario() -> Scenario {
    let lead = |rule: Rule| rule.when_marker(LEAD);
    let bob = |rule: Rule| rule.when_marker(BOB);
    Scenario::with_rules([
        bob(Rule::tool_use(
            "SendMessage",
            send(
                "team-lead",
                json!({"type": "shutdown_response", "approve": true}),
            ),
        ))
        .when_last_user_contains("shutdown_request"),
        bob(Rule::text("BOB-IDLE")).when_tool_result_contains("team-lead's inbox"),
        bob(Rule::tool_use(
            "SendMessage",
            send("team-lead", json!("BOB-HELLO")),
        ))
        .when_last_user_contains(BOB),
        lead(Rule::text("LEAD-DONE")).when_last_user_contains("bob has shut down"),
        lead(Rule::tool_use(
            "SendMessage",
            send(
                "bob",
                json!({"type": "shutdown_request", "reason": "all done"}),
            ),
        ))
        .when_last_user_contains("BOB-HELLO")
        .times(1),
        lead(Rule::text("LEAD-WAITING")).when_tool_result_contains("Spawned successfully"),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "helper", "name": "bob", "prompt": "BOB-START: say hello"}),
        ))
        .when_tool_result_contains("created with you as lead"),
        lead(Rule::tool_use("TeamCreate", json!({"team_name": "Party"})))
            .when_tool_result(false)
            .times(1),
        lead(Rule::text("LEAD-NOTED")),
    ])
}

fn position(lines: &[Value], pick: impl Fn(&Value) -> bool) -> usize {
    lines
        .iter()
        .position(pick)
        .unwrap_or_else(|| panic!("no such line in {lines:#?}"))
}

/// `fleet team list --json`: each member's status in `team`.
async fn statuses(
    project: &Project,
    server: &fleet_testkit::FakeModelServer,
) -> Vec<(String, String)> {
    let out = project.run(server, &["team", "list", "--json"], "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let team = listed["teams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == TEAM)
        .unwrap_or_else(|| panic!("no team {TEAM}: {listed:#}"))
        .clone();
    team["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn status_of<'a>(statuses: &'a [(String, String)], name: &str) -> &'a str {
    statuses
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s.as_str())
        .unwrap_or_else(|| panic!("no member {name}: {statuses:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_keeps_init_and_result_lines_the_main_sessions_and_team_lines_in_order() {
    let project = Project::new(&[("README.md", "team output\n")]);
    let server = server(scenario()).await;
    let (_, lines) = project
        .stream_json(&server, "TEAM-OUTPUT: run the party", &[])
        .await;

    let inits: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "init")
        .collect();
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    // One `init` and one `result` per run of the lead: the prompt's, then one per batch of
    // team mail that woke it.
    assert!(
        results.len() >= 2,
        "the lead ran again on mail: {results:#?}"
    );
    assert_eq!(inits.len(), results.len(), "an init per run");
    for line in inits.iter().chain(&results) {
        assert!(line.get("agent_id").is_none(), "the main session's: {line}");
        assert!(
            line.get("parent_tool_use_id").is_none_or(Value::is_null),
            "{line}"
        );
    }
    let indexes: Vec<u64> = results
        .iter()
        .map(|r| r["result_index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (0..results.len() as u64).collect::<Vec<_>>());
    assert!(results[0]["origin"].is_null(), "the prompt's run");
    for woken in &results[1..] {
        assert_eq!(woken["origin"]["kind"], "message", "{woken}");
    }
    assert_eq!(results.last().unwrap()["result"], "LEAD-DONE");

    // Bob's own lines say they are his; none of them is an init or a result.
    let bob = format!("bob@{TEAM}");
    let bobs: Vec<&Value> = lines.iter().filter(|l| l["agent_id"] == bob).collect();
    assert!(
        bobs.iter().any(|l| l["type"] == "assistant"),
        "bob's messages: {lines:#?}"
    );
    assert!(bobs
        .iter()
        .all(|l| l["type"] != "result" && l["subtype"] != "init"));

    // Team lines in the order things happened: bob's approval, then his end.
    let approved = position(&lines, |l| {
        l["subtype"] == "team_message" && l["from"] == "bob" && l["text"] == "shutdown_approved"
    });
    let terminated = position(&lines, |l| {
        l["subtype"] == "teammate_terminated" && l["name"] == "bob"
    });
    assert!(
        approved < terminated,
        "approved at {approved}, ended at {terminated}"
    );

    // The session is over: its lead is no longer active.
    let statuses = statuses(&project, &server).await;
    assert_eq!(status_of(&statuses, "team-lead"), "stopped", "{statuses:?}");
    assert_eq!(status_of(&statuses, "bob"), "stopped", "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_text_shows_whole_teammate_labels_and_sendmessage_results_in_words() {
    let project = Project::new(&[("README.md", "team output\n")]);
    let server = server(scenario()).await;
    let out = project
        .run(
            &server,
            &["-p", "TEAM-OUTPUT: run the party", "--verbose"],
            "",
        )
        .await;
    let text = stdout(&out);
    if let Ok(dump) = std::env::var("FLEET_TEST_DUMP") {
        std::fs::write(dump, &text).unwrap();
    }
    assert!(out.status.success(), "stderr: {}\n{text}", stderr(&out));
    assert!(
        text.contains("↳ [general-purpose bob@party] ● SendMessage(team-lead)"),
        "bob's tag in full:\n{text}"
    );
    assert!(
        text.contains("⎿ Shutdown request sent to bob. Request ID: shutdown-"),
        "the lead's call in words:\n{text}"
    );
    assert!(!text.contains("{\"success\""), "no raw JSON:\n{text}");
    let approved = text
        .find("✉ bob → team-lead: shutdown_approved")
        .unwrap_or_else(|| panic!("no approval line:\n{text}"));
    let ended = text
        .find("- bob has shut down.")
        .unwrap_or_else(|| panic!("no end line:\n{text}"));
    assert!(approved < ended, "approval before the end:\n{text}");
    assert!(
        text.trim_end().ends_with("LEAD-DONE") || text.contains("\nLEAD-DONE\n"),
        "{text}"
    );
}

/// The lead makes team "party" and spawns a teammate that sits in a long command (writing
/// its shell's pid to `slow.pid` first), then waits.
fn slow_scenario() -> Scenario {
    let lead = |rule: Rule| rule.when_marker(LEAD);
    let slow = |rule: Rule| rule.when_marker("SLOW-START");
    Scenario::with_rules([
        slow(Rule::tool_use(
            "Bash",
            json!({"command": "echo $$ > slow.pid; sleep 300", "timeout": 600000}),
        ))
        .when_tool_result(false)
        .times(1),
        slow(Rule::text("SLOW-DONE")),
        lead(Rule::text("LEAD-WAITING")).when_tool_result_contains("Spawned successfully"),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "slow one", "name": "slow", "prompt": "SLOW-START: work long"}),
        ))
        .when_tool_result_contains("created with you as lead"),
        lead(Rule::tool_use("TeamCreate", json!({"team_name": "Party"})))
            .when_tool_result(false)
            .times(1),
        lead(Rule::text("LEAD-NOTED")),
    ])
}

/// Starts the slow team's lead and returns once its teammate is inside its command.
async fn start_slow(project: &Project, server: &fleet_testkit::FakeModelServer) -> Child {
    let mut cmd = project.command(
        server,
        &[
            "-p",
            "TEAM-OUTPUT: start a slow one",
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = project.repo.join("slow.pid");
    let deadline = Instant::now() + fleet_testkit::WAIT;
    while !std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')) {
        assert!(
            Instant::now() < deadline,
            "the teammate never started its command"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child
}

fn signal(child: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_lead_is_marked_stopped() {
    let project = Project::new(&[("README.md", "team output\n")]);
    let server = server(slow_scenario()).await;
    let child = start_slow(&project, &server).await;
    let running = statuses(&project, &server).await;
    assert_eq!(status_of(&running, "team-lead"), "active", "{running:?}");
    let out: Output = tokio::task::spawn_blocking(move || {
        signal(&child, "-INT");
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet after SIGINT")
    })
    .await
    .unwrap();
    // The lead's own run was over (it waited for its team) and read as a success, but the
    // team's work did not finish: the shell's 130, never 0.
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(project.fleet_home.join(format!("teams/{TEAM}/config.json")))
            .unwrap(),
    )
    .unwrap();
    let lead = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "team-lead")
        .unwrap();
    assert_eq!(
        lead["status"], "stopped",
        "written by the ending session: {config:#}"
    );
    let after = statuses(&project, &server).await;
    assert_eq!(status_of(&after, "team-lead"), "stopped", "{after:?}");
    assert_eq!(
        json_lines(&out)
            .iter()
            .filter(|l| l["type"] == "result")
            .count(),
        1,
        "the interrupted run's result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn team_list_does_not_trust_an_active_lead_whose_process_is_gone() {
    let project = Project::new(&[("README.md", "team output\n")]);
    let server = server(slow_scenario()).await;
    let child = start_slow(&project, &server).await;
    let out: Output = tokio::task::spawn_blocking(move || {
        signal(&child, "-KILL");
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet after SIGKILL")
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    // Killed outright, the session wrote nothing more: the file still says active.
    let config =
        std::fs::read_to_string(project.fleet_home.join(format!("teams/{TEAM}/config.json")))
            .unwrap();
    let config: Value = serde_json::from_str(&config).unwrap();
    let stored: Vec<&str> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    assert!(stored.contains(&"active"), "{config:#}");
    // Its process is gone, so the lead and its in-process teammate are not running.
    let listed = statuses(&project, &server).await;
    assert_eq!(status_of(&listed, "team-lead"), "stopped", "{listed:?}");
    assert_eq!(status_of(&listed, "slow"), "stopped", "{listed:?}");
    let shown = project.run(&server, &["team", "show", TEAM], "").await;
    let table = stdout(&shown);
    assert!(!table.contains("active"), "{table}");
    end_command(&project);
}

/// Kills what is left of the teammate's command (fleet, killed outright, could not).
fn end_command(project: &Project) {
    let Ok(pid) = std::fs::read_to_string(project.repo.join("slow.pid")) else {
        return;
    };
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) else {
        return;
    };
    // The fields after the command's name: state, ppid, pgrp.
    let group = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(2).map(str::to_owned));
    if let Some(group) = group.filter(|g| g.parse::<i32>().is_ok_and(|g| g > 1)) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .status();
    }
}
