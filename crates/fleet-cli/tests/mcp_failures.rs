//! MCP servers that fail to start, as the person meets them, with the real binary: `fleet mcp
//! list` is a health check (status 1, every row still shown), and in `-p` each failed server is
//! exactly one stderr line naming the owner-only log that holds what the server wrote to its
//! stderr — which never reaches fleet's own stderr.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// A stdio "server" that writes its complaint to stderr and exits 1 before `initialize`.
fn failing_server(project: &Project, name: &str) -> String {
    let path = project.repo.join(format!("{name}-server.sh"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             echo \"{name}: connecting to the database\" >&2\n\
             echo \"Error: {name} needs DB_URL\" >&2\n\
             echo \"    at main ({name}.js:3)\" >&2\n\
             exit 1\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// Servers in the user's own settings (`$FLEET_HOME/settings.json`): they need no approval.
fn user_servers(project: &Project, servers: Value) {
    std::fs::create_dir_all(&project.fleet_home).unwrap();
    std::fs::write(
        project.fleet_home.join("settings.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
}

/// The log a line names: `… (its output: PATH)` at its end.
fn named_log(line: &str) -> PathBuf {
    let (_, rest) = line
        .rsplit_once("(its output: ")
        .unwrap_or_else(|| panic!("no log named in {line:?}"));
    PathBuf::from(rest.strip_suffix(')').unwrap())
}

fn assert_private_log(log: &Path, fleet_home: &Path, says: &str) {
    assert!(
        log.starts_with(fleet_home.join("logs/mcp")),
        "{log:?} is under $FLEET_HOME/logs/mcp"
    );
    let mode = std::fs::metadata(log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{log:?} is owner-only");
    let text = std::fs::read_to_string(log).unwrap();
    for line in [
        format!("{says}: connecting to the database"),
        format!("Error: {says} needs DB_URL"),
        format!("at main ({says}.js:3)"),
    ] {
        assert!(text.contains(&line), "{log:?} holds {line:?}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_list_exits_1_when_a_server_failed_and_still_lists_every_server() {
    let project = Project::new(&[("README.md", "mcp\n")]);
    let fault = fleet_testkit::mcp_fault_server().unwrap();
    let db = failing_server(&project, "db");
    user_servers(
        &project,
        json!({"db": {"command": db}, "good": {"command": fault}}),
    );
    let model = server(Scenario::with_rules([])).await;
    let env = [("MCP_TIMEOUT", "20000")];

    let out = project.run_with_env(&model, &["mcp", "list"], &env).await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", stderr(&out));
    assert!(text.contains("good  stdio  connected"), "{text}");
    assert!(text.contains("db  stdio  failed"), "{text}");
    let reason = text
        .lines()
        .find(|l| l.contains("exited with status 1"))
        .unwrap_or_else(|| panic!("the reason is shown: {text}"));
    assert!(reason.contains("Error: db needs DB_URL"), "{reason}");
    assert_private_log(&named_log(reason.trim()), &project.fleet_home, "db");
    assert!(
        !stderr(&out).contains("connecting to the database"),
        "the server's stderr stays in its log: {}",
        stderr(&out)
    );

    let out = project
        .run_with_env(&model, &["mcp", "list", "--json"], &env)
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2, "{listed:#}");
    let db_row = servers.iter().find(|s| s["name"] == "db").unwrap();
    assert_eq!(db_row["status"], "failed");
    assert!(
        !db_row["error"].as_str().unwrap().contains("MCP server"),
        "the name is not repeated inside the reason: {db_row:#}"
    );
    assert_private_log(
        Path::new(db_row["log"].as_str().unwrap()),
        &project.fleet_home,
        "db",
    );

    // Only the healthy server: status 0.
    user_servers(&project, json!({"good": {"command": fault}}));
    let out = project.run_with_env(&model, &["mcp", "list"], &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failed_server_is_one_stderr_line_naming_its_private_log() {
    let project = Project::new(&[("README.md", "mcp\n")]);
    let config = json!({"mcpServers": {
        "db": {"command": failing_server(&project, "db")},
        "cache": {"command": failing_server(&project, "cache")},
    }})
    .to_string();
    let model = server(Scenario::with_rules([Rule::text("DONE")])).await;
    for format in ["text", "stream-json"] {
        let mut args = vec![
            "-p",
            "hello",
            "--mcp-config",
            &config,
            "--output-format",
            format,
        ];
        if format == "stream-json" {
            args.push("--verbose");
        }
        let out = project
            .run_with_env(&model, &args, &[("MCP_TIMEOUT", "20000")])
            .await;
        let said = stderr(&out);
        assert!(out.status.success(), "{format}: {said}");
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "{format}: exactly one line per server: {said}"
        );
        for (line, name) in lines.iter().zip(["cache", "db"]) {
            let lead = format!("fleet: MCP server \"{name}\" failed to start: ");
            assert!(line.starts_with(&lead), "{format}: {line}");
            assert_eq!(line.matches("MCP server").count(), 1, "said once: {line}");
            assert!(
                line.contains(&format!(
                    "it exited with status 1 before answering initialize; it said: \
                     Error: {name} needs DB_URL (its output: "
                )),
                "{format}: {line}"
            );
            assert_private_log(&named_log(line), &project.fleet_home, name);
        }
        if format == "text" {
            assert!(stdout(&out).contains("DONE"), "{}", stdout(&out));
        }
    }
}
