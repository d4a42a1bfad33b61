//! A `.mcp.json` fleet cannot read is one warning line on stderr, naming the file and the
//! parse error, in every output format of `-p`; the run goes on without its servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{json_lines, stderr, stdout, Project};
use fleet_testkit::Scenario;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_mcp_json_is_one_warning_line_in_every_output_format() {
    let project = Project::new(&[
        ("README.md", "# app\n"),
        (
            ".mcp.json",
            "{\"mcpServers\": {\n  \"docs\": {\"command\": \"x\"\n",
        ),
    ])
    .trusting();
    let server = common::server(Scenario::demo()).await;
    let file = project.path(".mcp.json");
    for format in ["text", "json", "stream-json"] {
        let mut args = vec!["-p", "hello", "--output-format", format];
        if format == "stream-json" {
            args.push("--verbose");
        }
        let out = project.run(&server, &args, "").await;
        assert!(
            out.status.success(),
            "{format}: the run goes on\n{}\n{}",
            stdout(&out),
            stderr(&out)
        );
        let err = stderr(&out);
        let said: Vec<&str> = err.lines().filter(|l| l.contains(".mcp.json")).collect();
        assert_eq!(said.len(), 1, "{format}: said once: {err}");
        let line = said[0];
        assert!(line.starts_with("fleet: warning: "), "{format}: {line}");
        assert!(line.contains(&file), "{format}: names the file: {line}");
        assert!(
            line.contains("not valid JSON") && line.contains("line 3"),
            "{format}: the parse error and where: {line}"
        );
        if format == "stream-json" {
            let init = &json_lines(&out)[0];
            assert_eq!(init["subtype"], "init");
            let connected = init["mcp_servers"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["status"] == "connected")
                .count();
            assert_eq!(connected, 0, "no server from the broken file: {init}");
        }
    }
}
