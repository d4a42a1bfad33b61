//! Teams end to end, headless: the real binary against the fake model server, in a temp git
//! repository. A lead creates a team, spawns two teammates, messages one directly and both by
//! broadcast; the teammates message each other, claim and complete a shared task (a second
//! claim is refused), go idle, and shut down — one after rejecting the first request.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const LEAD: &str = "TEAM-E2E";
const ALPHA: &str = "ALPHA-START";
const BETA: &str = "BETA-START";

fn lead(rule: Rule) -> Rule {
    rule.when_marker(LEAD)
}

fn alpha(rule: Rule) -> Rule {
    rule.when_marker(ALPHA)
}

fn beta(rule: Rule) -> Rule {
    rule.when_marker(BETA)
}

fn send(to: &str, message: Value) -> Value {
    json!({"to": to, "message": message})
}

fn scenario() -> Scenario {
    Scenario::with_rules([
        // Alpha: claims task 1 when the lead says so, tells beta, completes it, reports.
        alpha(Rule::tool_use(
            "SendMessage",
            send("team-lead", json!({"type": "shutdown_response", "approve": true})),
        ))
        .when_last_user_contains("shutdown_request"),
        alpha(Rule::text("ALPHA-IDLE-AFTER-DONE")).when_tool_result_contains("team-lead's inbox"),
        alpha(Rule::tool_use("SendMessage", send("team-lead", json!("ALPHA-DONE task 1"))))
            .when_tool_result_contains("Task completed"),
        alpha(Rule::tool_use(
            "TaskUpdate",
            json!({"taskId": "1", "status": "completed"}),
        ))
        .when_tool_result_contains("beta's inbox"),
        alpha(Rule::tool_use("SendMessage", send("beta", json!("ALPHA-HAS-TASK-1"))))
            .when_tool_result_contains("Updated task #1"),
        alpha(Rule::tool_use(
            "TaskUpdate",
            json!({"taskId": "1", "owner": "alpha", "status": "in_progress"}),
        ))
        .when_last_user_contains("LEAD-DM"),
        alpha(Rule::text("ALPHA-GOT-MAIL")).when_tool_result(false),
        // Beta: greets alpha, tries to take alpha's task, rejects the first shutdown.
        beta(Rule::tool_use(
            "SendMessage",
            send("team-lead", json!({"type": "shutdown_response", "approve": true})),
        ))
        .when_last_user_contains("ROUND-2"),
        beta(Rule::tool_use(
            "SendMessage",
            send(
                "team-lead",
                json!({"type": "shutdown_response", "approve": false, "reason": "BETA-NOT-YET"}),
            ),
        ))
        .when_last_user_contains("ROUND-1"),
        beta(Rule::text("BETA-SAW-REFUSAL")).when_tool_result_contains("is owned by alpha"),
        beta(Rule::tool_use("TaskUpdate", json!({"taskId": "1", "owner": "beta"})))
            .when_last_user_contains("ALPHA-HAS-TASK-1"),
        beta(Rule::text("BETA-READY")).when_tool_result_contains("alpha's inbox"),
        beta(Rule::tool_use("SendMessage", send("alpha", json!("PEER-HI from beta"))))
            .when_last_user_contains(BETA),
        beta(Rule::text("BETA-ACK")).when_tool_result(false),
        // The lead.
        lead(Rule::text("ALL-DONE")).when_last_user_contains("alpha has shut down"),
        lead(Rule::tool_use("SendMessage", send("alpha", json!({"type": "shutdown_request", "reason": "ALPHA-FINISH"}))))
            .when_last_user_contains("beta has shut down")
            .times(1),
        lead(Rule::tool_use("SendMessage", send("beta", json!({"type": "shutdown_request", "reason": "ROUND-2"}))))
            .when_last_user_contains("BETA-NOT-YET")
            .times(1),
        lead(Rule::tool_use("SendMessage", send("beta", json!({"type": "shutdown_request", "reason": "ROUND-1"}))))
            .when_last_user_contains("ALPHA-DONE")
            .times(1),
        lead(Rule::text("LEAD-WAITING")).when_tool_result_contains("recipients"),
        lead(
            Rule::tool_use("SendMessage", send("alpha", json!("LEAD-DM: claim task 1 and do it")))
                .then_tool_use("SendMessage", send("*", json!("BROADCAST-HELLO"))),
        )
        .when_tool_result_contains("created successfully"),
        lead(Rule::tool_use(
            "TaskCreate",
            json!({"subject": "TASK-ONE write notes", "description": "Write the team's notes"}),
        ))
        .when_tool_result_contains("Spawned successfully"),
        lead(
            Rule::tool_use(
                "Agent",
                json!({"description": "first member", "name": "alpha", "prompt": "ALPHA-START: wait for instructions"}),
            )
            .then_tool_use(
                "Agent",
                json!({"description": "second member", "name": "beta", "prompt": "BETA-START: say hi to alpha"}),
            ),
        )
        .when_tool_result_contains("created with you as lead"),
        lead(Rule::tool_use("TeamCreate", json!({"team_name": "Alpha Squad", "description": "e2e"})))
            .when_tool_result(false)
            .times(1),
        lead(Rule::text("LEAD-NOTED")).when_tool_result(false),
        lead(Rule::text("LEAD-NOTED")),
    ])
}

fn of_type<'a>(lines: &'a [Value], subtype: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == subtype)
        .collect()
}

/// Every tool result the member with `agent_id` received, as text.
fn tool_results(lines: &[Value], agent_id: &str) -> Vec<String> {
    common::tool_result_texts(lines, |l| l["agent_id"] == agent_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_team_talks_shares_a_task_and_shuts_down_cleanly() {
    let project = Project::new(&[("README.md", "team test\n")]);
    let server = server(scenario()).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "TEAM-E2E: run the team",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[],
        )
        .await;
    let lines = json_lines(&out);
    if let Ok(dump) = std::env::var("FLEET_TEST_DUMP") {
        std::fs::write(dump, common::stdout(&out) + &stderr(&out)).unwrap();
    }
    assert!(out.status.success(), "stderr: {}\n{lines:#?}", stderr(&out));
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "ALL-DONE", "{result:#}");
    let members = result["team"]["members"].as_array().unwrap();
    let costs: Vec<(&str, f64)> = members
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m["cost_usd"].as_f64().unwrap()))
        .collect();
    assert_eq!(costs.len(), 2, "{members:#?}");
    assert!(
        costs.iter().all(|(_, cost)| *cost > 0.0),
        "per-member cost: {costs:?}"
    );

    let team = "alpha-squad";
    let spawned = of_type(&lines, "teammate_spawned");
    let names: Vec<&str> = spawned
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(spawned[0]["agent_id"], format!("alpha@{team}"));
    assert_eq!(spawned[0]["color"], "blue");
    assert_eq!(spawned[1]["color"], "green");
    let terminated = of_type(&lines, "teammate_terminated");
    let mut gone: Vec<&str> = terminated
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    gone.sort_unstable();
    assert_eq!(gone, ["alpha", "beta"], "both shut down");
    assert!(
        terminated
            .iter()
            .all(|l| l["reason"].as_str().unwrap().contains("has shut down")),
        "both agreed: {terminated:#?}"
    );
    assert!(
        of_type(&lines, "teammate_idle").len() >= 2,
        "idle notifications"
    );

    // Direct, broadcast and peer messages all went through inboxes.
    let messages = of_type(&lines, "team_message");
    let said = |from: &str, to: &str, text: &str| {
        messages.iter().any(|m| {
            m["from"] == from && m["to"] == to && m["text"].as_str().unwrap().contains(text)
        })
    };
    assert!(
        said("team-lead", "alpha", "LEAD-DM"),
        "direct: {messages:#?}"
    );
    assert!(
        said("team-lead", "alpha", "BROADCAST-HELLO")
            && said("team-lead", "beta", "BROADCAST-HELLO")
    );
    assert!(said("beta", "alpha", "PEER-HI"), "peer to peer");
    assert!(said("alpha", "beta", "ALPHA-HAS-TASK-1"));
    assert!(said("alpha", "team-lead", "idle_notification"));
    assert!(said("beta", "team-lead", "shutdown_rejected"));
    assert!(said("beta", "team-lead", "shutdown_approved"));

    // The task: created, claimed by alpha, completed; beta's claim was refused.
    let task: Value = serde_json::from_str(
        &std::fs::read_to_string(project.fleet_home.join(format!("tasks/{team}/1.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(task["owner"], "alpha");
    assert_eq!(task["status"], "completed");
    let refused = tool_results(&lines, &format!("beta@{team}"));
    assert!(
        refused.iter().any(|r| r.contains("is owned by alpha")),
        "beta's claim: {refused:#?}"
    );
    assert!(of_type(&lines, "task_list_updated").len() >= 3);

    // The lead read alpha's report as teammate mail, not as the user.
    let requests = server.requests();
    let lead_saw = requests.iter().any(|r| {
        let body = r.body.to_string();
        body.contains(LEAD)
            && body.contains("ALPHA-DONE task 1")
            && body.contains("teammate_id=\\\"alpha\\\"")
    });
    assert!(lead_saw, "the lead's request carries alpha's message");
    // A teammate that approves its shutdown makes no request after that call.
    let after_approval = requests
        .iter()
        .filter(|r| {
            let body = r.body.to_string();
            (body.contains(ALPHA) || body.contains(BETA)) && body.contains("is now exiting")
        })
        .count();
    assert_eq!(
        after_approval, 0,
        "a teammate went on after approving its shutdown"
    );

    // On disk: members stopped, every inbox read.
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(project.fleet_home.join(format!("teams/{team}/config.json")))
            .unwrap(),
    )
    .unwrap();
    let statuses: Vec<(String, String)> = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for (name, status) in &statuses {
        if name != "team-lead" {
            assert_eq!(status, "stopped", "{statuses:?}");
        }
    }
}

/// A lead in plan mode: its teammate must have its plan approved before it changes anything.
fn plan_scenario(note: &str) -> Scenario {
    const PLANNER: &str = "PLANNER-START";
    let planner = |rule: Rule| rule.when_marker(PLANNER);
    let lead = |rule: Rule| rule.when_marker("PLAN-E2E");
    Scenario::with_rules([
        planner(Rule::tool_use(
            "SendMessage",
            send("team-lead", json!({"type": "shutdown_response", "approve": true})),
        ))
        .when_last_user_contains("shutdown_request"),
        planner(Rule::text("PLANNER-IDLE")).when_tool_result_contains("team-lead's inbox"),
        planner(Rule::tool_use("SendMessage", send("team-lead", json!("PLANNER-DONE: note written"))))
            .when_tool_result_contains("File created"),
        planner(Rule::tool_use("Write", json!({"file_path": note, "content": "planned\n"})))
            .when_last_user_contains("[Plan Approved]"),
        planner(Rule::tool_use("ExitPlanMode", json!({"plan": "PLAN-V2: write note.txt, with tests"})))
            .when_last_user_contains("[Plan Rejected] ADD-TESTS"),
        planner(Rule::text("PLANNER-WAITING")).when_tool_result_contains("submitted to the team lead"),
        planner(Rule::tool_use("ExitPlanMode", json!({"plan": "PLAN-V1: write note.txt"})))
            .when_tool_result_contains("plan mode"),
        planner(Rule::tool_use("Write", json!({"file_path": note, "content": "too early\n"})))
            .when_tool_result(false),
        lead(Rule::text("PLAN-ALL-DONE")).when_last_user_contains("planner has shut down"),
        lead(Rule::tool_use("SendMessage", send("planner", json!({"type": "shutdown_request"}))))
            .when_last_user_contains("PLANNER-DONE")
            .times(1),
        lead(Rule::tool_use(
            "SendMessage",
            send("planner", json!({"type": "plan_approval_response", "approve": true})),
        ))
        .when_last_user_contains("PLAN-V2")
        .times(1),
        lead(Rule::tool_use(
            "SendMessage",
            send(
                "planner",
                json!({"type": "plan_approval_response", "approve": false, "feedback": "ADD-TESTS"}),
            ),
        ))
        .when_last_user_contains("PLAN-V1")
        .times(1),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "plan the note", "name": "planner", "prompt": "PLANNER-START: plan, then write note.txt"}),
        ))
        .when_tool_result(false)
        .times(1),
        lead(Rule::text("PLAN-LEAD-NOTED")),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_mode_teammate_waits_for_approval_and_revises_a_rejected_plan() {
    let project = Project::new(&[("README.md", "plan test\n")]);
    let note = project.path("note.txt");
    let server = server(plan_scenario(&note)).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "PLAN-E2E: have a planner write a note",
                "--permission-mode",
                "plan",
                "--allowedTools",
                "Write",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "stderr: {}\n{lines:#?}", stderr(&out));
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    if std::env::var("FLEET_TEST_DUMP").is_ok() && result["result"] != "PLAN-ALL-DONE" {
        std::fs::write("/tmp/plan-dump.txt", common::stdout(&out)).unwrap();
    }
    assert_eq!(result["result"], "PLAN-ALL-DONE", "{result:#}");

    let team = lines
        .iter()
        .find(|l| l["subtype"] == "teammate_spawned")
        .map(|l| l["team"].as_str().unwrap().to_string())
        .unwrap();
    let results = tool_results(&lines, &format!("planner@{team}"));
    // Before approval the planner could not write; its plan went to the lead twice.
    assert!(
        results[0].contains("plan mode"),
        "the first Write is refused in plan mode: {results:#?}"
    );
    let submitted = results
        .iter()
        .filter(|r| r.contains("submitted to the team lead"))
        .count();
    assert_eq!(
        submitted, 2,
        "a rejected plan is revised and submitted again"
    );
    assert_eq!(
        project.read("note.txt"),
        "planned\n",
        "written after approval"
    );

    // The teammate read the verdicts as text, and the lead read both plans.
    let requests = server.requests();
    let planner_saw = |text: &str| {
        requests.iter().any(|r| {
            let body = r.body.to_string();
            body.contains("PLANNER-START") && body.contains(text)
        })
    };
    assert!(planner_saw("[Plan Rejected] ADD-TESTS"));
    assert!(planner_saw("[Plan Approved]"));
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(project.fleet_home.join(format!("teams/{team}/config.json")))
            .unwrap(),
    )
    .unwrap();
    let planner = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "planner")
        .unwrap();
    assert_eq!(planner["planModeRequired"], true);
    assert_eq!(planner["mode"], "default", "approval lifted plan mode");
}

fn resume_scenario() -> Scenario {
    let worker = |rule: Rule| rule.when_marker("RESUME-WORKER");
    let lead = |rule: Rule| rule.when_marker("RESUME-E2E");
    Scenario::with_rules([
        worker(Rule::tool_use(
            "SendMessage",
            send("team-lead", json!({"type": "shutdown_response", "approve": true})),
        ))
        .when_last_user_contains("shutdown_request"),
        worker(Rule::text("WORKER-IDLE")).when_tool_result_contains("team-lead's inbox"),
        worker(Rule::tool_use("SendMessage", send("team-lead", json!("WORKER-GOT-IT"))))
            .when_last_user_contains("LEAD-MAIL-BEFORE-CRASH"),
        worker(Rule::text("WORKER-RESUMED")).when_last_user_contains("fleet was restarted"),
        worker(Rule::tool_use("Bash", json!({"command": "sleep 30"})))
            .when_tool_result(false)
            .times(1),
        lead(Rule::text("RESUME-DONE")).when_last_user_contains("worker has shut down"),
        lead(Rule::tool_use("SendMessage", send("worker", json!({"type": "shutdown_request"}))))
            .when_last_user_contains("WORKER-GOT-IT")
            .times(1),
        lead(Rule::text("LEAD-SAW-TASKS")).when_tool_result_contains("[pending] TASK-SURVIVES"),
        lead(Rule::tool_use("TaskList", json!({}))).when_last_user_contains("RESUME-CONTINUE"),
        lead(Rule::text("LEAD-RUN1-WAITING")).when_tool_result_contains("worker's inbox"),
        lead(Rule::tool_use("SendMessage", send("worker", json!("LEAD-MAIL-BEFORE-CRASH"))))
            .when_tool_result_contains("created successfully"),
        lead(Rule::tool_use(
            "TaskCreate",
            json!({"subject": "TASK-SURVIVES", "description": "must outlive a crash"}),
        ))
        .when_tool_result_contains("Spawned successfully"),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "long worker", "name": "worker", "prompt": "RESUME-WORKER: run the long job"}),
        ))
        .when_tool_result(false)
        .times(1),
        lead(Rule::text("LEAD-NOTED")),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_killed_with_sigkill_comes_back_on_resume_with_its_mail_and_tasks() {
    let project = Project::new(&[("README.md", "resume test\n")]);
    let server = server(resume_scenario()).await;
    let session = "5d2c1e0f-8a7b-4c3d-9e1f-0a2b3c4d5e6f";
    let mut first = project.command(
        &server,
        &[
            "-p",
            "RESUME-E2E: start a worker",
            "--session-id",
            session,
            "--allowedTools",
            "Bash(sleep *)",
            "--output-format",
            "stream-json",
        ],
    );
    let mut child = first
        .stdin(std::process::Stdio::null())
        .stdout(match std::env::var("FLEET_TEST_DUMP") {
            Ok(path) => std::process::Stdio::from(std::fs::File::create(path + ".first").unwrap()),
            Err(_) => std::process::Stdio::null(),
        })
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the lead has written the task and the worker's mail, while the worker is
    // inside its long command; then kill fleet outright.
    let teams = project.fleet_home.join("teams");
    let team = format!("session-{}", &session[..8]);
    let inbox = teams.join(&team).join("inboxes");
    let task = project.fleet_home.join(format!("tasks/{team}/1.json"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        // Opened only once the team exists: opening an inbox makes its folder.
        let mail_waiting = teams.join(&team).join("config.json").exists()
            && fleet_store::Mailbox::open(&inbox, "worker")
                .and_then(|m| m.pending())
                .unwrap_or(0)
                > 0;
        if mail_waiting && task.exists() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never got there"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the first run ended early"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "RESUME-CONTINUE: go on",
                "--resume",
                session,
                "--allowedTools",
                "Bash(sleep *)",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "stderr: {}\n{lines:#?}", stderr(&out));
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "RESUME-DONE", "{result:#}");
    let back: Vec<&Value> = lines
        .iter()
        .filter(|l| l["subtype"] == "teammate_spawned")
        .collect();
    assert_eq!(back.len(), 1, "{back:#?}");
    assert_eq!(back[0]["name"], "worker");
    assert_eq!(back[0]["resumed"], true);
    // The mail sent before the crash was read once, after it.
    let requests = server.requests();
    let got_it = requests
        .iter()
        .filter(|r| {
            let body = r.body.to_string();
            body.contains("RESUME-WORKER") && body.contains("WORKER-GOT-IT")
        })
        .count();
    assert!(
        got_it >= 1,
        "the worker answered the mail sent before the crash"
    );
    let answered = lines
        .iter()
        .filter(|l| l["subtype"] == "team_message" && l["text"] == "WORKER-GOT-IT")
        .count();
    assert_eq!(answered, 1, "delivered exactly once");
    // The worker's conversation came back from its transcript: its cut-off call is answered.
    let resumed_request = requests
        .iter()
        .find(|r| r.body.to_string().contains("fleet was restarted"))
        .expect("the worker was told it had been cut off");
    assert!(resumed_request.body.to_string().contains("sleep 30"));
    // The task list survived.
    let task: Value = serde_json::from_str(&std::fs::read_to_string(task).unwrap()).unwrap();
    assert_eq!(task["subject"], "TASK-SURVIVES");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_text_shows_who_said_what_to_whom() {
    let project = Project::new(&[("README.md", "team test\n")]);
    let server = server(scenario()).await;
    let out = project
        .run_with_env(&server, &["-p", "TEAM-E2E: run the team", "--verbose"], &[])
        .await;
    let text = common::stdout(&out);
    assert!(out.status.success(), "stderr: {}\n{text}", stderr(&out));
    for expected in [
        "team alpha-squad created",
        "+ alpha (general-purpose) joined",
        "✉ beta → alpha: PEER-HI from beta",
        "✉ team-lead → beta: BROADCAST-HELLO",
        "☐ task #1 updated: [completed] TASK-ONE write notes (alpha)",
        "- beta has shut down.",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(
        text.trim_end().ends_with("ALL-DONE") || text.contains("\nALL-DONE\n"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_messages_another_over_its_unix_socket() {
    let project = Project::new(&[("README.md", "uds test\n")]);
    let flag = project.path("done.flag");
    let b_session = "b0b0b0b0-1111-4222-8333-444455556666";
    let socket = project
        .fleet_home
        .join("sockets")
        .join(format!("{b_session}.sock"));
    let socket_text = socket.display().to_string();
    let server = server(Scenario::with_rules([
        // Session B: a teammate that waits for the test's flag keeps B alive.
        Rule::tool_use(
            "Bash",
            json!({"command": format!("while [ ! -f {flag} ]; do sleep 0.05; done")}),
        )
        .when_marker("NAPPER-START")
        .when_tool_result(false),
        Rule::text("NAPPER-UP").when_marker("NAPPER-START"),
        Rule::text("B-GOT-HELLO")
            .when_marker("UDS-B")
            .when_last_user_contains("CROSS-SESSION-HELLO"),
        Rule::tool_use(
            "Agent",
            json!({"description": "keep alive", "name": "napper", "prompt": "NAPPER-START"}),
        )
        .when_marker("UDS-B")
        .when_tool_result(false)
        .times(1),
        Rule::text("B-NOTED").when_marker("UDS-B"),
        // Session A: one message to B, one to nobody.
        Rule::text("A-SENT")
            .when_marker("UDS-A")
            .when_tool_result(true),
        Rule::tool_use(
            "SendMessage",
            json!({"to": format!("uds:{socket_text}"), "message": "CROSS-SESSION-HELLO", "summary": "hello B"}),
        )
        .then_tool_use(
            "SendMessage",
            json!({"to": "uds:00000000-dead-4bee-8000-000000000000", "message": "anyone?"}),
        )
        .then_tool_use(
            "SendMessage",
            json!({"to": "uds:/var/run/docker.sock", "message": "{\"x\":1}"}),
        )
        .when_marker("UDS-A")
        .when_tool_result(false),
    ]))
    .await;
    let mut b = project.command(
        &server,
        &[
            "-p",
            "UDS-B: wait for mail",
            "--session-id",
            b_session,
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let b = b
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !socket.exists() {
        assert!(std::time::Instant::now() < deadline, "B never listened");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let a = project
        .run_with_env(
            &server,
            &[
                "-p",
                "UDS-A: say hello to B",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[],
        )
        .await;
    std::fs::write(&flag, "").unwrap();
    let b = tokio::task::spawn_blocking(move || {
        fleet_testkit::wait_output(b, fleet_testkit::WAIT, "session B")
    })
    .await
    .unwrap();
    let a_lines = json_lines(&a);
    assert!(a.status.success(), "A: {}", stderr(&a));
    let sends = common::tool_result_texts(&a_lines, |_| true);
    assert!(
        sends[0].contains("Message delivered to the session on"),
        "{sends:#?}"
    );
    assert!(
        sends[1].contains("Nobody listens on")
            && sends[1].contains("00000000-dead-4bee-8000-000000000000.sock"),
        "{sends:#?}"
    );
    assert!(
        sends[2].contains("reaches other fleet sessions only"),
        "any other socket on the machine is out of reach: {sends:#?}"
    );

    let b_lines = json_lines(&b);
    assert!(b.status.success(), "B: {}", stderr(&b));
    assert!(!socket.exists(), "B removed its socket when it ended");
    assert!(
        b_lines
            .iter()
            .any(|l| l["type"] == "result" && l["result"] == "B-GOT-HELLO"),
        "B's lead read the message: {b_lines:#?}"
    );
    let b_saw = server.requests().iter().any(|r| {
        let body = r.body.to_string();
        body.contains("UDS-B")
            && body.contains("CROSS-SESSION-HELLO")
            && body.contains("teammate_id=\\\"uds:main@session-")
    });
    assert!(
        b_saw,
        "the message arrived as teammate mail naming A's session"
    );
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(
            project
                .fleet_home
                .join(format!("teams/session-{}/config.json", &b_session[..8])),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["socket"], socket_text,
        "B's team file names its socket"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_the_transcript_says_was_read_is_not_delivered_again_after_a_resume() {
    let project = Project::new(&[("README.md", "dedupe test\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("HELPER-HI").when_marker("HELPER-START"),
        Rule::text("LEAD-SAW-FRESH")
            .when_marker("DEDUPE-E2E")
            .when_last_user_contains("FRESH-AFTER-RESUME"),
        Rule::tool_use(
            "Agent",
            json!({"description": "helper", "name": "helper", "prompt": "HELPER-START"}),
        )
        .when_marker("DEDUPE-E2E")
        .when_tool_result(false)
        .times(1),
        Rule::text("LEAD-NOTED").when_marker("DEDUPE-E2E"),
    ]))
    .await;
    let session = "d0d0d0d0-1111-4222-8333-444455556666";
    let first = project
        .run_with_env(
            &server,
            &["-p", "DEDUPE-E2E: start", "--session-id", session],
            &[],
        )
        .await;
    assert!(first.status.success(), "{}", stderr(&first));
    // The lead's transcript records the ids of the mail each of its turns delivered.
    let transcript = project
        .transcripts()
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let read_id = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|e| e["mailIds"][0].as_str().map(str::to_string))
        .expect("a turn that delivered mail names it");
    // As if fleet had died after writing that turn but before marking the mail read: the
    // same message is in the inbox again, next to a new one.
    let inbox = project
        .fleet_home
        .join(format!("teams/session-{}/inboxes", &session[..8]));
    let mailbox = fleet_store::Mailbox::open(&inbox, "team-lead").unwrap();
    let stamp = "2026-12-01T17:00:00.000Z";
    mailbox
        .append(&fleet_protocol::MailEntry::new(
            "helper",
            "DUPLICATE-OLD",
            stamp,
            read_id,
        ))
        .unwrap();
    mailbox
        .append(&fleet_protocol::MailEntry::new(
            "helper",
            "FRESH-AFTER-RESUME",
            stamp,
            "fresh-1",
        ))
        .unwrap();

    let second = project
        .run_with_env(
            &server,
            &[
                "-p",
                "RESUME-CHECK",
                "--resume",
                session,
                "--output-format",
                "json",
            ],
            &[],
        )
        .await;
    assert!(second.status.success(), "{}", stderr(&second));
    let bodies: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        bodies.iter().any(|b| b.contains("FRESH-AFTER-RESUME")),
        "new mail delivered"
    );
    assert!(
        !bodies.iter().any(|b| b.contains("DUPLICATE-OLD")),
        "mail already read was delivered again"
    );
    assert_eq!(mailbox.pending().unwrap(), 0, "both entries are consumed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_brought_back_skips_mail_its_transcript_says_it_read() {
    let project = Project::new(&[("README.md", "dedupe test\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("HELPER-GOT-SECOND")
            .when_marker("HELPER-START")
            .when_last_user_contains("SECOND-MAIL"),
        Rule::text("HELPER-OK").when_marker("HELPER-START"),
        Rule::tool_use("SendMessage", json!({"to": "helper", "message": "WAKE-UP"}))
            .when_marker("MATE-DEDUPE")
            .when_last_user_contains("RESUME-WAKE")
            .times(1),
        Rule::tool_use(
            "SendMessage",
            json!({"to": "helper", "message": "FIRST-MAIL"}),
        )
        .when_marker("MATE-DEDUPE")
        .when_tool_result_contains("Spawned successfully")
        .times(1),
        Rule::tool_use(
            "Agent",
            json!({"description": "helper", "name": "helper", "prompt": "HELPER-START"}),
        )
        .when_marker("MATE-DEDUPE")
        .when_tool_result(false)
        .times(1),
        Rule::text("LEAD-NOTED").when_marker("MATE-DEDUPE"),
    ]))
    .await;
    let session = "e0e0e0e0-1111-4222-8333-444455556666";
    let first = project
        .run_with_env(
            &server,
            &["-p", "MATE-DEDUPE: start", "--session-id", session],
            &[],
        )
        .await;
    assert!(first.status.success(), "{}", stderr(&first));
    // The helper's transcript names the id of FIRST-MAIL; put that message back in its inbox,
    // as if fleet had died before marking it read, with a new one after it.
    let subagents = project
        .transcripts()
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap()
        .join("subagents");
    let helper_transcript = std::fs::read_dir(&subagents)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.display().to_string().contains("ahelper-")
                && p.extension().is_some_and(|e| e == "jsonl")
        })
        .unwrap();
    let first_id = std::fs::read_to_string(&helper_transcript)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e.to_string().contains("FIRST-MAIL"))
        .find_map(|e| e["mailIds"][0].as_str().map(str::to_string))
        .expect("the turn that delivered FIRST-MAIL names it");
    let inbox = project
        .fleet_home
        .join(format!("teams/session-{}/inboxes", &session[..8]));
    let mailbox = fleet_store::Mailbox::open(&inbox, "helper").unwrap();
    let stamp = "2026-12-01T17:00:00.000Z";
    for (text, id) in [
        ("FIRST-MAIL", first_id.as_str()),
        ("SECOND-MAIL", "second-1"),
    ] {
        mailbox
            .append(&fleet_protocol::MailEntry::new(
                "team-lead",
                text,
                stamp,
                id,
            ))
            .unwrap();
    }

    let second = project
        .run_with_env(&server, &["-p", "RESUME-WAKE", "--resume", session], &[])
        .await;
    assert!(second.status.success(), "{}", stderr(&second));
    let helper_requests: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        // The helper's requests: teammates' system prompts carry the teammate notes.
        .filter(|b| b.contains("Agent Teammate Communication"))
        .collect();
    // How often one delivery of FIRST-MAIL shows in a request (text and summary).
    let once = helper_requests
        .iter()
        .find(|b| b.contains("FIRST-MAIL"))
        .unwrap()
        .matches("FIRST-MAIL")
        .count();
    let last = helper_requests
        .iter()
        .rfind(|b| b.contains("SECOND-MAIL"))
        .expect("the helper read the new mail");
    assert_eq!(
        last.matches("FIRST-MAIL").count(),
        once,
        "FIRST-MAIL is in its history once, not delivered again"
    );
    assert_eq!(mailbox.pending().unwrap(), 0);
}
