//! Containment through the real binary (issue 30): a sandboxed command cannot reach the
//! user's terminal, read-only commands have no network and none of the home folder's private
//! files, the Read tool asks before reading them, and a read-only agent without a sandbox
//! refuses Bash unless the user allows it.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::net::TcpListener;

const CHILD_TASK: &str = "containment-probe-task";

/// The main agent calls `tool` with each input in turn, then says DONE.
fn calls(tool: &str, inputs: &[Value]) -> Scenario {
    let mut rules: Vec<Rule> = inputs
        .iter()
        .map(|input| Rule::tool_use(tool, input.clone()))
        .collect();
    rules.push(Rule::text("DONE"));
    Scenario::queue(rules)
}

/// An Explore child runs `command` with Bash and reports.
fn explore_runs(command: &str) -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_marker(CHILD_TASK)
            .when_tool_result(true),
        Rule::tool_use("Bash", json!({ "command": command })).when_marker(CHILD_TASK),
        Rule::text("MAIN-DONE").when_tool_result_contains("CHILD-DONE"),
        Rule::tool_use(
            "Agent",
            json!({"description": "look around", "prompt": CHILD_TASK, "subagent_type": "Explore"}),
        ),
    ])
}

const STREAM: [&str; 5] = ["-p", "go", "--output-format", "stream-json", "--verbose"];

/// The user's own settings (in the project's HOME).
fn user_settings(project: &Project, settings: &Value) {
    let dir = project.home.join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

#[tokio::test]
async fn a_sandboxed_command_has_no_terminal_and_cannot_inject_keystrokes() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let sid = "python3 -c 'import os; print(\"SID=%d\" % os.getsid(0))'";
    // stdin is /dev/null: unfiltered, TIOCSTI fails with ENOTTY (25); the filter answers
    // EPERM (1) before the kernel looks.
    let inject = "python3 -c 'import fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b\"x\")\nexcept OSError as e:\n    print(\"TIOCSTI-ERRNO=%d\" % e.errno)'";
    let tty = "(exec 3<>/dev/tty) && echo TTY-OPENED || echo TTY-REFUSED";
    let inputs: Vec<Value> = [sid, inject, tty]
        .iter()
        .map(|c| json!({ "command": c }))
        .collect();
    let server = server(calls("Bash", &inputs)).await;
    let mut args = STREAM.to_vec();
    args.extend(["--sandbox", "--permission-mode", "bypassPermissions"]);
    let out = project.run(&server, &args, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), 3, "{results:?}");
    let ours = nix::unistd::getsid(None).unwrap().as_raw();
    let theirs: i32 = results[0]
        .1
        .lines()
        .find_map(|l| l.strip_prefix("SID="))
        .unwrap_or_else(|| panic!("{results:?}"))
        .trim()
        .parse()
        .unwrap();
    assert_ne!(theirs, ours, "the command shares fleet's terminal session");
    assert!(
        results[1]
            .1
            .contains(&format!("TIOCSTI-ERRNO={}", nix::libc::EPERM)),
        "{results:?}"
    );
    assert!(results[2].1.contains("TTY-REFUSED"), "{results:?}");
}

#[tokio::test]
async fn home_dot_files_are_asked_about_and_kept_from_read_only_commands() {
    let project = Project::new(&[("README.md", "# app\n")]);
    for (file, text) in [
        (".npmrc", "//registry/:_authToken=NPM-SECRET-1\n"),
        (".somedotfile", "DOT-SECRET-2\n"),
        (".config/gh/hosts.yml", "oauth_token: GH-SECRET-3\n"),
        ("visible.txt", "PUBLIC\n"),
    ] {
        let path = project.home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let home = project.home.display().to_string();
    let reads: Vec<Value> = [".npmrc", ".somedotfile"]
        .iter()
        .map(|f| json!({"file_path": format!("{home}/{f}")}))
        .collect();
    let mut rules: Vec<Rule> = reads
        .iter()
        .map(|input| Rule::tool_use("Read", input.clone()))
        .collect();
    rules.push(Rule::tool_use(
        "Grep",
        json!({"pattern": "SECRET|PUBLIC", "path": home, "output_mode": "content"}),
    ));
    rules.push(Rule::tool_use(
        "Glob",
        json!({"pattern": "**/*", "path": home}),
    ));
    for command in [
        "cat ~/.npmrc",
        "cat ~/.somedotfile",
        "git status --short && ls -a ~ && echo LISTED",
    ] {
        rules.push(Rule::tool_use("Bash", json!({ "command": command })));
    }
    rules.push(Rule::text("DONE"));
    let server1 = server(Scenario::queue(rules)).await;
    let out = project.run(&server1, &STREAM, "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), 7, "{results:?}");
    for (is_error, text) in &results[..2] {
        assert!(*is_error, "{text}");
        assert!(
            text.contains("needs approval") && text.contains("private files"),
            "{text}"
        );
    }
    assert!(results[2].1.contains("PUBLIC"), "{results:?}");
    assert!(!results[3].1.contains(".config/gh"), "{results:?}");
    assert!(results[4].0 && results[5].0, "{results:?}");
    assert!(!results[6].0, "{results:?}");
    assert!(results[6].1.contains("LISTED"), "{results:?}");
    for request in server1.requests() {
        let body = request.body.to_string();
        assert!(
            !body.contains("SECRET-"),
            "a secret reached the model: {body}"
        );
    }

    // The user's allowRead lifts both: the Read tool and read-only commands.
    user_settings(
        &project,
        &json!({"sandbox": {"filesystem": {"allowRead": ["~/.somedotfile"]}},
                "permissions": {"allow": ["Read(~/.somedotfile)"]}}),
    );
    let server2 = server(Scenario::queue([
        Rule::tool_use("Read", reads[1].clone()),
        Rule::tool_use("Bash", json!({"command": "cat ~/.somedotfile"})),
        Rule::text("DONE"),
    ]))
    .await;
    let out = project.run(&server2, &STREAM, "").await;
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), 2, "{results:?}");
    for (is_error, text) in &results {
        assert!(!is_error && text.contains("DOT-SECRET-2"), "{results:?}");
    }
}

#[tokio::test]
async fn read_only_commands_have_no_network_unless_the_user_allows_it() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo CONNECTED || echo NO-NET");
    let only = [("FLEET_TEST_SANDBOX_ONLY", "1")];
    let server1 = server(explore_runs(&probe)).await;
    let results = tool_outcomes(&project.run_with_env(&server1, &STREAM, &only).await);
    let probed: Vec<_> = results
        .iter()
        .filter(|r| r.1.contains("NET") || r.1.contains("CONNECTED"))
        .collect();
    assert!(!probed.is_empty(), "{results:?}");
    assert!(
        probed.iter().all(|r| !r.1.contains("CONNECTED")),
        "{results:?}"
    );

    user_settings(&project, &json!({"sandbox": {"readOnlyNetwork": true}}));
    let server2 = server(explore_runs(&probe)).await;
    let results = tool_outcomes(&project.run_with_env(&server2, &STREAM, &only).await);
    assert!(
        results.iter().any(|r| r.1.contains("CONNECTED")),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_read_only_agent_without_a_sandbox_refuses_bash_unless_the_user_allows_it() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let unavailable = [("FLEET_SANDBOX_UNAVAILABLE", "1")];
    let server1 = server(explore_runs("ls && echo LISTED")).await;
    let out = project.run_with_env(&server1, &STREAM, &unavailable).await;
    let results = tool_outcomes(&out);
    let refusal = results
        .iter()
        .find(|r| r.1.contains("allowUnsandboxedReadOnly"))
        .unwrap_or_else(|| panic!("{results:?}"));
    assert!(refusal.0, "{refusal:?}");
    assert!(
        !results.iter().any(|r| r.1.contains("LISTED")),
        "{results:?}"
    );

    user_settings(
        &project,
        &json!({"sandbox": {"allowUnsandboxedReadOnly": true}}),
    );
    let server2 = server(explore_runs("ls && echo LISTED")).await;
    let out = project.run_with_env(&server2, &STREAM, &unavailable).await;
    let results = tool_outcomes(&out);
    assert!(
        results.iter().any(|r| r.1.contains("LISTED")),
        "{results:?}"
    );
}
