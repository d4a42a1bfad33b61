//! `fleet -p` with subagents, as a user's script sees it: the stream-json lines of a session
//! with a background agent (in the reference's order), the json result's tree figures,
//! subagent transcripts on disk, and `--agents`.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, result_of, server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

const CHILD: &str = "running as a subagent";

/// The line kinds, in order, of Claude Code's stream-json output for the same session (one
/// background agent; `cc-stream-json-background.jsonl` in the project's reference material).
const REFERENCE: [&str; 14] = [
    "system/init",
    "assistant",
    "system/background_tasks_changed",
    "system/task_started",
    "user",
    "assistant",
    "assistant",
    "system/task_updated",
    "system/task_notification",
    "system/background_tasks_changed",
    "system/init",
    "assistant",
    "result",
    "result",
];

fn background() -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-RESULT-42")
            .when_system_contains(CHILD)
            .delay_ms(300),
        Rule::text("MAIN-SAW-NOTIFICATION").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use(
            "Agent",
            json!({"description": "background job", "prompt": "Do BGTASK-1 and report",
                   "subagent_type": "general-purpose", "run_in_background": true}),
        )
        .when_tool_result(false),
    ])
}

fn kind(line: &Value) -> String {
    match line["subtype"].as_str() {
        Some(sub) if line["type"] != "result" => {
            format!("{}/{sub}", line["type"].as_str().unwrap())
        }
        _ => line["type"].as_str().unwrap().to_string(),
    }
}

#[tokio::test]
async fn a_background_agent_prints_the_reference_lines_in_order() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(background()).await;
    let (_, lines) = project
        .stream_json(&server, "start a background job", &[])
        .await;
    let ours: Vec<String> = lines.iter().map(kind).collect();
    assert_eq!(ours, REFERENCE);
    let agents = lines[0]["agents"].as_array().unwrap();
    for name in ["general-purpose", "Explore", "Plan", "verification"] {
        assert!(agents.iter().any(|a| a == name), "{agents:?}");
    }

    // The subagent's line names it and the call that started it.
    let launch_id = lines[1]["message"]["content"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let child = lines
        .iter()
        .find(|l| l["type"] == "assistant" && !l["parent_tool_use_id"].is_null())
        .unwrap();
    assert_eq!(child["parent_tool_use_id"], launch_id.as_str());
    assert_eq!(child["subagent_type"], "general-purpose");
    assert_eq!(child["task_description"], "background job");
    let task_id = child["agent_id"].as_str().unwrap();
    let started = lines
        .iter()
        .find(|l| l["subtype"] == "task_started")
        .unwrap();
    assert_eq!(
        (started["task_id"].as_str(), started["tool_use_id"].as_str()),
        (Some(task_id), Some(launch_id.as_str()))
    );
    let notified = lines
        .iter()
        .find(|l| l["subtype"] == "task_notification")
        .unwrap();
    assert_eq!(notified["status"], "completed");
    assert_eq!(notified["summary"], "CHILD-RESULT-42");

    // Two results, numbered; the second answers the notification and carries the tree.
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results[0]["result"], "MAIN-WAITING");
    assert_eq!(results[1]["result"], "MAIN-SAW-NOTIFICATION");
    assert_eq!(
        (
            results[0]["result_index"].as_u64(),
            results[1]["result_index"].as_u64()
        ),
        (Some(0), Some(1))
    );
    assert_eq!(results[1]["origin"]["kind"], "task-notification");
    let stats = &results[1]["subagent_stats"];
    assert_eq!(
        (stats["spawned"].as_u64(), stats["completed"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(stats["requested"]["background"], 1);

    // The subagent's conversation is on disk under the session.
    let session = lines[0]["session_id"].as_str().unwrap();
    let sidechain = std::fs::read_dir(project.fleet_home.join("projects"))
        .unwrap()
        .flatten()
        .map(|p| {
            p.path()
                .join(session)
                .join("subagents")
                .join(format!("agent-{task_id}.jsonl"))
        })
        .find(|p| p.exists())
        .expect("the subagent transcript");
    let text = std::fs::read_to_string(sidechain).unwrap();
    assert!(text.contains("Do BGTASK-1 and report") && text.contains("CHILD-RESULT-42"));
}

#[tokio::test]
async fn json_output_waits_for_the_background_agent_and_reports_the_tree() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(background()).await;
    let out = project
        .run(
            &server,
            &["-p", "start a background job", "--output-format", "json"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    let result = result_of(&lines);
    assert_eq!(result["result"], "MAIN-SAW-NOTIFICATION");
    let agents = result["usage_by_agent"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0]["agent_type"], "main");
    assert_eq!(agents[0]["status"], "completed");
    assert_eq!(agents[1]["agent_type"], "general-purpose");
    assert_eq!(agents[1]["status"], "completed");
    let sum: f64 = agents.iter().map(|a| a["cost_usd"].as_f64().unwrap()).sum();
    assert!((result["total_cost_usd"].as_f64().unwrap() - sum).abs() < 1e-9);
    // Text output ends with the answer given after the notification.
    let out = project
        .run(&server, &["-p", "start a background job"], "")
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "MAIN-SAW-NOTIFICATION");
}

#[tokio::test]
async fn agents_given_on_the_command_line_can_be_started() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([
        Rule::text("REVIEWED").when_system_contains("You review diffs for security"),
        Rule::tool_use("Agent", json!({"description": "review", "prompt": "Review the diff", "subagent_type": "reviewer"}))
            .when_tool_result(false),
        Rule::text("DONE").when_tool_result(true),
    ]))
    .await;
    let agents = json!({"reviewer": {"description": "Reviews diffs", "prompt": "You review diffs for security.", "tools": ["Read", "Grep"]}});
    let out = project
        .run(
            &server,
            &[
                "-p",
                "review",
                "--output-format",
                "json",
                "--agents",
                &agents.to_string(),
            ],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = result_of(&json_lines(&out)).clone();
    assert_eq!(result["result"], "DONE");
    assert_eq!(result["subagent_stats"]["by_type"]["reviewer"], 1);
    let child = server
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("You review diffs for security"))
        .unwrap();
    let tools: Vec<&str> = child.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Grep", "Read"]);
}

#[tokio::test]
async fn bad_limits_and_agent_json_are_clear_errors_before_any_request() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = server(Scenario::with_rules([Rule::text("never")])).await;
    let mut cmd = project.command(&server, &["-p", "hi"]);
    cmd.env("FLEET_MAX_SPAWN_DEPTH", "deep");
    let out = tokio::task::spawn_blocking(move || {
        fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet -p hi")
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("FLEET_MAX_SPAWN_DEPTH"),
        "{}",
        stderr(&out)
    );

    let out = project
        .run(&server, &["-p", "hi", "--agents", "{not json"], "")
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--agents"), "{}", stderr(&out));
    assert_eq!(server.request_count(), 0);
}
