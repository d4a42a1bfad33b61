//! `fleet team send` against a live headless session in another process: the message must
//! reach the running teammate, woken by the append.

use super::{common, json, ok, stderr};
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// `fleet team list --json` in `project`'s fleet home.
fn list_in(project: &common::Project) -> Value {
    let out = fleet_testkit::output_within(
        Command::new(env!("CARGO_BIN_EXE_fleet"))
            .args(["team", "list", "--json"])
            .env("FLEET_HOME", &project.fleet_home)
            .env("HOME", &project.home),
        fleet_testkit::WAIT,
        "fleet team",
    );
    json(&out)
}

/// A live headless session: the lead spawns alpha, whose first turn blocks in Bash on a FIFO
/// the test holds, so the session is still running when, from outside, `fleet team send`
/// writes to alpha's inbox. Once released, alpha finds the message (from `user`) at the end of
/// its turn and answers the lead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_from_another_process_reaches_a_live_teammate() {
    use fleet_testkit::{Rule, Scenario};
    use serde_json::json;
    const LEAD: &str = "XPROC-LEAD";
    const ALPHA: &str = "XPROC-ALPHA";
    let send = |to: &str, message: Value| json!({"to": to, "message": message});
    let project = common::Project::new(&[("README.md", "x\n")]);
    let fifo = project.repo.join("release");
    ok(&Command::new("mkfifo").arg(&fifo).output().unwrap());
    let scenario = Scenario::with_rules([
        Rule::text("ALPHA-REPLIED")
            .when_marker(ALPHA)
            .when_tool_result_contains("team-lead's inbox"),
        Rule::tool_use("SendMessage", send("team-lead", json!("ALPHA-GOT-EXTERNAL")))
            .when_marker(ALPHA)
            .when_last_user_contains("EXTERNAL-PING"),
        Rule::tool_use("Bash", json!({"command": format!("cat {}", fifo.display())}))
            .when_marker(ALPHA)
            .when_last_user_contains(ALPHA)
            .when_tool_result(false),
        Rule::text("ALPHA-WAITING").when_marker(ALPHA),
        Rule::text("XPROC-DONE")
            .when_marker(LEAD)
            .when_last_user_contains("ALPHA-GOT-EXTERNAL"),
        Rule::tool_use(
            "Agent",
            json!({"description": "waits for mail", "name": "alpha", "prompt": format!("{ALPHA}: wait for mail")}),
        )
        .when_marker(LEAD)
        .when_tool_result(false)
        .times(1),
        Rule::text("LEAD-NOTED").when_marker(LEAD),
    ]);
    let server = common::server(scenario).await;
    let mut session = project.command(
        &server,
        &[
            "-p",
            &format!("{LEAD}: run"),
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    session
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let session = session.spawn().unwrap();
    let project = std::sync::Arc::new(project);
    let watcher = project.clone();
    let (team, msg_id) = tokio::task::spawn_blocking(move || {
        // Waits below are hang guards, not timing checks.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let team = loop {
            let listed = list_in(&watcher);
            let found = listed["teams"].as_array().unwrap().iter().find(|t| {
                t["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m["name"] == "alpha")
            });
            if let Some(team) = found {
                break team["name"].as_str().unwrap().to_string();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "alpha never joined: {listed:#}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let out = fleet_testkit::output_within(
            Command::new(env!("CARGO_BIN_EXE_fleet"))
                .args([
                    "team",
                    "send",
                    &team,
                    "alpha",
                    "EXTERNAL-PING from a terminal",
                ])
                .env("FLEET_HOME", &watcher.fleet_home)
                .env("HOME", &watcher.home),
            fleet_testkit::WAIT,
            "fleet team",
        );
        let msg_id = ok(&out).trim().to_string();
        // Release alpha's Bash: opening for writing succeeds once its `cat` has the FIFO open.
        let mut release = loop {
            use std::os::unix::fs::OpenOptionsExt;
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(&fifo)
            {
                Ok(file) => break file,
                Err(e) => assert!(
                    std::time::Instant::now() < deadline,
                    "alpha never ran its Bash: {e}"
                ),
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        release.write_all(b"go\n").unwrap();
        (team, msg_id)
    })
    .await
    .unwrap();
    let out = tokio::task::spawn_blocking(move || {
        fleet_testkit::wait_output(session, fleet_testkit::WAIT, "the headless session")
    })
    .await
    .unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let lines = common::json_lines(&out);
    // The lead read alpha's answer (the session then ends: everyone idle, no mail left).
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert!(
        results.iter().any(|r| r["result"] == "XPROC-DONE"),
        "{results:#?}"
    );

    // Alpha's request carried the message as teammate mail from `user`.
    let alpha_saw = server.requests().iter().any(|r| {
        let body = r.body.to_string();
        body.contains(ALPHA)
            && body.contains("EXTERNAL-PING from a terminal")
            && body.contains(r#"teammate_id=\"user\""#)
    });
    assert!(alpha_saw, "alpha's request carries the message from user");

    // Afterwards the inbox view shows it consumed by alpha, under the id send printed.
    let shown = json(&fleet_testkit::output_within(
        Command::new(env!("CARGO_BIN_EXE_fleet"))
            .args(["team", "inbox", &team, "alpha", "--json"])
            .env("FLEET_HOME", &project.fleet_home)
            .env("HOME", &project.home),
        fleet_testkit::WAIT,
        "fleet team",
    ));
    let sent = shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["msg_id"] == msg_id.as_str());
    if let Some(sent) = sent {
        assert_eq!(sent["read"], true, "{shown:#}");
        // Sent as `user`, signed with the user's team-mail key.
        assert!(sent["lead_sig"].is_string(), "{shown:#}");
    }
    assert_eq!(shown["unread"], 0, "{shown:#}");
}
