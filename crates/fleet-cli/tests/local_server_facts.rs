//! What a local llama-server says of itself, taken in by `fleet` run as a real process against
//! the fake server in its llama-server persona: the prompt measured by the server's tokenizer
//! (tool definitions its chat template drops cost nothing), a server still loading asked again
//! after its first answer, a local `sonnet` that is not Anthropic's, the server's reply ids
//! carried to partial readers, a run that broke off reporting unknown usage rather than zeros,
//! and a template that cannot use tools said once.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, max_tokens_asked as asked, server, stderr, stdout, Project};
use fleet_testkit::{FakeModelServer, Overflow, Rule, Scenario};
use serde_json::{json, Value};
use std::process::Output;

const LOCAL_MODEL: &str = "smollm2-135m-instruct";
const WINDOW: u64 = 4_096;

async fn run(project: &Project, server: &FakeModelServer, model: &str, args: &[&str]) -> Output {
    let mut all = vec!["--model", model];
    all.extend_from_slice(args);
    let base = format!("{}/v1", server.base_url());
    let env = [
        ("FLEET_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-local"),
    ];
    project.run_with_env(server, &all, &env).await
}

fn result_of(out: &Output) -> Value {
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| {
        panic!(
            "not one JSON result ({e}):\n{}\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// The prompt tokens the server charged each request.
fn prompt_tokens(result: &Value) -> u64 {
    result["usage"]["input_tokens"].as_u64().unwrap()
}

#[tokio::test]
async fn a_server_that_drops_the_tools_leaves_room_for_the_users_limit() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::with_rules([Rule::text("ok")])
        .openai_context_window(WINDOW, Overflow::Truncate)
        .supports_tools(false);
    let server = server(scenario).await;
    // Every built-in tool: tens of KB of schemas, more than the window by fleet's estimate.
    let args = [
        "-p",
        "hi",
        "--output-format",
        "json",
        "--system-prompt",
        "Be brief.",
        "--max-output-tokens",
        "3000",
    ];
    let out = run(&project, &server, LOCAL_MODEL, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let request = server.last_request().unwrap();
    let tools = request.body["tools"].to_string().len();
    assert!(tools > 16_000, "the tool schemas were sent ({tools} bytes)");
    let result = result_of(&out);
    let prompt = prompt_tokens(&result);
    // The server's count of the prompt (tools left out), with fleet's 2% margin: the user's
    // limit when it fits, else all the window leaves — never the 256-token minimum.
    let fits = WINDOW - prompt - WINDOW / 50;
    assert_eq!(asked(&server), [3_000.min(fits)], "prompt {prompt}");
    assert!(asked(&server)[0] > 2_000, "{:?}", asked(&server));
    // modelUsage shows the limit asked with, not the window.
    let usage = &result["modelUsage"][LOCAL_MODEL];
    assert_eq!(usage["maxOutputTokens"], 3_000, "{usage}");
    assert_eq!(usage["contextWindow"], WINDOW, "{usage}");
    // Said once, on stderr.
    let err = stderr(&out);
    assert_eq!(err.matches("cannot use tools").count(), 1, "{err}");
}

#[tokio::test]
async fn a_server_that_takes_tools_is_not_warned_about() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::with_rules([Rule::text("ok")])
        .openai_context_window(32_768, Overflow::Truncate)
        .supports_tools(true);
    let server = server(scenario).await;
    let out = run(&project, &server, LOCAL_MODEL, &["-p", "hi"]).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        !stderr(&out).contains("cannot use tools"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_server_still_loading_at_start_is_asked_again_after_its_first_answer() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::queue([
        Rule::tool_use("Read", json!({"file_path": "a.txt"})),
        Rule::text("done"),
    ])
    .openai_context_window(WINDOW, Overflow::Truncate)
    .loading_probes(1)
    .supports_tools(false);
    let server = server(scenario).await;
    let args = [
        "-p",
        "read a.txt",
        "--output-format",
        "json",
        "--system-prompt",
        "Be brief.",
        "--tools",
        "Read",
    ];
    let out = run(&project, &server, LOCAL_MODEL, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    // Nothing known at first: the documented fallback (8,192 of a 128,000 window); then a
    // quarter of the 4,096 the server published once it had loaded.
    assert_eq!(asked(&server), [8_192, 1_024]);
    let result = result_of(&out);
    assert_eq!(result["modelUsage"][LOCAL_MODEL]["contextWindow"], WINDOW);
    // The template's lack of tools, learnt late, is still said — once.
    let err = stderr(&out);
    assert_eq!(err.matches("cannot use tools").count(), 1, "{err}");
}

#[tokio::test]
async fn sonnet_on_a_local_server_is_whatever_the_server_runs() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario =
        Scenario::with_rules([Rule::text("ok")]).openai_context_window(WINDOW, Overflow::Truncate);
    let server = server(scenario).await;
    let args = ["-p", "hi", "--output-format", "json", "--tools", ""];
    let out = run(&project, &server, "sonnet", &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    // The server's window, not the catalogue's 200k and 64k for Claude Sonnet.
    assert_eq!(asked(&server), [1_024]);
    let result = result_of(&out);
    let usage = &result["modelUsage"]["sonnet"];
    assert_eq!(usage["contextWindow"], WINDOW, "{result}");
    assert_eq!(usage["maxOutputTokens"], 1_024, "{result}");
    assert!(prompt_tokens(&result) > 0, "usage was reported: {result}");
    // Tokens counted, and no Anthropic price put on them.
    assert_eq!(usage["costUSD"], 0.0, "{result}");
    assert_eq!(result["total_cost_usd"], 0.0, "{result}");
}

#[tokio::test]
async fn the_servers_reply_ids_reach_partial_readers() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let scenario = Scenario::queue([
        Rule::text("a first answer that will never finish").drop_after_events(4),
        Rule::text("the answer that counts"),
    ])
    .openai_context_window(32_768, Overflow::Truncate);
    let server = server(scenario).await;
    let args = [
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--tools",
        "",
    ];
    let out = run(&project, &server, LOCAL_MODEL, &args).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let starts: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"]["type"] == "message_start")
        .collect();
    assert_eq!(starts.len(), 2, "{lines:#?}");
    let ids: Vec<&str> = starts
        .iter()
        .map(|l| l["event"]["message"]["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter().all(|id| id.starts_with("chatcmpl-")) && ids[0] != ids[1],
        "{ids:?}"
    );
    let discard = lines
        .iter()
        .find(|l| l["event"]["type"] == "message_discarded")
        .expect("no discard line");
    assert_eq!(discard["event"]["message_id"], ids[0], "{discard}");
    // The reply that counts carries the same id as its start.
    let assistant = lines.iter().rfind(|l| l["type"] == "assistant").unwrap();
    assert_eq!(assistant["message"]["id"], ids[1], "{assistant}");
    assert_eq!(
        starts[1]["event"]["message"]["model"], assistant["message"]["model"],
        "{assistant}"
    );
}

#[tokio::test]
async fn a_run_that_broke_off_after_streaming_reports_unknown_usage_not_zeros() {
    let project = Project::new(&[("a.txt", "x\n")]);
    // Every attempt streams part of its answer, slowly, then the connection drops.
    let scenario = Scenario::with_rules([Rule::text("an answer that never finishes")
        .chunk_delay_ms(20)
        .drop_after_events(4)])
    .openai_context_window(32_768, Overflow::Truncate);
    let server = server(scenario).await;
    let args = ["-p", "hi", "--output-format", "json", "--tools", ""];
    let out = run(&project, &server, LOCAL_MODEL, &args).await;
    assert!(!out.status.success(), "{}", stdout(&out));
    let result = result_of(&out);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(server.request_count() >= 2, "the turn was asked again");
    // The server wrote tokens it never counted: unknown, not zero.
    assert_eq!(result["usage"], Value::Null, "{result}");
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");
    // The time spent streaming is API time (each attempt paused 20 ms at least).
    let api_ms = result["duration_api_ms"].as_u64().unwrap();
    assert!(api_ms >= 20, "{result}");
}
