//! `fleet -p` with forking on: from the `forkSubagent` setting or `FLEET_FORK_SUBAGENT`, the
//! variable winning; a fork runs in the background and the parent answers its notification.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

fn scenario() -> Scenario {
    Scenario::with_rules([
        Rule::text("FORK-REPORT").when_last_user_contains("<fork-boilerplate>"),
        Rule::text("CHILD-REPORT").when_system_contains("running as a subagent"),
        Rule::text("MAIN-DONE").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-DONE").when_tool_result_contains("REPORT"),
        Rule::text("MAIN-WAITING").when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "look", "prompt": "check the notes"}),
        )
        .when_tool_result(false),
    ])
}

#[tokio::test]
async fn the_setting_turns_forking_on_and_the_variable_overrides_it() {
    let project = Project::new(&[(".fleet/settings.json", r#"{"forkSubagent": true}"#)]);
    for (variable, forks) in [(None, true), (Some("0"), false), (Some("1"), true)] {
        let server = server(scenario()).await;
        let mut cmd = project.command(
            &server,
            &["-p", "go", "--output-format", "stream-json", "--verbose"],
        );
        if let Some(value) = variable {
            cmd.env("FLEET_FORK_SUBAGENT", value);
        }
        let out = tokio::task::spawn_blocking(move || {
            fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet -p go")
        })
        .await
        .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let forked = server
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("<fork-boilerplate>"));
        assert_eq!(forked, forks, "FLEET_FORK_SUBAGENT={variable:?}");
        let lines = json_lines(&out);
        let started: Vec<_> = lines
            .iter()
            .filter(|l| l["subtype"] == "task_started")
            .collect();
        // A fork always runs in the background; a plain subagent here runs in the foreground
        // (and is announced as a task too).
        assert_eq!(started.len(), 1, "{variable:?}");
        assert_eq!(started[0]["is_backgrounded"], forks, "{variable:?}");
        let last = lines.iter().rfind(|l| l["type"] == "result").unwrap();
        assert_eq!(last["result"], "MAIN-DONE");
        // The schema offers no run_in_background when every child runs in the background.
        let first = &server.requests()[0];
        let agent = first.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "Agent")
            .unwrap()
            .clone();
        assert_eq!(
            agent["input_schema"]["properties"]
                .get("run_in_background")
                .is_none(),
            forks
        );
    }
}
