//! Servers beyond the fault server's stdio, through the real binary: the fault server listening
//! on loopback over streamable HTTP (`"type": "http"`) and the legacy SSE transport (`"type":
//! "sse"`), each configured with a `${VAR}` header, its tool offered and called in a `-p`
//! session; and the reference server's resources read through the resource tools.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{json_lines, server, stderr, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::json;

/// The fault server listening on a free loopback port; killed when dropped.
struct Listening {
    child: Child,
    url: String,
}

impl Listening {
    fn start(mode: &str) -> Self {
        let fault = fleet_testkit::mcp_fault_server().unwrap();
        let mut child = Command::new(fault)
            .args([mode, "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().strip_prefix("listening ").unwrap().to_string();
        Self { child, url }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn run_against(kind: &str, mode: &str) {
    let listening = Listening::start(mode);
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {"remote": {
        "type": kind, "url": listening.url, "headers": {"X-Token": "${REMOTE_TOKEN}"}
    }}})
    .to_string();
    let server = server(Scenario::with_rules([
        Rule::text("REMOTE-DONE").when_tool_result_contains("5"),
        Rule::tool_use("mcp__remote__add", json!({"a": 2, "b": 3})).when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "add",
                "--mcp-config",
                &config,
                "--allowedTools",
                "mcp__remote__add",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("MCP_TIMEOUT", "10000"), ("REMOTE_TOKEN", "t0k")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{kind}: {}\n{lines:#?}", stderr(&out));
    assert_eq!(
        lines[0]["mcp_servers"],
        json!([{"name": "remote", "status": "connected"}]),
        "{kind}"
    );
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "REMOTE-DONE", "{kind}: {lines:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_used_like_a_local_one() {
    run_against("http", "--http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_sse_server_is_used_like_a_local_one() {
    run_against("sse", "--sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_lists_and_reads_a_servers_resources() {
    let Some(entry) = fleet_testkit::mcp_everything_entry() else {
        return;
    };
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config =
        json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"]}}})
            .to_string();
    let uri = "demo://resource/static/document/architecture.md";
    let server = server(Scenario::with_rules([
        Rule::text("READ-IT").when_tool_result_contains("[resource demo://"),
        Rule::tool_use(
            "ReadMcpResourceTool",
            json!({"server": "everything", "uri": uri}),
        )
        .when_tool_result_contains("architecture.md"),
        Rule::tool_use("ListMcpResourcesTool", json!({})).when_tool_result(false),
    ]))
    .await;
    let out = project
        .run_with_env(
            &server,
            &[
                "-p",
                "read the docs",
                "--mcp-config",
                &config,
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[("MCP_TIMEOUT", "20000")],
        )
        .await;
    let lines = json_lines(&out);
    assert!(out.status.success(), "{}\n{lines:#?}", stderr(&out));
    let tools = lines[0]["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|t| t == "ListMcpResourcesTool"),
        "{tools:?}"
    );
    let result = lines.iter().rfind(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "READ-IT", "{lines:#?}");
}
