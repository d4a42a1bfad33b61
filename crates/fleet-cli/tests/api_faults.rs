//! Faults between fleet and the model server, as a user of `fleet -p` meets them, with `fleet`
//! as a real process: a base URL whose host does not resolve ends soon with an error naming
//! the host and the variable; every retry is shown as it happens (a line on stderr in text
//! mode, an `api_retry` line in stream-json); and a resumed conversation holding user turns in
//! a row is accepted by an OpenAI-compatible server that wants the roles to alternate.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{json_lines, server, stderr, stdout, Project};
use fleet_testkit::{FakeModelServer, OpenAiOptions, Rule, Scenario};
use serde_json::Value;

const NOWHERE: &str = "http://nosuchhost.invalid";

/// `.invalid` never resolves (RFC 6761). The name is asked once more a second later, then the
/// run fails: no nine attempts over a minute and a half, and nothing silent meanwhile.
#[tokio::test]
async fn an_unresolvable_api_host_fails_soon_naming_the_host_and_the_variable() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let unused = server(Scenario::with_rules([Rule::text("never asked")])).await;
    let out = project
        .run_with_env(&unused, &["-p", "hi"], &[("ANTHROPIC_BASE_URL", NOWHERE)])
        .await;
    assert!(!out.status.success(), "{}", stdout(&out));
    assert_eq!(stdout(&out), "", "no answer on stdout");
    let err = stderr(&out);
    assert!(
        err.contains("`nosuchhost.invalid`") && err.contains("ANTHROPIC_BASE_URL"),
        "{err}"
    );
    let retries: Vec<&str> = err.lines().filter(|l| l.contains('↻')).collect();
    assert_eq!(retries.len(), 1, "one quick retry, shown: {err}");
    assert!(
        retries[0].contains("cannot resolve the host") && retries[0].contains("retry 1 of 1"),
        "{err}"
    );
    assert_eq!(unused.request_count(), 0);

    // The same for an OpenAI-compatible server, named by its own variable; in stream-json
    // the retry is an `api_retry` line and the result says why the run failed.
    let out = project
        .run_with_env(
            &unused,
            &[
                "-p",
                "hi",
                "--model",
                "qwen-local",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            &[
                ("FLEET_PROVIDER", "openai"),
                ("OPENAI_BASE_URL", "http://nosuchhost.invalid/v1"),
            ],
        )
        .await;
    assert!(!out.status.success());
    let lines = json_lines(&out);
    let retries: Vec<&Value> = lines
        .iter()
        .filter(|l| l["subtype"] == "api_retry")
        .collect();
    assert_eq!(retries.len(), 1, "{lines:?}");
    assert_eq!(retries[0]["attempt"], 1);
    assert_eq!(retries[0]["max_retries"], 1);
    assert_eq!(retries[0]["retry_delay_ms"], 1000);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["is_error"], true);
    let why = result["result"].as_str().unwrap();
    assert!(
        why.contains("`nosuchhost.invalid`") && why.contains("OPENAI_BASE_URL"),
        "{why}"
    );
}

fn overloaded_once() -> Scenario {
    Scenario::queue([
        Rule::text("never seen").fault_status(529).once(),
        Rule::text("made it"),
    ])
}

#[tokio::test]
async fn a_529_then_success_shows_the_retry_on_stderr_and_as_api_retry() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server1 = server(overloaded_once()).await;
    let out = project.run(&server1, &["-p", "hi"], "").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "made it\n", "stdout stays the answer's");
    let err = stderr(&out);
    let retries: Vec<&str> = err.lines().filter(|l| l.contains('↻')).collect();
    assert_eq!(retries.len(), 1, "{err}");
    assert!(
        retries[0].starts_with("fleet: ↻ ")
            && retries[0].contains("529")
            && retries[0].contains("retrying in")
            && retries[0].contains("(retry 1 of 2)"),
        "{err}"
    );

    let server2 = server(overloaded_once()).await;
    let (_, lines) = project.stream_json(&server2, "hi", &[]).await;
    let retry = lines
        .iter()
        .position(|l| l["subtype"] == "api_retry")
        .expect("an api_retry line");
    let line = &lines[retry];
    assert_eq!(line["type"], "system");
    assert_eq!(line["attempt"], 1);
    assert_eq!(line["max_retries"], 2);
    assert_eq!(line["retry_scope"], "request");
    assert!(line["retry_delay_ms"].is_u64(), "{line}");
    // Claude Code's category, and fleet's words beside it.
    assert_eq!(line["error"], "overloaded", "{line}");
    assert_eq!(line["error_status"], 529, "{line}");
    assert!(
        line["error_message"].as_str().unwrap().contains("529"),
        "{line}"
    );
    assert_eq!(line["session_id"], lines[0]["session_id"]);
    let answer = lines.iter().position(|l| l["type"] == "assistant").unwrap();
    assert!(
        retry < answer,
        "the retry is shown before the reply that follows it"
    );
    assert_eq!(lines.last().unwrap()["result"], "made it");
}

async fn strict_openai_server() -> FakeModelServer {
    let scenario = Scenario::queue([
        // The first run fails before any reply, leaving its prompt unanswered.
        Rule::text("never seen")
            .fault_status(400)
            .fault_message("scripted refusal")
            .once(),
        Rule::text("second answer"),
    ])
    .openai(OpenAiOptions {
        reject_consecutive_user: true,
        ..OpenAiOptions::default()
    });
    server(scenario).await
}

/// A resumed session whose last run failed before any reply holds two user turns in a row;
/// a server whose chat template wants the roles to alternate still gets one user message.
#[tokio::test]
async fn a_resumed_conversation_with_user_turns_in_a_row_is_accepted_by_a_strict_server() {
    let project = Project::new(&[("a.txt", "x\n")]);
    let server = strict_openai_server().await;
    let base = format!("{}/v1", server.base_url());
    let env = [
        ("FLEET_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-local"),
    ];
    let id = "5d0c7a1e-2f3b-4c5d-8e9f-0a1b2c3d4e5f";
    let common = ["--model", "qwen-local", "--tools", ""];
    let mut first = vec!["-p", "first prompt", "--session-id", id];
    first.extend_from_slice(&common);
    let out = project.run_with_env(&server, &first, &env).await;
    assert!(!out.status.success(), "the scripted refusal fails the run");
    assert!(
        stderr(&out).contains("scripted refusal"),
        "{}",
        stderr(&out)
    );

    let mut second = vec!["-p", "second prompt", "--resume", id];
    second.extend_from_slice(&common);
    let out = project.run_with_env(&server, &second, &env).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "second answer\n");
    let sent = server.last_request().unwrap().body;
    let users: Vec<&Value> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 1, "{sent}");
    let text = users[0]["content"].as_str().unwrap();
    let (first_at, second_at) = (text.find("first prompt"), text.find("second prompt"));
    assert!(
        matches!((first_at, second_at), (Some(a), Some(b)) if a < b),
        "both prompts, in order: {text}"
    );
}
