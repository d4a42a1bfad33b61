//! Output limits and whole-turn retries against a small local model, with `fleet` as a real
//! process and the fake server speaking the OpenAI protocol with a scripted context window:
//! the window the server publishes bounds every request; a tool call cut by the output limit
//! is asked again with more room (or, with the user's fixed limit, stops saying so); garbled
//! tool input is named as such; and every discarded reply's tokens are counted.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, max_tokens_asked as asked, server, stderr, stdout, Project};
use fleet_protocol::StopReason;
use fleet_testkit::{FakeModelServer, Overflow, Rule, Scenario};
use serde_json::{json, Value};
use std::process::Output;

const LOCAL_MODEL: &str = "smollm2-135m";
/// A short system prompt and no tools keep the prompt far below the small windows here.
const SMALL: [&str; 4] = ["--system-prompt", "Be brief.", "--tools", ""];

async fn run_local(project: &Project, server: &FakeModelServer, args: &[&str]) -> Output {
    let mut all = vec!["--model", LOCAL_MODEL];
    all.extend_from_slice(args);
    let base = format!("{}/v1", server.base_url());
    let env = [
        ("FLEET_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-local"),
    ];
    project.run_with_env(server, &all, &env).await
}

#[tokio::test]
async fn the_window_the_server_publishes_bounds_the_reply() {
    let project = Project::new(&[("a.txt", "x\n")]);
    // vLLM refuses prompt + max_tokens over its window; fleet's guess for an unknown model
    // (8,192) would be refused by this 4,096-token server.
    let scenario =
        Scenario::with_rules([Rule::text("ok")]).openai_context_window(4_096, Overflow::Reject);
    let server = server(scenario).await;
    let mut args = vec!["-p", "hi"];
    args.extend_from_slice(&SMALL);
    let out = run_local(&project, &server, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out).trim(), "ok");
    // A quarter of the window by default.
    assert_eq!(asked(&server), [1_024]);

    // The user may ask for more, but a request never asks past what the window leaves.
    let server2 = server_with_window(2_048).await;
    let long_prompt = "word ".repeat(800);
    let mut args = vec!["-p", long_prompt.as_str(), "--max-output-tokens", "1900"];
    args.extend_from_slice(&SMALL);
    let out = run_local(&project, &server2, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let max = asked(&server2)[0];
    assert!((256..1_900).contains(&max), "asked for {max}");
}

async fn server_with_window(tokens: u64) -> FakeModelServer {
    server(Scenario::with_rules([Rule::text("ok")]).openai_context_window(tokens, Overflow::Reject))
        .await
}

/// A tool call whose input the output limit (`limit` tokens, all written) cut short.
fn cut_call(limit: u64) -> Rule {
    Rule::tool_use("Read", json!({"file_path": "/etc/hostname"}))
        .malformed_tool_json()
        .stop_reason(StopReason::MaxTokens)
        .output_tokens(limit)
        .once()
}

fn stream_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "-p",
        "read it",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    args.extend(["--system-prompt", "Be brief.", "--tools", "Read"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[tokio::test]
async fn a_tool_call_cut_by_the_output_limit_is_asked_again_with_more_room() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::queue([cut_call(2_048), Rule::text("done").output_tokens(7)])
        .openai_context_window(8_192, Overflow::Reject);
    let server = server(scenario).await;
    let args = stream_args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_local(&project, &server, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    // 2,048 (a quarter of the window), then twice that.
    assert_eq!(asked(&server), [2_048, 4_096]);
    let lines = json_lines(&out);
    let retry = lines.iter().find(|l| l["subtype"] == "api_retry").unwrap();
    assert_eq!(retry["retry_scope"], "turn");
    let reason = retry["error_message"].as_str().unwrap();
    assert!(
        reason.contains("output limit (2048 tokens)") && reason.contains("4096"),
        "{reason}"
    );
    assert!(!reason.contains("broke off"), "{reason}");
    let result = lines.last().unwrap();
    assert_eq!(result["result"], "done");
    // The thrown-away reply was billed, so it is counted.
    assert_eq!(result["usage"]["output_tokens"], 2_055, "{result}");
}

#[tokio::test]
async fn with_the_users_fixed_limit_a_cut_tool_call_stops_and_says_how_to_raise_it() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::queue([cut_call(500), Rule::text("never asked")]);
    let server = server(scenario).await;
    let out = run_local(
        &project,
        &server,
        &[
            "-p",
            "read it",
            "--tools",
            "Read",
            "--max-output-tokens",
            "500",
        ],
    )
    .await;
    assert!(!out.status.success());
    assert_eq!(
        server.request_count(),
        1,
        "not asked again with the same limit"
    );
    let err = stderr(&out);
    assert!(
        err.contains("output limit (500 tokens)") && err.contains("--max-output-tokens"),
        "{err}"
    );
}

#[tokio::test]
async fn garbled_tool_input_is_named_as_such_and_asked_again_with_the_same_limit() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let garbled = Rule::tool_use("Read", json!({"file_path": "/etc/hostname"}))
        .malformed_tool_json()
        .once();
    let scenario = Scenario::queue([garbled, Rule::text("done")]);
    let server = server(scenario).await;
    let args = stream_args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_local(&project, &server, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let asked = asked(&server);
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], asked[1]);
    let lines = json_lines(&out);
    let retry = lines.iter().find(|l| l["subtype"] == "api_retry").unwrap();
    let reason = retry["error_message"].as_str().unwrap();
    assert!(
        reason.contains("came to its end") && reason.contains("not valid JSON"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_answer_cut_by_a_full_window_is_told_apart_from_one_cut_by_the_limit() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let long = "all work and no play makes a dull model ".repeat(60);
    let mut args = vec!["-p", "hi"];
    args.extend_from_slice(&SMALL);
    let mut json = args.clone();
    json.extend(["--output-format", "json"]);
    // The prompt's size as the server counts it, from a server with room to spare.
    let roomy = server(Scenario::with_rules([Rule::text("ok")])).await;
    let out = run_local(&project, &roomy, &json).await;
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let prompt = result["usage"]["input_tokens"].as_u64().unwrap();
    // llama-server: the reply stops where the window is full. fleet asks for at least 256
    // tokens (or the whole window when smaller), and this window leaves 150 after the prompt,
    // so the window is what stops the reply.
    let full = || {
        Scenario::with_rules([Rule::text(long.clone())])
            .openai_context_window(prompt + 150, Overflow::Truncate)
    };
    let server1 = server(full()).await;
    let out = run_local(&project, &server1, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(asked(&server1)[0] > 150, "{:?}", asked(&server1));
    assert!(long.starts_with(stdout(&out).trim()), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("context window is full"), "{err}");
    assert!(!err.contains("output limit"), "{err}");
    let server2 = server(full()).await;
    let out = run_local(&project, &server2, &json).await;
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["stop_reason"], "model_context_window_exceeded");

    // The output limit itself: all the tokens asked for were written.
    let limited = Scenario::with_rules([Rule::text(long)
        .stop_reason(StopReason::MaxTokens)
        .output_tokens(300)]);
    let server3 = server(limited).await;
    let mut args = vec!["-p", "hi", "--max-output-tokens", "300"];
    args.extend_from_slice(&SMALL);
    let out = run_local(&project, &server3, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("output limit") && err.contains("--max-output-tokens"),
        "{err}"
    );
    assert!(!err.contains("context window"), "{err}");
}
