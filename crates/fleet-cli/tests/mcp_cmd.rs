//! `fleet mcp add | remove`, run as the real binary in a temporary repository with its own
//! HOME and fleet home.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{stderr, stdout, Project, SCRUBBED};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

fn fleet_in(project: &Project, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", &project.home)
        .env("FLEET_HOME", &project.fleet_home)
        .env_remove("CLAUDE_CONFIG_DIR");
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    fleet_testkit::output_within(&mut cmd, fleet_testkit::WAIT, "fleet")
}

fn fleet(project: &Project, args: &[&str]) -> Output {
    fleet_in(project, &project.repo, args)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", stderr(out));
    stdout(out)
}

fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure, stdout: {}",
        stdout(out)
    );
    stderr(out)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn add_stdio_writes_the_repository_s_mcp_json_from_any_folder() {
    let project = Project::new(&[("src/lib.rs", "")]);
    let out = fleet_in(
        &project,
        &project.repo.join("src"),
        &[
            "mcp",
            "add",
            "-e",
            "TOKEN=${TOKEN}",
            "mem",
            "--",
            "npx",
            "-y",
            "@scope/server",
            "--flag",
        ],
    );
    let said = ok(&out);
    let file = project.repo.join(".mcp.json");
    assert!(said.contains(&file.display().to_string()), "{said}");
    assert_eq!(
        read_json(&file),
        json!({"mcpServers": {"mem": {
            "type": "stdio", "command": "npx", "args": ["-y", "@scope/server", "--flag"],
            "env": {"TOKEN": "${TOKEN}"}
        }}})
    );
    assert!(!project.repo.join("src/.mcp.json").exists());
    // The user added it, so it is approved for this repository, in the user's own store
    // (never in a file of the repository, which could have been committed).
    assert!(!project.repo.join(".claude/settings.local.json").exists());
    let store = read_json(&project.fleet_home.join("trust.json"));
    let entry = &store["projects"][project.repo.display().to_string()];
    assert!(
        entry["mcpServers"]["mem"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")),
        "{store}"
    );
}

#[test]
fn add_http_to_the_user_settings_keeps_their_other_keys() {
    let project = Project::new(&[]);
    let settings = project.fleet_home.join("settings.json");
    std::fs::create_dir_all(&project.fleet_home).unwrap();
    std::fs::write(
        &settings,
        r#"{"model": "opus", "permissions": {"deny": ["Bash"]}}"#,
    )
    .unwrap();
    ok(&fleet(
        &project,
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "--scope",
            "user",
            "--header",
            "Authorization: Bearer ${API_TOKEN}",
            "tracker",
            "https://mcp.example.test/mcp",
        ],
    ));
    let written = read_json(&settings);
    assert_eq!(written["model"], "opus");
    assert_eq!(written["permissions"], json!({"deny": ["Bash"]}));
    assert_eq!(
        written["mcpServers"]["tracker"],
        json!({"type": "http", "url": "https://mcp.example.test/mcp",
               "headers": {"Authorization": "Bearer ${API_TOKEN}"}})
    );
    assert!(!project.repo.join(".mcp.json").exists());
    ok(&fleet(
        &project,
        &[
            "mcp",
            "add",
            "-t",
            "sse",
            "-s",
            "user",
            "events",
            "http://127.0.0.1:9/sse",
        ],
    ));
    assert_eq!(read_json(&settings)["mcpServers"]["events"]["type"], "sse");
}

#[test]
fn add_refuses_a_taken_name_and_leaves_the_file_as_it_was() {
    let project = Project::new(&[(
        ".mcp.json",
        r#"{"mcpServers": {"mem": {"command": "old"}}}"#,
    )]);
    let before = project.read(".mcp.json");
    let err = failed(&fleet(&project, &["mcp", "add", "mem", "--", "new"]));
    assert!(
        err.contains("already exists") && err.contains("fleet mcp remove mem"),
        "{err}"
    );
    assert_eq!(project.read(".mcp.json"), before);
}

#[test]
fn add_refuses_a_file_it_cannot_parse_and_names_it() {
    let project = Project::new(&[(".mcp.json", "{\"mcpServers\": ")]);
    let err = failed(&fleet(&project, &["mcp", "add", "mem", "--", "x"]));
    assert!(
        err.contains(".mcp.json") && err.contains("not valid JSON"),
        "{err}"
    );
    assert_eq!(project.read(".mcp.json"), "{\"mcpServers\": ");
}

#[test]
fn add_rejects_arguments_that_do_not_fit_the_transport() {
    let project = Project::new(&[]);
    let cases: [(&[&str], &str); 6] = [
        (
            &["mcp", "add", "-H", "A: b", "s", "--", "cmd"],
            "--header is for http",
        ),
        (
            &["mcp", "add", "-t", "http", "-e", "A=1", "s", "http://h/"],
            "-e is for stdio",
        ),
        (
            &["mcp", "add", "-t", "http", "s", "http://h/", "extra"],
            "one URL",
        ),
        (
            &["mcp", "add", "-t", "http", "s", "h.test/mcp"],
            "not an http",
        ),
        (
            &["mcp", "add", "-e", "NOEQUALS", "s", "--", "cmd"],
            "KEY=VALUE",
        ),
        (&["mcp", "add", "bad.name", "--", "cmd"], "bad.name"),
    ];
    for (args, expected) in cases {
        let err = failed(&fleet(&project, args));
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(!project.repo.join(".mcp.json").exists());
}

#[test]
fn remove_finds_the_server_and_asks_when_it_is_in_both_scopes() {
    let project = Project::new(&[(
        ".mcp.json",
        r#"{"mcpServers": {"both": {"command": "p"}, "proj": {"command": "p"}}, "x": 1}"#,
    )]);
    let settings = project.fleet_home.join("settings.json");
    std::fs::create_dir_all(&project.fleet_home).unwrap();
    std::fs::write(&settings, r#"{"mcpServers": {"both": {"command": "u"}}}"#).unwrap();

    ok(&fleet(&project, &["mcp", "remove", "proj"]));
    assert_eq!(
        read_json(&project.repo.join(".mcp.json")),
        json!({"mcpServers": {"both": {"command": "p"}}, "x": 1})
    );
    let err = failed(&fleet(&project, &["mcp", "remove", "both"]));
    assert!(err.contains("--scope"), "{err}");
    ok(&fleet(
        &project,
        &["mcp", "remove", "both", "--scope", "user"],
    ));
    assert_eq!(read_json(&settings), json!({"mcpServers": {}}));
    assert!(read_json(&project.repo.join(".mcp.json"))["mcpServers"]["both"].is_object());
    ok(&fleet(&project, &["mcp", "remove", "both"]));
    assert_eq!(
        read_json(&project.repo.join(".mcp.json"))["mcpServers"],
        json!({})
    );
}

#[test]
fn remove_of_an_unknown_server_fails_and_points_at_claude_code_s_file() {
    let project = Project::new(&[]);
    std::fs::write(
        project.home.join(".claude.json"),
        r#"{"mcpServers": {"cc": {"command": "x"}}}"#,
    )
    .unwrap();
    let err = failed(&fleet(&project, &["mcp", "remove", "nothing"]));
    assert!(err.contains("no MCP server named \"nothing\""), "{err}");
    let err = failed(&fleet(&project, &["mcp", "remove", "cc"]));
    assert!(
        err.contains(".claude.json") && err.contains("claude mcp remove cc"),
        "{err}"
    );
}
