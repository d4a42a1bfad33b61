//! A `-p` run that cannot start, as a script and a person meet it: with `--output-format
//! json|stream-json`, exactly one `result` object on stdout with `is_error: true`, the
//! message once on stderr (never `fleet: fleet …`), and a non-zero exit — whether clap refused
//! the command line, no API key is set, or the `--resume` id is unknown. And an interrupted
//! run says so in words, not in a subtype's name.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, stdout, Project};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::process::{Output, Stdio};

/// The single line a failed start prints on stdout, parsed; fails unless it is exactly one.
fn the_one_result(out: &Output) -> Value {
    let lines = json_lines(out);
    assert_eq!(
        lines.len(),
        1,
        "exactly one line on stdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    let line = lines.into_iter().next().unwrap();
    assert_eq!(line["type"], "result", "{line}");
    assert_eq!(line["is_error"], true, "{line}");
    assert_eq!(line["num_turns"], 0, "{line}");
    line
}

/// The message is on stderr once, with fleet's prefix once.
fn said_once(out: &Output, words: &str) -> String {
    let err = stderr(out);
    assert_eq!(err.matches(words).count(), 1, "{words:?} once in: {err}");
    assert!(!err.contains("fleet: fleet"), "a doubled prefix: {err}");
    err
}

#[tokio::test]
async fn a_missing_api_key_prints_claude_codes_auth_result_shape() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER")])).await;
    for (format, verbose) in [("json", false), ("stream-json", true), ("json", true)] {
        let mut args = vec!["-p", "hi", "--output-format", format];
        if verbose {
            args.push("--verbose");
        }
        let mut cmd = project.command(&server, &args);
        cmd.env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL");
        let out = common::run_with_stdin(cmd, "").await;
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr(&out));
        said_once(&out, "no model provider is configured");
        let result = if format == "json" && verbose {
            // `json --verbose` is one array of every line: here, the result alone.
            let all: Vec<Value> = serde_json::from_str(stdout(&out).trim()).unwrap();
            assert_eq!(all.len(), 1, "{all:?}");
            assert_eq!(all[0]["is_error"], true);
            all[0].clone()
        } else {
            the_one_result(&out)
        };
        // As Claude Code reports a refused key: a `success` that is an error.
        assert_eq!(result["subtype"], "success", "{result}");
        assert_eq!(result["terminal_reason"], "api_error", "{result}");
        assert!(
            result["result"]
                .as_str()
                .unwrap()
                .contains("set ANTHROPIC_API_KEY"),
            "{result}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn an_unknown_resume_id_names_fleet_sessions_on_stderr_and_in_the_result() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER")])).await;
    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--resume",
                "0badc0de",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            "",
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = said_once(&out, "no session \"0badc0de\"");
    assert!(err.contains("`fleet sessions` lists"), "{err}");
    let result = the_one_result(&out);
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal_reason"], "error");
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("`fleet sessions`"),
        "{result}"
    );
    assert_eq!(result["errors"], json!([result["result"]]));
    // Text output keeps stdout for answers: the error is on stderr alone.
    let out = project
        .run(&server, &["-p", "hi", "--resume", "0badc0de"], "")
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    said_once(&out, "`fleet sessions`");
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_flag_clap_refuses_still_gives_json_output_its_result() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER")])).await;
    for (args, words) in [
        (
            &[
                "--permission-mode",
                "bogus",
                "--output-format",
                "stream-json",
            ][..],
            "unknown permission mode `bogus`",
        ),
        (
            &["--output-format=json", "--max-turns", "x"][..],
            "invalid value 'x' for '--max-turns <N>'",
        ),
    ] {
        let mut argv = vec!["-p", "hi"];
        argv.extend_from_slice(args);
        let out = project.run(&server, &argv, "").await;
        // clap's own exit code for a usage error.
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = said_once(&out, words);
        assert!(
            err.starts_with("error: "),
            "clap's message as clap writes it: {err}"
        );
        let result = the_one_result(&out);
        assert_eq!(result["subtype"], "error_during_execution");
        let text = result["result"].as_str().unwrap();
        assert!(text.contains(words), "{text}");
        assert!(!text.contains("--help"), "the hint stays on stderr: {text}");
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn an_unsupported_flag_is_named_once_with_one_prefix() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER")])).await;
    let out = project
        .run(
            &server,
            &["-p", "hi", "--task-budget", "9", "--output-format", "json"],
            "",
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = said_once(&out, "--task-budget is not supported yet");
    assert!(err.starts_with("fleet: --task-budget"), "{err}");
    let result = the_one_result(&out);
    assert!(result["result"]
        .as_str()
        .unwrap()
        .starts_with("--task-budget is not supported yet"));
}

#[tokio::test]
async fn a_run_that_starts_prints_its_own_results_and_no_extra_one() {
    // A run whose model call fails is no setup failure: its printer ends it, once.
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER").fault_status(400)])).await;
    let out = project
        .run(
            &server,
            &["-p", "hi", "--output-format", "stream-json", "--verbose"],
            "",
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["subtype"], "init", "the session started");
    assert_eq!(
        results[0]["session_id"], lines[0]["session_id"],
        "the session's own"
    );
}

#[tokio::test]
async fn an_interrupted_text_run_says_so_in_words() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::tool_use(
        "Bash",
        json!({"command": "echo $$ > sh.pid; sleep 300", "timeout": 600000}),
    )]))
    .await;
    let mut cmd = project.command(
        &server,
        &["-p", "run it", "--permission-mode", "bypassPermissions"],
    );
    let pid_file = project.repo.join("sh.pid");
    let out = tokio::task::spawn_blocking(move || {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + fleet_testkit::WAIT;
        while !std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')) {
            assert!(
                std::time::Instant::now() < deadline,
                "the command never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        fleet_testkit::wait_output(child, fleet_testkit::WAIT, "fleet after SIGINT")
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "", "no answer");
    let err = said_once(&out, "Interrupted before the run finished.");
    assert!(
        !err.contains("error_during_execution") && !err.contains("cancelled"),
        "{err}"
    );
}

#[tokio::test]
async fn a_bad_flag_value_is_named_once() {
    let project = Project::new(&[("README.md", "x\n")]);
    let server = server(Scenario::queue([Rule::text("NEVER")])).await;
    for (args, words) in [
        (
            &["--agents", "{bad"][..],
            "fleet: --agents is not valid JSON",
        ),
        (
            &["--cwd", "/no/such/dir"][..],
            "fleet: --cwd /no/such/dir: No such file",
        ),
    ] {
        let mut argv = vec!["-p", "hi"];
        argv.extend_from_slice(args);
        let out = project.run(&server, &argv, "").await;
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = said_once(&out, words);
        assert_eq!(
            err.matches(args[0]).count(),
            1,
            "{args:?} named once: {err}"
        );
    }
}
