//! A teammate's MCP servers, end to end: the servers its definition names are required at
//! its spawn (a broken one refuses the spawn, naming it), and the server it defines inline is
//! started for it and gone when the session that ran it is over.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_gets_its_own_server_and_a_broken_required_one_refuses_the_spawn() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let token = format!("MATE-SRV-{}", std::process::id());
    let prober = format!(
        "---\nname: prober\ndescription: uses its own server\nmcpServers:\n  - probe:\n      \
         command: {}\n      args: [\"--instructions\", \"{token}\"]\n---\nYou probe.\n",
        fault.display()
    );
    let needy = "---\nname: needy\ndescription: needs a broken server\nmcpServers:\n  - broken\n---\nYou need.\n";
    let project = Project::new(&[
        ("README.md", "mcp\n"),
        (".claude/agents/prober.md", prober.as_str()),
        (".claude/agents/needy.md", needy),
        (
            ".claude/settings.local.json",
            r#"{"enabledMcpjsonServers": ["probe"]}"#,
        ),
    ]);
    let config =
        json!({"mcpServers": {"broken": {"command": "/nonexistent/mcp-server"}}}).to_string();
    let lead = |rule: Rule| rule.when_marker("TEAM-MCP");
    let mate = |rule: Rule| rule.when_marker("MATE-START");
    let server = server(Scenario::with_rules([
        mate(Rule::text("MATE-IDLE")).when_tool_result(true),
        mate(Rule::tool_use(
            "mcp__probe__echo",
            json!({"text": "mate probing"}),
        ))
        .when_tool_result(false),
        lead(Rule::text("LEAD-DONE")).when_tool_result_contains("unavailable"),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "needy", "name": "needy-mate", "subagent_type": "needy",
                   "prompt": "NEEDY-START"}),
        ))
        .when_tool_result_contains("Spawned successfully"),
        lead(Rule::tool_use(
            "Agent",
            json!({"description": "probe", "name": "probe-mate", "subagent_type": "prober",
                   "prompt": "MATE-START: probe"}),
        ))
        .when_tool_result(false)
        .times(1),
        lead(Rule::text("LEAD-NOTED")),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "TEAM-MCP: build a team",
                "--mcp-config",
                &config,
                "--permission-mode",
                "bypassPermissions",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    let results: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| {
            let who = l["agent_id"].as_str().unwrap_or("main").to_string();
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |b| (who.clone(), b))
        })
        .filter(|(_, b)| b["type"] == "tool_result")
        .map(|(who, b)| (who, b["content"].to_string()))
        .collect();
    assert!(
        results
            .iter()
            .any(|(who, r)| who.starts_with("probe-mate@") && r.contains("mate probing")),
        "the teammate called its own server: {results:#?}"
    );
    assert!(
        results.iter().any(|(who, r)| who == "main"
            && r.contains("needs MCP servers that are unavailable")
            && r.contains("broken")),
        "the needy spawn was refused naming the server: {results:#?}"
    );
    assert!(
        !lines.iter().any(|l| l["agent_id"]
            .as_str()
            .is_some_and(|a| a.starts_with("needy-mate@"))),
        "the refused teammate never ran"
    );
    let alive = std::process::Command::new("pgrep")
        .args(["-f", &token])
        .output()
        .unwrap();
    assert!(
        alive.stdout.is_empty(),
        "the teammate's server is gone with the session: {}",
        String::from_utf8_lossy(&alive.stdout)
    );
}
