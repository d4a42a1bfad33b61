//! What a user of a local model sees at the end of a run, with `fleet` as a real process and
//! the fake server speaking the OpenAI protocol: usage the server never reported shown as
//! unknown (never zeros, never a cost), reports keyed by the model asked for with the server's
//! own name beside it, errors in text mode on stderr with a failing exit, and `init` listing
//! only agents the main agent can start.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};
use std::process::Output;

/// The model fleet is asked to use; the fake server answers with the name it is asked for
/// unless the scenario names another.
const LOCAL_MODEL: &str = "qwen2.5-coder";
/// The name a local server gives its model whatever it was asked for.
const SERVED: &str = "qwen2.5-coder:7b-instruct-q4_K_M";
/// Words of the subagent's system prompt, which tell its requests from the main agent's.
const CHILD: &str = "running as a subagent";

/// `fleet args…` against `server` as an OpenAI-compatible provider, asking for `LOCAL_MODEL`.
async fn run_openai(project: &Project, server: &FakeModelServer, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--model", LOCAL_MODEL]);
    let base = format!("{}/v1", server.base_url());
    project
        .run_with_env(
            server,
            &all,
            &[
                ("FLEET_PROVIDER", "openai"),
                ("OPENAI_API_KEY", "sk-local"),
                ("OPENAI_BASE_URL", &base),
            ],
        )
        .await
}

fn refusing_server() -> Scenario {
    Scenario::with_rules([Rule::text("unused")
        .fault_status(400)
        .fault_message("messages: the request is malformed")])
}

#[tokio::test]
async fn a_failed_run_in_text_mode_writes_its_error_to_stderr_and_exits_non_zero() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(refusing_server()).await;
    let out = run_openai(&project, &server, &["-p", "hi"]).await;
    assert!(!out.status.success(), "a failed run exits non-zero");
    assert_eq!(stdout(&out), "", "nothing that looks like an answer");
    let err = stderr(&out);
    assert!(
        err.contains("messages: the request is malformed"),
        "the error is on stderr: {err}"
    );
    assert_eq!(err.matches("API error").count(), 1, "said once: {err}");
}

#[tokio::test]
async fn a_failed_run_in_json_keeps_its_result_on_stdout() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(refusing_server()).await;
    let out = run_openai(&project, &server, &["-p", "hi", "--output-format", "json"]).await;
    assert!(!out.status.success());
    let result = &json_lines(&out)[0];
    assert_eq!(result["is_error"], true);
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("messages: the request is malformed"),
        "{result}"
    );
}

/// The `init` line of `fleet -p … --output-format stream-json --verbose <extra>`.
async fn init_line(project: &Project, server: &FakeModelServer, extra: &[&str]) -> Value {
    let mut args = vec!["-p", "hi", "--output-format", "stream-json", "--verbose"];
    args.extend_from_slice(extra);
    let out = run_openai(project, server, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    json_lines(&out)
        .into_iter()
        .find(|l| l["subtype"] == "init")
        .unwrap()
}

#[tokio::test]
async fn init_lists_agents_only_when_the_agent_tool_is_there() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(Scenario::with_rules([Rule::text("ok")])).await;
    let init = init_line(&project, &server, &[]).await;
    assert!(
        !init["agents"].as_array().unwrap().is_empty(),
        "with the Agent tool: {init}"
    );
    for extra in [
        &["--tools", ""][..],
        &["--tools", "Read"],
        &["--disallowedTools", "Agent"],
    ] {
        let init = init_line(&project, &server, extra).await;
        assert_eq!(init["agents"], serde_json::json!([]), "{extra:?}: {init}");
        assert!(
            !init["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "Agent"),
            "{extra:?}: {init}"
        );
    }
}

/// The main agent asks a foreground subagent, which answers; then the main agent answers.
fn with_a_subagent() -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-DONE").when_system_contains(CHILD),
        Rule::text("MAIN-DONE").when_tool_result_contains("CHILD-DONE"),
        Rule::tool_use(
            "Agent",
            json!({"description": "look around", "prompt": "Look around and report",
                   "subagent_type": "general-purpose"}),
        )
        .when_tool_result(false),
    ])
}

fn result_line(out: &Output) -> Value {
    assert!(out.status.success(), "{}\n{}", stdout(out), stderr(out));
    json_lines(out)
        .into_iter()
        .rev()
        .find(|l| l["type"] == "result")
        .unwrap()
}

#[tokio::test]
async fn a_server_that_reports_no_usage_gives_null_usage_and_no_cost() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(with_a_subagent().omit_usage().served_model(SERVED)).await;
    let out = run_openai(
        &project,
        &server,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    )
    .await;
    let result = result_line(&out);
    assert_eq!(result["result"], "MAIN-DONE");
    assert_eq!(result["usage"], Value::Null, "{result}");
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");
    assert_eq!(
        result["usage_unreported_replies"], 2,
        "the main agent's two replies"
    );
    let models = result["modelUsage"].as_object().unwrap();
    assert_eq!(models.keys().collect::<Vec<_>>(), [LOCAL_MODEL], "{result}");
    let entry = &models[LOCAL_MODEL];
    for key in ["inputTokens", "outputTokens", "costUSD"] {
        assert_eq!(entry[key], Value::Null, "{key}: {entry}");
    }
    assert_eq!(
        entry["usageUnreportedReplies"], 3,
        "the tree's three replies"
    );
    assert_eq!(entry["servedModel"], SERVED);
    for agent in result["usage_by_agent"].as_array().unwrap() {
        assert_eq!(agent["usage"], Value::Null, "{agent}");
        assert_eq!(agent["cost_usd"], Value::Null, "{agent}");
        assert_eq!(agent["model"], LOCAL_MODEL, "{agent}");
        assert_eq!(agent["served_model"], SERVED, "{agent}");
        assert!(agent["usage_unreported_replies"].as_u64().unwrap() > 0);
    }
    let lines = json_lines(&out);
    let reply = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(reply["message"]["usage"], Value::Null, "{reply}");
    // What the Agent tool told the main model about its child.
    let agent_result = lines
        .iter()
        .find(|l| l["type"] == "user" && l["tool_use_result"]["agentType"].is_string())
        .unwrap();
    assert_eq!(agent_result["tool_use_result"]["usage"], Value::Null);
    assert_eq!(
        agent_result["tool_use_result"]["total_cost_usd"],
        Value::Null
    );
    let text = agent_result["message"]["content"][0]["content"].to_string();
    assert!(text.contains("usage not reported"), "{text}");
}

#[tokio::test]
async fn text_mode_says_usage_was_not_reported() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(with_a_subagent().omit_usage()).await;
    let out = run_openai(&project, &server, &["-p", "go", "--verbose"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("1 subagent · usage not reported"), "{text}");
    assert!(!text.contains("$0"), "{text}");
}

#[tokio::test]
async fn reports_key_by_the_model_asked_for_and_carry_the_served_name() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(with_a_subagent().served_model(SERVED)).await;
    let out = run_openai(
        &project,
        &server,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    )
    .await;
    let lines = json_lines(&out);
    let init = lines.iter().find(|l| l["subtype"] == "init").unwrap();
    assert_eq!(init["model"], LOCAL_MODEL);
    let reply = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(
        reply["message"]["model"], SERVED,
        "a reply says who answered"
    );
    let result = result_line(&out);
    let models = result["modelUsage"].as_object().unwrap();
    assert_eq!(models.keys().collect::<Vec<_>>(), [LOCAL_MODEL], "{result}");
    let entry = &models[LOCAL_MODEL];
    assert_eq!(entry["servedModel"], SERVED);
    assert!(entry["inputTokens"].as_u64().unwrap() > 0, "{entry}");
    assert_eq!(
        entry["costUSD"],
        json!(0.0),
        "a local model that reported is free"
    );
    assert!(entry.get("usageUnreportedReplies").is_none(), "{entry}");
    assert_eq!(result["total_cost_usd"], json!(0.0));
    assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(result.get("usage_unreported_replies").is_none());
    for agent in result["usage_by_agent"].as_array().unwrap() {
        assert_eq!(agent["model"], LOCAL_MODEL, "{agent}");
        assert_eq!(agent["served_model"], SERVED, "{agent}");
        assert_eq!(agent["cost_usd"], json!(0.0), "{agent}");
    }
}

#[tokio::test]
async fn a_background_task_without_reported_usage_notifies_null_tokens() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let scenario = Scenario::with_rules([
        Rule::text("CHILD-DONE").when_system_contains(CHILD),
        Rule::text("MAIN-SAW-IT").when_last_user_contains("<task-notification>"),
        Rule::text("MAIN-WAITING").when_tool_result_contains("Started background agent"),
        Rule::tool_use(
            "Agent",
            json!({"description": "background job", "prompt": "Do it and report",
                   "subagent_type": "general-purpose", "run_in_background": true}),
        )
        .when_tool_result(false),
    ])
    .omit_usage();
    let server = server(scenario).await;
    let out = run_openai(
        &project,
        &server,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let note = lines
        .iter()
        .find(|l| l["subtype"] == "task_notification")
        .unwrap();
    assert_eq!(note["usage"]["total_tokens"], Value::Null, "{note}");
    assert_eq!(note["usage"]["usage_unreported_replies"], 1, "{note}");
    // The parent model is told so too.
    let told = server
        .requests()
        .into_iter()
        .map(|r| r.body.to_string())
        .find(|body| body.contains("<total_tokens>"))
        .unwrap();
    assert!(
        told.contains("<total_tokens>not reported</total_tokens>"),
        "the notification the parent read: {}",
        &told[told.find("<total_tokens>").unwrap()..]
    );
}

#[tokio::test]
async fn dev_ask_says_usage_was_not_reported_instead_of_zeros() {
    let project = Project::new(&[("README.md", "# app\n")]);
    for (omit, expected, absent) in [
        (true, "usage not reported", "$0"),
        (false, "output tokens; $0.000000", "not reported"),
    ] {
        let scenario = Scenario::with_rules([Rule::text("pong")]);
        let scenario = if omit {
            scenario.omit_usage()
        } else {
            scenario
        };
        let server = server(scenario).await;
        let out = run_openai(&project, &server, &["dev", "ask", "ping"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "pong");
        let err = stderr(&out);
        assert!(err.contains(expected), "omit_usage {omit}: {err}");
        assert!(!err.contains(absent), "omit_usage {omit}: {err}");
    }
}
