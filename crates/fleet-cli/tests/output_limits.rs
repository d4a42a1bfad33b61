//! How long a reply fleet asks for, from the real binary against the fake model server: the
//! model's own limit by default, `--max-output-tokens` over `FLEET_MAX_OUTPUT_TOKENS` over
//! `CLAUDE_CODE_MAX_OUTPUT_TOKENS` over the `maxOutputTokens` setting, for subagents too; and a
//! reply thrown away by a whole-turn retry is declared discarded to partial-message readers.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, max_tokens_asked as asked, server, stderr, stdout, Project};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};

async fn one_run(project: &Project, args: &[&str], env: &[(&str, &str)]) -> Vec<u64> {
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let mut argv = vec!["-p", "hi"];
    argv.extend_from_slice(args);
    let out = project.run_with_env(&server, &argv, env).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    asked(&server)
}

#[tokio::test]
async fn the_limit_is_the_models_own_unless_the_user_sets_one() {
    let project = Project::new(&[("a.txt", "x\n")]);
    // The catalogue's limits: Sonnet 4.5 writes up to 64k, Claude 3.5 Haiku 8k.
    assert_eq!(one_run(&project, &[], &[]).await, [64_000]);
    let haiku = ["--model", "claude-3-5-haiku-20241022"];
    assert_eq!(one_run(&project, &haiku, &[]).await, [8_192]);
    // A user's limit, but never past what a known model can write.
    assert_eq!(
        one_run(&project, &["--max-output-tokens", "1234"], &[]).await,
        [1_234]
    );
    let over = [
        "--model",
        "claude-3-5-haiku-20241022",
        "--max-output-tokens",
        "50000",
    ];
    assert_eq!(one_run(&project, &over, &[]).await, [8_192]);
}

#[tokio::test]
async fn flag_beats_fleets_variable_beats_claude_codes_beats_the_setting() {
    let project = Project::with_settings(&json!({"maxOutputTokens": 4000}));
    assert_eq!(one_run(&project, &[], &[]).await, [4_000]);
    let claude = [("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "3000")];
    assert_eq!(one_run(&project, &[], &claude).await, [3_000]);
    let both = [
        ("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "3000"),
        ("FLEET_MAX_OUTPUT_TOKENS", "2000"),
    ];
    assert_eq!(one_run(&project, &[], &both).await, [2_000]);
    let flag = ["--max-output-tokens", "1000"];
    assert_eq!(one_run(&project, &flag, &both).await, [1_000]);
}

#[tokio::test]
async fn bad_limits_are_refused_naming_where_they_came_from() {
    let project = Project::with_settings(&json!({"maxOutputTokens": "lots"}));
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let out = project.run_with_env(&server, &["-p", "hi"], &[]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("settings.json") && err.contains("maxOutputTokens"),
        "{err}"
    );

    let project = Project::new(&[("a.txt", "x\n")]);
    let out = project
        .run_with_env(&server, &["-p", "hi"], &[("FLEET_MAX_OUTPUT_TOKENS", "0")])
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("FLEET_MAX_OUTPUT_TOKENS"),
        "{}",
        stderr(&out)
    );
    let out = project
        .run_with_env(&server, &["-p", "hi", "--max-output-tokens", "0"], &[])
        .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--max-output-tokens"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn subagents_get_their_own_models_limit_or_the_users() {
    const CHILD: &str = "running as a subagent";
    let scenario = || {
        Scenario::with_rules([
            Rule::text("child done").when_system_contains(CHILD),
            Rule::text("MAIN-DONE").when_tool_result(true),
            Rule::tool_use(
                "Agent",
                json!({"description": "look", "prompt": "look around",
                       "subagent_type": "general-purpose",
                       "model": "claude-3-5-haiku-20241022"}),
            ),
        ])
    };
    let project = Project::new(&[("a.txt", "x\n")]);
    let by_model = |server: &FakeModelServer| -> Vec<(String, u64)> {
        server
            .requests()
            .iter()
            .map(|r| {
                (
                    r.body["model"].as_str().unwrap_or_default().to_string(),
                    r.body["max_tokens"].as_u64().unwrap_or_default(),
                )
            })
            .collect()
    };
    let first = server(scenario()).await;
    let out = project.run_with_env(&first, &["-p", "go"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = by_model(&first);
    assert!(
        seen.contains(&("claude-3-5-haiku-20241022".into(), 8_192)),
        "{seen:?}"
    );
    assert!(
        seen.contains(&("claude-sonnet-4-5".into(), 64_000)),
        "{seen:?}"
    );

    let second = server(scenario()).await;
    let flag = ["-p", "go", "--max-output-tokens", "1500"];
    let out = project.run_with_env(&second, &flag, &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = by_model(&second);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|(_, max)| *max == 1_500), "{seen:?}");
}

#[tokio::test]
async fn a_whole_turn_retry_tells_partial_readers_to_drop_what_they_saw() {
    let project = Project::new(&[("a.txt", "x\n")]);
    // The first reply breaks off after its text began; the second comes whole.
    let server = server(Scenario::queue([
        Rule::text("a first answer that will never finish").drop_after_events(4),
        Rule::text("the answer that counts"),
    ]))
    .await;
    let args = [
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
    ];
    let out = project.run_with_env(&server, &args, &[]).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let at = |pick: &dyn Fn(&Value) -> bool| lines.iter().position(pick);
    let starts: Vec<usize> = (0..lines.len())
        .filter(|i| lines[*i]["event"]["type"] == "message_start")
        .collect();
    assert_eq!(starts.len(), 2, "{lines:#?}");
    let first_id = lines[starts[0]]["event"]["message"]["id"].clone();
    let discarded = at(&|l| l["event"]["type"] == "message_discarded").expect("no discard line");
    let discard = &lines[discarded];
    assert_eq!(discard["type"], "stream_event");
    assert_eq!(discard["event"]["message_id"], first_id);
    assert!(
        discard["event"]["reason"]
            .as_str()
            .unwrap()
            .contains("broke off"),
        "{discard}"
    );
    let retry = at(&|l| l["subtype"] == "api_retry").expect("no api_retry line");
    assert_eq!(lines[retry]["retry_scope"], "turn");
    // Discard, then the retry, then the reply that counts.
    assert!(starts[0] < discarded && discarded < retry && retry < starts[1]);
    let result = lines.last().unwrap();
    assert_eq!(result["result"], "the answer that counts");

    // Without partial messages there is nothing to discard, and no such line.
    let server2 = server_again().await;
    let plain = ["-p", "hi", "--output-format", "stream-json", "--verbose"];
    let out = project.run_with_env(&server2, &plain, &[]).await;
    let lines = json_lines(&out);
    assert!(lines
        .iter()
        .all(|l| l["event"]["type"] != "message_discarded"));
    let retry = lines.iter().find(|l| l["subtype"] == "api_retry").unwrap();
    assert_eq!(retry["retry_scope"], "turn");
}

async fn server_again() -> FakeModelServer {
    server(Scenario::queue([
        Rule::text("a first answer that will never finish").drop_after_events(4),
        Rule::text("the answer that counts"),
    ]))
    .await
}
