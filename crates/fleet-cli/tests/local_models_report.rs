//! What a user of a local model sees at the end of a run, with `fleet` as a real process and
//! the fake server speaking the OpenAI protocol: errors in text mode on stderr with a failing
//! exit, `init` listing only agents the main agent can start.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::Value;
use std::process::Output;

/// The model fleet is asked to use; the fake server answers with the name it is asked for
/// unless the scenario names another.
const LOCAL_MODEL: &str = "qwen2.5-coder";

/// `fleet args…` against `server` as an OpenAI-compatible provider, asking for `LOCAL_MODEL`.
async fn run_openai(project: &Project, server: &FakeModelServer, args: &[&str]) -> Output {
    let mut all = vec!["--model", LOCAL_MODEL];
    all.extend_from_slice(args);
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
