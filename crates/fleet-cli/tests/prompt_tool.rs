//! `--permission-prompt-tool` on the real binary: an MCP tool (fleet's MCP fault server's
//! `approve`) answers the "ask" decisions, and `stdio` is accepted for the control protocol.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_permission_prompt_tool_answers_the_asks() {
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let project = Project::new(&[("README.md", "# app\n")]);
    let config = json!({"mcpServers": {"gate": {"command": fault}}}).to_string();
    let server = server(Scenario::queue([
        Rule::tool_use("Bash", json!({"command": "echo ok > allowed.txt"})),
        Rule::tool_use("Bash", json!({"command": "echo DENY-ME > denied.txt"})),
        Rule::text("GATE-DONE"),
    ]))
    .await;
    let (_, lines) = project
        .stream_json(
            &server,
            "write two files",
            &[
                "--mcp-config",
                &config,
                "--permission-prompt-tool",
                "mcp__gate__approve",
            ],
        )
        .await;
    assert!(project.repo.join("allowed.txt").exists(), "{lines:#?}");
    assert!(!project.repo.join("denied.txt").exists());
    let denials = result_of(&lines)["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert!(denials[0]["tool_input"]["command"]
        .as_str()
        .unwrap()
        .contains("DENY-ME"));

    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--mcp-config",
                &config,
                "--permission-prompt-tool",
                "mcp__gate__nope",
            ],
            "",
        )
        .await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("--permission-prompt-tool mcp__gate__nope")
            && err.contains("mcp__gate__approve"),
        "{err}"
    );
}

#[tokio::test]
async fn permission_prompt_tool_stdio_is_accepted() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    // The SDK host answers over the control protocol, so stdio needs stream-json both ways.
    let out = project
        .run(
            &server,
            &[
                "--permission-prompt-tool",
                "stdio",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )
        .await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(result_of(&common::json_lines(&out))["result"], "ok");
}
