//! MCP servers in a headless session, end to end: the real binary, the fake model server, and
//! fleet's MCP fault server as a real stdio server. Servers start with the session, their
//! tools are offered as `mcp__<server>__<tool>`, the `init` line says how each start went,
//! and a server that cannot start is reported without stopping the session.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tool_is_offered_and_called_and_a_failed_server_is_reported() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {
        "faulty": {"command": fault, "args": ["--instructions", "FAULTY-INSTRUCTIONS"]},
        "broken": {"command": "/nonexistent/mcp-server"}
    }})
    .to_string();
    let server = server(Scenario::with_rules([
        Rule::text("MCP-DONE").when_tool_result_contains("hello over mcp"),
        Rule::tool_use("mcp__faulty__echo", json!({"text": "hello over mcp"}))
            .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "use the echo tool",
                "--mcp-config",
                &config,
                "--allowedTools",
                "mcp__faulty",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    let init = &lines[0];
    let statuses: Vec<(String, String)> = init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("faulty".into(), "connected".into())),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("broken".into(), "failed".into())),
        "{statuses:?}"
    );
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "mcp__faulty__echo"),
        "{init:#}"
    );
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "MCP-DONE", "{result:#}");
    let request = server.last_request().unwrap();
    let body: &Value = &request.body;
    assert!(
        body.to_string().contains("FAULTY-INSTRUCTIONS"),
        "the server's instructions are in the system prompt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_server_lives_as_long_as_the_agent_and_a_missing_one_fails_the_spawn() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config =
        json!({"mcpServers": {"broken": {"command": "/nonexistent/mcp-server"}}}).to_string();
    let agents = json!({
        "prober": {
            "description": "uses its own server",
            "prompt": "You probe.",
            "mcpServers": [{"probe": {"command": fault}}]
        },
        "needy": {
            "description": "needs a broken server",
            "prompt": "You need.",
            "mcpServers": ["broken"]
        }
    })
    .to_string();
    let server = server(Scenario::with_rules([
        Rule::text("PROBED")
            .when_marker("PROBE-TASK")
            .when_tool_result(true),
        Rule::tool_use("mcp__probe__pids", json!({}))
            .when_marker("PROBE-TASK")
            .when_tool_result(false),
        Rule::text("MAIN-DONE")
            .when_marker("MAIN")
            .when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "probe", "prompt": "PROBE-TASK", "subagent_type": "prober"}),
        )
        .then_tool_use(
            "Agent",
            json!({"description": "need", "prompt": "NEED-TASK", "subagent_type": "needy"}),
        )
        .when_marker("MAIN")
        .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "MAIN: use the agents",
                "--mcp-config",
                &config,
                "--agents",
                &agents,
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
    let results = common::tool_result_texts(&lines, |_| true);
    let pids = results
        .iter()
        .find(|r| r.contains("\\\"pid\\\"") || r.contains("\"pid\""))
        .expect("the prober called its own server");
    let pid: i32 = pids
        .split("pid")
        .nth(1)
        .and_then(|rest| {
            rest.chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse()
                .ok()
        })
        .expect("a pid");
    // Gone once the session is over. (That it stops when its agent ends, before the session
    // does, is not told apart here yet: see NOTES.md.)
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the agent's own server is gone (pid {pid})"
    );
    assert!(
        results
            .iter()
            .any(|r| r.contains("needs MCP servers that are unavailable") && r.contains("broken")),
        "the spawn failed naming the server: {results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_list_and_get_start_each_server_and_report_it() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    // Two approved project servers, and one the user never approved: listed, not started.
    let project = Project::new(&[(
        ".claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["faulty", "broken"]}"#,
    )]);
    std::fs::write(
        project.repo.join(".mcp.json"),
        json!({"mcpServers": {
            "faulty": {"command": fault, "args": ["--bad-schema"]},
            "broken": {"command": "/nonexistent/mcp-server"},
            "sneaky": {"command": fault}
        }})
        .to_string(),
    )
    .unwrap();
    let server = server(Scenario::with_rules([])).await;
    let out = project
        .run_with_env(
            &server,
            &["mcp", "list", "--json"],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    // `broken` failed: a health check's status 1, with every server still listed.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    let servers = listed["servers"].as_array().unwrap();
    let faulty = servers.iter().find(|s| s["name"] == "faulty").unwrap();
    assert_eq!(faulty["status"], "connected");
    assert_eq!(faulty["transport"], "stdio");
    assert!(faulty["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "echo"));
    let sneaky = servers.iter().find(|s| s["name"] == "sneaky").unwrap();
    assert_eq!(sneaky["status"], "not approved", "{sneaky:#}");
    assert!(sneaky["error"]
        .as_str()
        .unwrap()
        .contains("enabledMcpjsonServers"));
    let broken = servers.iter().find(|s| s["name"] == "broken").unwrap();
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"].as_str().unwrap().contains("nonexistent"),
        "{broken:#}"
    );

    let out = project
        .run_with_env(
            &server,
            &["mcp", "get", "faulty"],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said = common::stdout(&out);
    assert!(said.contains("echo"), "{said}");
    assert!(
        said.contains("left out: broken (its input schema is not an object schema"),
        "{said}"
    );
    let out = project
        .run_with_env(&server, &["mcp", "get", "nosuch"], &[])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("configured: broken, faulty, sneaky"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_on_an_mcp_tool_binds_subagents_too() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    // A settings deny rule naming the server: the tools stay offered, and every call of one
    // is refused, by the main agent's children as by itself.
    let project = Project::new(&[(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["mcp__faulty"]}}"#,
    )]);
    let config = json!({"mcpServers": {"faulty": {"command": fault}}}).to_string();
    let server = server(Scenario::with_rules([
        Rule::text("CHILD-TRIED")
            .when_marker("CHILD-TASK")
            .when_tool_result(true),
        Rule::tool_use("mcp__faulty__add", json!({"a": 2, "b": 3}))
            .when_marker("CHILD-TASK")
            .when_tool_result(false),
        Rule::text("MAIN-DONE")
            .when_marker("MAIN")
            .when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({"description": "try the tool", "prompt": "CHILD-TASK"}),
        )
        .when_marker("MAIN")
        .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "MAIN: delegate",
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
    let child_results = common::tool_result_texts(&lines, |l| !l["parent_tool_use_id"].is_null());
    assert_eq!(child_results.len(), 1, "{child_results:#?}");
    assert!(
        child_results[0].contains("denied") && child_results[0] != "\"5\"",
        "the child's call was refused by the rule, even in bypassPermissions: {child_results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_server_is_stopped_when_the_agent_ends_while_the_session_goes_on() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    // A token only this server's command line carries (not fleet's: the definition is in a
    // file), so the check below finds no other process.
    let token = format!("PROBE-SRV-{}", std::process::id());
    let definition = format!(
        "---\nname: prober\ndescription: uses its own server\nmcpServers:\n  - probe:\n      \
         command: {}\n      args: [\"--instructions\", \"{token}\"]\n---\nYou probe.\n",
        fault.display()
    );
    let project = Project::new(&[
        ("README.md", "mcp\n"),
        (".claude/agents/prober.md", definition.as_str()),
        (
            ".claude/settings.local.json",
            r#"{"enabledMcpjsonServers": ["probe"]}"#,
        ),
    ]);
    // `[P]ROBE…` keeps the shell running pgrep from matching its own command line.
    let check = format!(
        "pgrep -f '[{}]{}' >/dev/null && echo SERVER-ALIVE || echo SERVER-STOPPED",
        &token[..1],
        &token[1..]
    );
    let server = server(Scenario::with_rules([
        Rule::text("PROBED")
            .when_marker("PROBE-TASK")
            .when_tool_result(true),
        Rule::tool_use("mcp__probe__echo", json!({"text": "probing"}))
            .when_marker("PROBE-TASK")
            .when_tool_result(false),
        Rule::text("MAIN-DONE")
            .when_marker("MAIN")
            .when_tool_result_contains("SERVER-"),
        Rule::tool_use("Bash", json!({"command": check}))
            .when_marker("MAIN")
            .when_tool_result_contains("PROBED"),
        Rule::tool_use(
            "Agent",
            json!({"description": "probe", "prompt": "PROBE-TASK", "subagent_type": "prober"}),
        )
        .when_marker("MAIN")
        .when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "MAIN: probe, then look",
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
    let results = common::tool_result_texts(&lines, |_| true);
    assert!(
        results.iter().any(|r| r.contains("probing")),
        "the child called its own server while it ran: {results:#?}"
    );
    assert!(
        results.iter().any(|r| r.contains("SERVER-STOPPED")),
        "the server was gone before the session ended: {results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_result_reaches_the_model_as_an_image_block() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {"faulty": {"command": fault}}}).to_string();
    let server = server(Scenario::with_rules([
        Rule::text("SAW-IT").when_tool_result(true),
        Rule::tool_use("mcp__faulty__image", json!({})).when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "look at the picture",
                "--mcp-config",
                &config,
                "--allowedTools",
                "mcp__faulty__image",
                "--output-format",
                "json",
            ],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let body = server.last_request().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let result = messages
        .last()
        .and_then(|m| m["content"].as_array())
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_result"))
        .expect("a tool result in the last request");
    let blocks = result["content"].as_array().expect("block content");
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "text" && b["text"].as_str().unwrap().contains("a red pixel")),
        "{result:#}"
    );
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(image["source"]["data"], "iVBORw0KGgo=");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_shows_the_new_tool_in_the_very_next_request() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {"faulty": {"command": fault}}}).to_string();
    let server = server(Scenario::with_rules([
        Rule::text("USED-EXTRA").when_tool_result_contains("extra"),
        Rule::tool_use("mcp__faulty__extra", json!({})).when_tool_result_contains("tools changed"),
        Rule::tool_use("mcp__faulty__change_tools", json!({})).when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "change the tools",
                "--mcp-config",
                &config,
                "--allowedTools",
                "mcp__faulty",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    let requests = server.requests();
    let offered = |i: usize| -> Vec<String> {
        requests[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(requests.len(), 3, "{lines:#?}");
    assert!(!offered(0).contains(&"mcp__faulty__extra".to_string()));
    assert!(
        offered(1).contains(&"mcp__faulty__extra".to_string()),
        "the request right after the change offers the new tool: {:?}",
        offered(1)
    );
    let results = common::tool_result_texts(&lines, |_| true);
    assert!(
        results
            .last()
            .is_some_and(|r| r.contains("extra") && !r.contains("No such tool")),
        "{results:#?}"
    );
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "USED-EXTRA");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinators_worker_context_names_the_connected_servers() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {
        "faulty": {"command": fault},
        "broken": {"command": "/nonexistent/mcp-server"}
    }})
    .to_string();
    let server = server(Scenario::with_rules([Rule::text("COORDINATED")])).await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "plan it",
                "--coordinator",
                "--mcp-config",
                &config,
                "--output-format",
                "json",
            ],
            &[("MCP_TIMEOUT", "10000")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let system = server.last_request().unwrap().body["system"].to_string();
    assert!(
        system.contains("They can also use the tools of these MCP servers: faulty."),
        "only the connected server is named: {system}"
    );
    assert!(system.contains("mcp__faulty__echo"), "{system}");
}
