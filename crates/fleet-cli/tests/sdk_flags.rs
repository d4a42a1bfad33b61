//! The command-line flags the Agent SDKs pass, on the real binary against the fake model
//! server: what each one changes in the requests, the output and the session files, and the
//! clear errors for the ones fleet refuses.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};

fn models_sent(server: &fleet_testkit::FakeModelServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn flags_fleet_cannot_honour_are_refused_by_name_before_any_request() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("never")])).await;
    for (args, flag) in [
        (&["--plugin-dir", "plugins"][..], "--plugin-dir"),
        (&["--resume-session-at=0b1c"], "--resume-session-at"),
        (&["--resume-drops-turn=3"], "--resume-drops-turn"),
        (&["--session-mirror"], "--session-mirror"),
        (&["--task-budget", "20000"], "--task-budget"),
    ] {
        let mut argv = vec!["-p", "hi"];
        argv.extend_from_slice(args);
        let out = project.run(&server, &argv, "").await;
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("fleet: {flag} is not supported yet")),
            "{args:?}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{err}");
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn settings_layer_and_sources_pick_what_loads() {
    let project = Project::new(&[
        ("README.md", "# app\n"),
        (".claude/settings.json", r#"{"model": "claude-opus-4-1"}"#),
        (
            ".claude/settings.local.json",
            r#"{"model": "claude-haiku-4-5"}"#,
        ),
        ("flag-settings.json", r#"{"model": "claude-3-7-sonnet"}"#),
    ]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    for (extra, model) in [
        (&[][..], "claude-haiku-4-5"),
        (&["--setting-sources=project"], "claude-opus-4-1"),
        (&["--setting-sources", "user,project"], "claude-opus-4-1"),
        (
            &[
                "--setting-sources=project",
                "--settings",
                "flag-settings.json",
            ],
            "claude-3-7-sonnet",
        ),
        (
            &["--settings", r#"{"model": "claude-sonnet-4"}"#],
            "claude-sonnet-4",
        ),
    ] {
        project.stream_json(&server, "which model?", extra).await;
        let sent = server.last_request().unwrap().body["model"].clone();
        assert_eq!(sent, model, "{extra:?}");
    }
    // No source at all: the built-in default, not any file's model.
    project
        .stream_json(&server, "which model?", &["--setting-sources="])
        .await;
    let sent = server.last_request().unwrap().body["model"].clone();
    assert!(
        sent.as_str().unwrap().starts_with("claude-sonnet"),
        "{sent}"
    );
    assert_ne!(sent, "claude-sonnet-4");

    for (value, needle) in [
        ("{nope", "--settings:1:2"),
        ("missing.json", "--settings missing.json"),
    ] {
        let out = project
            .run(&server, &["-p", "hi", "--settings", value], "")
            .await;
        assert!(!out.status.success());
        assert!(stderr(&out).contains(needle), "{}", stderr(&out));
    }
    let out = project
        .run(&server, &["-p", "hi", "--setting-sources", "user,team"], "")
        .await;
    assert!(
        stderr(&out).contains("unknown source \"team\""),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn leaving_out_the_project_source_leaves_out_its_instructions() {
    let project = Project::new(&[("README.md", "# app\n"), ("CLAUDE.md", "PROJECT-RULES")]);
    std::fs::create_dir_all(project.home.join(".claude")).unwrap();
    std::fs::write(project.home.join(".claude/CLAUDE.md"), "USER-RULES").unwrap();
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    for (extra, project_rules, user_rules) in [
        (&[][..], true, true),
        (&["--setting-sources=user"], false, true),
        (&["--setting-sources=project,local"], true, false),
    ] {
        project.stream_json(&server, "hi", extra).await;
        let system = server.last_request().unwrap().body["system"].to_string();
        assert_eq!(system.contains("PROJECT-RULES"), project_rules, "{extra:?}");
        assert_eq!(system.contains("USER-RULES"), user_rules, "{extra:?}");
    }
}

#[tokio::test]
async fn permission_rules_from_the_settings_layer_bind_the_run() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::queue([
        Rule::tool_use("Read", json!({"file_path": project.path("README.md")})),
        Rule::text("done"),
    ]))
    .await;
    let settings = json!({"permissions": {"deny": ["Read"]}}).to_string();
    let (_, lines) = project
        .stream_json(&server, "read it", &["--settings", &settings])
        .await;
    let denials = &result_of(&lines)["permission_denials"];
    assert_eq!(denials[0]["tool_name"], "Read", "{denials}");
}

#[tokio::test]
async fn the_system_prompt_comes_from_a_file() {
    let project = Project::new(&[
        ("README.md", "# app\n"),
        ("prompt.md", "You are PROMPT-FROM-FILE."),
        ("extra.md", "APPENDED-FROM-FILE"),
    ]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    project
        .stream_json(
            &server,
            "hi",
            &[
                "--system-prompt-file",
                "prompt.md",
                "--append-system-prompt-file",
                "extra.md",
            ],
        )
        .await;
    let system = server.last_request().unwrap().body["system"].to_string();
    assert!(system.contains("You are PROMPT-FROM-FILE."), "{system}");
    assert!(system.contains("APPENDED-FROM-FILE"), "{system}");
    assert!(
        system.find("PROMPT-FROM-FILE") < system.find("APPENDED-FROM-FILE"),
        "{system}"
    );

    let out = project
        .run(
            &server,
            &["-p", "hi", "--system-prompt-file", "nope.md"],
            "",
        )
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--system-prompt-file nope.md"),
        "{}",
        stderr(&out)
    );
    let out = project
        .run(
            &server,
            &[
                "-p",
                "hi",
                "--system-prompt-file",
                "prompt.md",
                "--system-prompt",
                "x",
            ],
            "",
        )
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// Three overloaded answers use up the first attempt and its two retries (the test
/// environment allows two); the fallback answers from then on.
fn overloaded_then_fine() -> Scenario {
    Scenario::queue([
        Rule::text("never seen").fault_status(529).times(3),
        Rule::tool_use("Glob", json!({"pattern": "*.md"})),
        Rule::text("FROM-FALLBACK"),
    ])
}

#[tokio::test]
async fn an_overloaded_model_hands_the_rest_of_the_run_to_the_fallback() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(overloaded_then_fine()).await;
    let (_, lines) = project
        .stream_json(
            &server,
            "list the docs",
            &[
                "--model",
                "claude-sonnet-4-5",
                "--fallback-model",
                "claude-haiku-4-5",
            ],
        )
        .await;
    assert_eq!(
        models_sent(&server),
        [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-haiku-4-5"
        ]
    );
    let switches: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "model_fallback")
        .collect();
    assert_eq!(switches.len(), 1, "{lines:#?}");
    assert_eq!(switches[0]["original_model"], "claude-sonnet-4-5");
    assert_eq!(switches[0]["fallback_model"], "claude-haiku-4-5");
    assert_eq!(result_of(&lines)["result"], "FROM-FALLBACK");

    // Text output says so on stderr.
    let server = server_again().await;
    let out = project
        .run(
            &server,
            &["-p", "list the docs", "--fallback-model", "haiku"],
            "",
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("switched to the fallback model claude-haiku-4-5"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out).trim(), "FROM-FALLBACK");

    let out = project
        .run(
            &server,
            &["-p", "hi", "--model", "haiku", "--fallback-model", "haiku"],
            "",
        )
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--fallback-model"),
        "{}",
        stderr(&out)
    );
}

async fn server_again() -> fleet_testkit::FakeModelServer {
    server(overloaded_then_fine()).await
}

#[tokio::test]
async fn without_a_fallback_an_overload_is_the_runs_error() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(overloaded_then_fine()).await;
    let out = project.run(&server, &["-p", "hi"], "").await;
    assert!(!out.status.success());
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn betas_travel_as_one_anthropic_beta_header() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    project
        .stream_json(&server, "hi", &["--betas", "alpha-1,beta-2"])
        .await;
    let request = server.last_request().unwrap();
    assert_eq!(request.header("anthropic-beta"), Some("alpha-1,beta-2"));
    let beta_headers = request
        .headers
        .iter()
        .filter(|(name, _)| name == "anthropic-beta")
        .count();
    assert_eq!(beta_headers, 1);

    let out = project
        .run_with_env(
            &server,
            &["-p", "hi", "--betas", "alpha-1"],
            &[("ANTHROPIC_BETAS", "from-env")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.last_request().unwrap().header("anthropic-beta"),
        Some("from-env,alpha-1")
    );

    let out = project
        .run_with_env(
            &server,
            &["-p", "hi", "--betas", "alpha-1", "--model", "qwen2.5-coder"],
            &[
                ("FLEET_PROVIDER", "openai"),
                ("OPENAI_API_KEY", "sk-local"),
                ("OPENAI_BASE_URL", &format!("{}/v1", server.base_url())),
            ],
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("--betas alpha-1 ignored"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.last_request().unwrap().header("anthropic-beta"),
        None
    );
}

#[tokio::test]
async fn a_forked_session_carries_the_history_under_a_new_id() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let first = "00000000-0000-4000-8000-000000000016";
    let (_, lines) = project
        .stream_json(
            &server,
            "remember FORK-ONE",
            &[&format!("--session-id={first}")],
        )
        .await;
    assert_eq!(lines[0]["session_id"], first);
    let original = project.transcripts();
    assert_eq!(original.len(), 1);
    let before = std::fs::read_to_string(&original[0]).unwrap();

    let (_, lines) = project
        .stream_json(
            &server,
            "and FORK-TWO",
            &[&format!("--resume={first}"), "--fork-session"],
        )
        .await;
    let fork = lines[0]["session_id"].as_str().unwrap().to_string();
    assert_ne!(fork, first);
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(
        sent.contains("FORK-ONE") && sent.contains("FORK-TWO"),
        "{sent}"
    );
    assert_eq!(
        std::fs::read_to_string(&original[0]).unwrap(),
        before,
        "the old session is unchanged"
    );
    let forked = project
        .transcripts()
        .into_iter()
        .find(|p| p.to_string_lossy().contains(&fork))
        .unwrap();
    let text = std::fs::read_to_string(forked).unwrap();
    assert!(text.contains("FORK-ONE") && text.contains("FORK-TWO"));
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        assert_eq!(entry["sessionId"], fork.as_str(), "{line}");
    }

    // The fork goes on like any session.
    project
        .stream_json(&server, "FORK-THREE", &["--resume", &fork])
        .await;
    let sent = server.last_request().unwrap().body["messages"].to_string();
    assert!(
        sent.contains("FORK-ONE") && sent.contains("FORK-TWO"),
        "{sent}"
    );

    let out = project
        .run(&server, &["-p", "hi", "--fork-session"], "")
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--fork-session needs --resume or --continue"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn thinking_flags_shape_the_requests_thinking() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    for (extra, expected) in [
        (
            &["--max-thinking-tokens", "5000", "--effort", "low"][..],
            json!({"type": "enabled", "budget_tokens": 5000}),
        ),
        (
            &["--thinking", "adaptive", "--thinking-display", "omitted"],
            json!({"type": "adaptive", "display": "omitted"}),
        ),
        (
            &["--thinking", "enabled", "--thinking-display", "summarized"],
            json!({"type": "enabled", "budget_tokens": 31999, "display": "summarized"}),
        ),
        (
            &["--effort", "xhigh"],
            json!({"type": "enabled", "budget_tokens": 48000}),
        ),
        (&["--thinking", "disabled", "--effort", "high"], Value::Null),
        (&["--max-thinking-tokens", "0"], Value::Null),
    ] {
        let mut args = vec!["--model", "claude-sonnet-4-5"];
        args.extend_from_slice(extra);
        project.stream_json(&server, "think", &args).await;
        let body = server.last_request().unwrap().body;
        assert_eq!(body["thinking"], expected, "{extra:?}");
    }
}

#[tokio::test]
async fn no_session_persistence_writes_no_transcript() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    project
        .stream_json(&server, "hi", &["--no-session-persistence"])
        .await;
    assert!(project.transcripts().is_empty());
}
