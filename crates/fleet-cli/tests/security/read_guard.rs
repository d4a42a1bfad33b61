//! Read deny rules in the project's settings bind Grep and Glob for the main agent and for its
//! children: a search over the project never hands a denied file's lines to the model.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

const SECRET: &str = "sk-live-SECRET-42";
const CHILD: &str = "running as a subagent";

fn project() -> Project {
    Project::new(&[
        (".env", &format!("API_KEY={SECRET}\n")),
        ("src/lib.rs", "// API_KEY is read from the environment\n"),
        (
            ".claude/settings.json",
            r#"{"permissions": {"deny": ["Read(./.env)"]}}"#,
        ),
    ])
}

fn grep_content() -> serde_json::Value {
    json!({"pattern": "API_KEY", "output_mode": "content"})
}

#[tokio::test]
async fn the_main_agent_and_an_explore_child_cannot_grep_or_glob_a_denied_file() {
    let project = project();
    let server = server(Scenario::with_rules([
        // The child: Grep and Glob the project, then report.
        Rule::text("child done")
            .when_system_contains(CHILD)
            .when_tool_result(true),
        Rule::tool_use("Grep", grep_content())
            .then_tool_use("Glob", json!({"pattern": "**/.env*"}))
            .when_system_contains(CHILD),
        // The main agent: the same searches, then an Explore child, then the answer.
        Rule::text("main done").when_tool_result_contains("child done"),
        Rule::tool_use(
            "Agent",
            json!({"description": "look", "prompt": "find API_KEY", "subagent_type": "Explore"}),
        )
        .when_tool_result(true),
        Rule::tool_use("Grep", grep_content())
            .then_tool_use("Glob", json!({"pattern": "**/.env*"})),
    ]))
    .await;
    let out = project.run(&server, &["-p", "find the key"], "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "main done\n");
    let requests = server.requests();
    assert!(requests.len() >= 4, "{}", requests.len());
    let mut searched = 0;
    for request in &requests {
        let body = request.body.to_string();
        assert!(
            !body.contains(SECRET),
            "the secret reached the model: {body}"
        );
        if body.contains("src/lib.rs:1:// API_KEY") {
            searched += 1;
        }
    }
    assert!(
        searched >= 2,
        "both agents searched and found the allowed file"
    );
}
