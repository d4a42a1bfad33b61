//! `fleet mcp serve`, started as a real child process in a temporary repository and driven by
//! fleet's own MCP client (rmcp) over stdio: the tools and their schemas, calls, and the
//! permission rules (settings files and flags) with "ask" turned into a refusal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Project;
use fleet_runtime::mcp::{McpConnection, McpServerConfig, McpSource, McpTimeouts, McpTransport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Connects to `fleet mcp serve EXTRA…` started in the project's repository, with the
/// project's own HOME and fleet home (so no settings of the machine leak in).
async fn serve(project: &Project, extra: &[&str]) -> McpConnection {
    let mut args = vec!["mcp".to_string(), "serve".to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut env = BTreeMap::new();
    env.insert("HOME".to_string(), project.home.display().to_string());
    env.insert(
        "FLEET_HOME".to_string(),
        project.fleet_home.display().to_string(),
    );
    let config = McpServerConfig {
        name: "fleet".to_string(),
        transport: McpTransport::Stdio {
            command: env!("CARGO_BIN_EXE_fleet").to_string(),
            args,
            env,
            cwd: Some(project.repo.clone()),
        },
        source: McpSource::FlagInline(0),
    };
    let timeouts = McpTimeouts {
        connect: Duration::from_secs(60),
        call: Some(Duration::from_secs(60)),
    };
    McpConnection::connect(&config, timeouts)
        .await
        .expect("fleet mcp serve starts and answers initialize")
}

/// The text of a call's result and whether it is an error result.
async fn call(connection: &McpConnection, tool: &str, args: Value) -> (String, bool) {
    let output = connection
        .call(tool, args, &CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed at the protocol level: {e}"));
    (output.content, output.is_error)
}

#[tokio::test]
async fn lists_the_six_tools_with_their_schemas_and_read_only_hints() {
    let project = Project::new(&[("a.txt", "alpha\n")]);
    let connection = serve(&project, &[]).await;
    let tools = connection.tools().await;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]);
    let builtin = fleet_tools::ToolPool::builtin();
    for tool in tools.iter() {
        let own = builtin.get(&tool.name).unwrap();
        assert_eq!(tool.input_schema, own.input_schema(), "{}", tool.name);
        assert_eq!(tool.description, own.description(), "{}", tool.name);
        assert_eq!(tool.read_only_hint, own.is_read_only(), "{}", tool.name);
    }
    let read = tools.iter().find(|t| t.name == "Read").unwrap();
    assert!(read.input_schema["properties"]["file_path"].is_object());
    assert!(connection.instructions().await.unwrap().contains("fleet"));
    connection.shutdown().await;
}

#[tokio::test]
async fn a_bare_disallowed_tool_is_not_listed() {
    let project = Project::new(&[]);
    let connection = serve(&project, &["--disallowedTools", "Bash"]).await;
    let tools = connection.tools().await;
    assert!(tools.iter().all(|t| t.name != "Bash"));
    assert_eq!(tools.len(), 5);
    connection.shutdown().await;
}

#[tokio::test]
async fn read_and_grep_work_in_the_folder_it_started_in() {
    let project = Project::new(&[
        ("notes.txt", "first line\nthe needle is here\nlast line\n"),
        ("src/lib.rs", "fn main() {}\n"),
    ]);
    let connection = serve(&project, &[]).await;

    let (text, is_error) = call(
        &connection,
        "Read",
        json!({"file_path": project.path("notes.txt")}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(text.contains("the needle is here"), "{text}");

    let (text, is_error) = call(
        &connection,
        "Grep",
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(text.contains("the needle is here"), "{text}");
    assert!(text.contains("notes.txt"), "{text}");

    // A tool failure is an isError result, not a protocol error.
    let (text, is_error) = call(
        &connection,
        "Read",
        json!({"file_path": project.path("missing.txt")}),
    )
    .await;
    assert!(is_error, "{text}");
    // So is an input that does not fit the schema.
    let (text, is_error) = call(&connection, "Read", json!({"path": 3})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("file_path"), "{text}");
    connection.shutdown().await;
}

#[tokio::test]
async fn write_is_refused_without_a_rule_naming_the_rule_to_add() {
    let project = Project::new(&[]);
    let connection = serve(&project, &[]).await;
    let target = project.path("out.txt");
    let (text, is_error) = call(
        &connection,
        "Write",
        json!({"file_path": target, "content": "hello\n"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("nobody to ask"), "{text}");
    let rule = format!("Edit(/{target})");
    assert!(text.contains(&rule), "the rule {rule} is named: {text}");
    assert!(text.contains("--allowedTools"), "{text}");
    assert!(!project.repo.join("out.txt").exists());
    connection.shutdown().await;
}

#[tokio::test]
async fn write_and_edit_are_allowed_with_allowed_tools() {
    let project = Project::new(&[]);
    let connection = serve(&project, &["--allowedTools", "Write", "Edit"]).await;
    let target = project.path("out.txt");
    let (text, is_error) = call(
        &connection,
        "Write",
        json!({"file_path": target, "content": "hello\n"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(project.read("out.txt"), "hello\n");
    // The server keeps one file state across calls, as an agent does: the file it wrote may be
    // edited.
    let (text, is_error) = call(
        &connection,
        "Edit",
        json!({"file_path": target, "old_string": "hello", "new_string": "goodbye"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(project.read("out.txt"), "goodbye\n");
    connection.shutdown().await;
}

#[tokio::test]
async fn bash_runs_with_an_allow_rule_and_a_change_is_refused_without_one() {
    let project = Project::new(&[]);
    let refused = serve(&project, &[]).await;
    let (text, is_error) = call(&refused, "Bash", json!({"command": "mkdir made"})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("Bash(mkdir made)"), "{text}");
    assert!(!project.repo.join("made").exists());
    refused.shutdown().await;

    let allowed = serve(
        &project,
        &["--allowedTools", "Bash(echo *)", "Bash(mkdir *)"],
    )
    .await;
    let (text, is_error) = call(&allowed, "Bash", json!({"command": "echo hi"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(text.trim(), "hi");
    let (text, is_error) = call(&allowed, "Bash", json!({"command": "mkdir made"})).await;
    assert!(!is_error, "{text}");
    assert!(project.repo.join("made").is_dir());
    // A command that fails is an error result carrying its output.
    let (text, is_error) = call(&allowed, "Bash", json!({"command": "mkdir made"})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("exists"), "{text}");
    allowed.shutdown().await;
}

#[tokio::test]
async fn settings_rules_apply_and_deny_beats_the_mode() {
    let settings = json!({"permissions": {
        "allow": ["Bash(echo *)"],
        "deny": ["Read(secret.txt)"]
    }})
    .to_string();
    let project = Project::new(&[
        (".claude/settings.json", settings.as_str()),
        ("secret.txt", "top secret\n"),
    ]);
    let connection = serve(&project, &["--permission-mode", "bypassPermissions"]).await;
    let (text, is_error) = call(
        &connection,
        "Bash",
        json!({"command": "echo from settings"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(text.trim(), "from settings");
    let (text, is_error) = call(
        &connection,
        "Read",
        json!({"file_path": project.path("secret.txt")}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("Read(secret.txt)"), "{text}");
    assert!(!text.contains("top secret"), "{text}");
    connection.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_call_stops_its_command_and_the_server_goes_on() {
    let project = Project::new(&[]);
    let connection = serve(
        &project,
        &["--allowedTools", "Bash(sleep *)", "Bash(echo *)"],
    )
    .await;
    let server = connection
        .server_pid()
        .await
        .expect("a stdio server has a pid");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancels once the command is seen running under the server.
    let watcher = tokio::spawn(async move {
        for _ in 0..400 {
            if descendants(server)
                .iter()
                .any(|cmd| cmd.contains("sleep 30"))
            {
                trigger.cancel();
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        trigger.cancel();
        false
    });
    let outcome = connection
        .call("Bash", json!({"command": "sleep 30"}), &cancel)
        .await;
    assert!(outcome.is_err(), "cancelled: {outcome:?}");
    assert!(watcher.await.unwrap(), "the command was seen running");
    // The server got `notifications/cancelled` and answers the next call at once; the deadline
    // only keeps a broken build from hanging the suite.
    let (text, is_error) = tokio::time::timeout(
        Duration::from_secs(20),
        call(&connection, "Bash", json!({"command": "echo still here"})),
    )
    .await
    .expect("the server still answers");
    assert!(!is_error, "{text}");
    assert_eq!(text.trim(), "still here");
    // The command was stopped with the call: nothing under the server still sleeps.
    let server = connection
        .server_pid()
        .await
        .expect("a stdio server has a pid");
    let mut gone = false;
    for _ in 0..200 {
        if !descendants(server).iter().any(|cmd| cmd.contains("sleep")) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "still running: {:?}", descendants(server));
    connection.shutdown().await;
}

/// The command lines of every live process below `pid`.
fn descendants(pid: i32) -> Vec<String> {
    let mut parents = vec![pid];
    let mut found = Vec::new();
    let all: Vec<(i32, i32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let (_, rest) = stat.rsplit_once(") ")?;
            let mut fields = rest.split(' ');
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            if state == "Z" {
                return None;
            }
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            Some((p, ppid, cmd))
        })
        .collect();
    while let Some(parent) = parents.pop() {
        for (p, ppid, cmd) in &all {
            if *ppid == parent {
                parents.push(*p);
                found.push(cmd.clone());
            }
        }
    }
    found
}
