//! The Bash bypass corpus through the real binary. Each case is a command line that looks like
//! reading but edits `hello.txt` or creates a marker file when it really runs.
//!
//! - The sandbox alone: the classifier is switched off (`FLEET_TEST_SANDBOX_ONLY=1`), so every
//!   case reaches bash, as Explore and Plan children in default, plan and dontAsk modes (and
//!   under a bypassPermissions parent) and as a verification child. No marker may appear and no file may change.
//! - The classifier alone: the sandbox is switched off (`FLEET_SANDBOX_UNAVAILABLE=1`); a
//!   read-only child refuses every case before anything runs.
//! - An ordinary agent, sandbox and classifier on: no case runs without a person's approval.

use crate::common::*;
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// What the child's first message holds, so the scenario tells it from the main agent.
const CHILD_TASK: &str = "CORPUS-RUN: look around";

struct Case {
    command: String,
    marker: Option<String>,
}

/// The corpus file: one case per line, `#` comments, `{NL}` for a newline, and an optional
/// trailing ` #> NAME` naming the marker file the case creates when it runs unchecked.
fn corpus() -> Vec<Case> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fleet-tools/tests/data/bash_bypass.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Case> = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (command, marker) = match line.rfind(" #> ") {
                Some(at) => (&line[..at], Some(line[at + 4..].trim().to_string())),
                None => (line, None),
            };
            Case {
                command: command.replace("{NL}", "\n"),
                marker,
            }
        })
        .collect();
    assert!(
        cases.len() >= 46,
        "the corpus shrank: {} cases",
        cases.len()
    );
    cases
}

/// One reply calling Bash once per case.
fn all_cases(cases: &[Case]) -> Rule {
    cases.iter().fold(Rule::new(), |rule, case| {
        rule.then_tool_use("Bash", json!({"command": case.command, "timeout": 20_000}))
    })
}

/// The main agent starts one child of `agent_type`, which runs every case at once.
fn child_scenario(agent_type: &str, cases: &[Case]) -> Scenario {
    Scenario::with_rules([
        Rule::text("CHILD-DONE")
            .when_marker(CHILD_TASK)
            .when_tool_result(true),
        all_cases(cases).when_marker(CHILD_TASK),
        Rule::text("MAIN-DONE").when_tool_result_contains("CHILD-DONE"),
        Rule::tool_use(
            "Agent",
            json!({"description": "look around", "prompt": CHILD_TASK, "subagent_type": agent_type}),
        ),
    ])
}

/// The main agent runs every case itself.
fn main_scenario(cases: &[Case]) -> Scenario {
    Scenario::with_rules([
        Rule::text("MAIN-DONE").when_tool_result(true),
        all_cases(cases),
    ])
}

/// Every file under `dir` (the repository with its `.git`, or the home folder) with its
/// contents, or the target of a symlink.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let content = if kind.is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if kind.is_dir() {
                stack.push(path.clone());
                b"<dir>".to_vec()
            } else {
                std::fs::read(&path).unwrap()
            };
            files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), content);
        }
    }
    files
}

/// Names of every entry below `dir`, for finding markers wherever a case put them.
fn names_below(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            names.push(entry.file_name().to_string_lossy().into_owned());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    names
}

/// The Bash results of a stream-json run, in order, whoever made the call.
fn bash_results(out: &Output) -> Vec<(bool, String)> {
    let lines = json_lines(out);
    let bash_ids: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] == "assistant")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use" && b["name"] == "Bash")
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .filter(|b| bash_ids.iter().any(|id| b["tool_use_id"] == id.as_str()))
        .map(|b| (b["is_error"] == true, content_text(&b["content"])))
        .collect()
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Runs the corpus in a fresh repository holding `hello.txt`, and checks that nothing changed
/// and no marker appeared. Returns the Bash results.
async fn run(scenario: Scenario, args: &[&str], env: &[(&str, &str)]) -> Vec<(bool, String)> {
    let cases = corpus();
    let project = Project::new(&[("hello.txt", "hello\n"), ("src/lib.rs", "// lib\n")]);
    let repo_before = snapshot(&project.repo);
    let home_before = snapshot(&project.home);
    let server = server(scenario).await;
    let mut all_args = vec!["-p", "go", "--output-format", "stream-json", "--verbose"];
    all_args.extend_from_slice(args);
    let out = project.run_with_env(&server, &all_args, env).await;
    let context = format!("fleet {args:?} {env:?}\nstderr:\n{}", stderr(&out));
    assert!(out.status.success(), "{context}\n{}", stdout(&out));
    assert!(stdout(&out).contains("MAIN-DONE"), "{context}");

    let root = project.repo.parent().unwrap();
    let names = names_below(root);
    for marker in cases.iter().filter_map(|c| c.marker.as_deref()) {
        assert!(
            !names.iter().any(|n| n == marker),
            "{context}\nmarker {marker} appeared"
        );
    }
    assert_eq!(project.read("hello.txt"), "hello\n", "{context}");
    let repo_after = snapshot(&project.repo);
    let changed: Vec<_> = repo_after
        .iter()
        .filter(|(path, content)| repo_before.get(*path) != Some(content))
        .map(|(path, _)| path)
        .chain(repo_before.keys().filter(|p| !repo_after.contains_key(*p)))
        .collect();
    assert!(changed.is_empty(), "{context}\nchanged: {changed:?}");
    assert_eq!(
        snapshot(&project.home),
        home_before,
        "{context}\nthe home folder changed"
    );

    let results = bash_results(&out);
    assert_eq!(results.len(), cases.len(), "{context}\none result per case");
    results
}

/// What a refusal by the classifier or the permission check looks like: a tool error, given
/// before anything ran.
fn refused_before_running(result: &(bool, String)) -> bool {
    result.0 && result.1.starts_with("<tool_use_error>")
}

async fn sandbox_alone(agent_type: &str, mode: &str) {
    let results = run(
        child_scenario(agent_type, &corpus()),
        &["--permission-mode", mode],
        &[("FLEET_TEST_SANDBOX_ONLY", "1")],
    )
    .await;
    // The classifier really was out of the way: the commands ran, and the sandbox refused.
    let classifier_refusals = results
        .iter()
        .filter(|r| r.1.contains("this agent is read-only") || r.1.contains("cannot be checked"))
        .count();
    assert_eq!(classifier_refusals, 0, "{agent_type} {mode}: {results:#?}");
    let sandbox_refusals = results
        .iter()
        .filter(|r| r.1.contains("denied by the sandbox"))
        .count();
    // The verifier works in a throwaway copy of the checkout, and the corpus writes relative
    // to its folder: those writes land in the copy, which is what the copy is for. That the
    // checkout and the home folder are untouched was checked above; `tests/verify.rs` shows
    // the sandbox refusing the verifier's writes into the checkout itself.
    if agent_type != "verification" {
        assert!(
            sandbox_refusals > 0,
            "{agent_type} {mode}: no command met the sandbox: {results:#?}"
        );
    }
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_explore_in_default_mode() {
    sandbox_alone("Explore", "default").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_explore_in_plan_mode() {
    sandbox_alone("Explore", "plan").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_explore_in_dont_ask_mode() {
    sandbox_alone("Explore", "dontAsk").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_plan_in_default_mode() {
    sandbox_alone("Plan", "default").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_plan_in_plan_mode() {
    sandbox_alone("Plan", "plan").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_plan_in_dont_ask_mode() {
    sandbox_alone("Plan", "dontAsk").await;
}

/// In bypassPermissions, so that nothing but the sandbox stands between the verifier's
/// commands and the project.
#[tokio::test]
async fn the_sandbox_alone_holds_for_verification() {
    sandbox_alone("verification", "bypassPermissions").await;
}

#[tokio::test]
async fn the_sandbox_alone_holds_for_explore_under_a_bypassing_parent() {
    sandbox_alone("Explore", "bypassPermissions").await;
}

async fn classifier_alone(agent_type: &str, mode: &str) {
    let cases = corpus();
    let results = run(
        child_scenario(agent_type, &cases),
        &["--permission-mode", mode],
        &[("FLEET_SANDBOX_UNAVAILABLE", "1")],
    )
    .await;
    for (case, result) in cases.iter().zip(&results) {
        assert!(
            refused_before_running(result),
            "{agent_type} {mode}: `{}` was not refused: {result:?}",
            case.command
        );
    }
}

#[tokio::test]
async fn the_classifier_alone_refuses_every_case_for_explore() {
    classifier_alone("Explore", "default").await;
}

#[tokio::test]
async fn the_classifier_alone_refuses_every_case_for_plan_in_dont_ask_mode() {
    classifier_alone("Plan", "dontAsk").await;
}

async fn ordinary_agent(mode: &str) {
    let cases = corpus();
    let results = run(main_scenario(&cases), &["--permission-mode", mode], &[]).await;
    for (case, result) in cases.iter().zip(&results) {
        assert!(
            refused_before_running(result) && result.1.contains("Permission to use Bash"),
            "{mode}: `{}` ran without approval: {result:?}",
            case.command
        );
    }
}

#[tokio::test]
async fn an_ordinary_agent_runs_no_case_without_approval_in_default_mode() {
    ordinary_agent("default").await;
}

#[tokio::test]
async fn an_ordinary_agent_runs_no_case_without_approval_in_accept_edits_mode() {
    ordinary_agent("acceptEdits").await;
}

#[tokio::test]
async fn an_ordinary_agent_runs_no_case_without_approval_in_dont_ask_mode() {
    ordinary_agent("dontAsk").await;
}
