//! Teams end to end, headless: the real binary against the fake model server, in a temp git
//! repository. A lead creates a team, spawns two teammates, messages one directly and both by
//! broadcast; the teammates message each other, claim and complete a shared task (a second
//! claim is refused), go idle, and shut down — one after rejecting the first request.
#![allow(clippy::unwrap_used)]

mod common;

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
    lines
        .iter()
        .filter(|l| l["type"] == "user" && l["agent_id"] == agent_id)
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
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
