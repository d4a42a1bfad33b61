//! Background agents running when fleet is killed with SIGKILL: `--resume` tells the model
//! that each of them was interrupted (once, with what it had produced), answers every call
//! the dead process left open, and the resumed run ends with a result and exit code 0.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::*;
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// In every subagent's system prompt, never in the main agent's.
const CHILD: &str = "running as a subagent";
/// What each child says before the call it never gets an answer to.
const PROGRESS: &str = "CHILD-PROGRESS";
const AGENTS: usize = 4;
/// How long any wait of this test may take before it fails, naming what it waited for.
const DEADLINE: Duration = Duration::from_secs(90);

/// The main agent starts `AGENTS` background agents at once, then waits for them. Each child
/// reads a file (its first reply is on disk then), and its next reply never comes in time.
fn scenario() -> Scenario {
    scenario_then(Rule::text("MAIN-WAITING"))
}

/// Like [`scenario`], the main agent doing `after_launch` once its agents are started.
fn scenario_then(after_launch: Rule) -> Scenario {
    let mut fan_out = Rule::new();
    for k in 0..AGENTS {
        fan_out = fan_out.then_tool_use(
            "Agent",
            json!({"description": format!("job {k}"), "prompt": format!("Do JOB-{k}"),
                   "subagent_type": "general-purpose", "run_in_background": true}),
        );
    }
    Scenario::with_rules([
        Rule::text("late")
            .when_system_contains(CHILD)
            .when_tool_result(true)
            .delay_ms(600_000),
        Rule::text(PROGRESS)
            .then_tool_use("Read", json!({"file_path": "README.md"}))
            .when_system_contains(CHILD),
        Rule::text("RESUMED-AGAIN").when_last_user_contains("again"),
        Rule::text("RESUMED-OK").when_last_user_contains("next"),
        after_launch.when_tool_result_contains("Started background agent"),
        fan_out.when_tool_result(false),
    ])
}

/// Waits until `ready` says yes, or fails naming `what` once the deadline has passed.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The session's transcript (`<id>.jsonl`), once there is one.
fn transcript(project: &Project) -> Option<PathBuf> {
    project
        .transcripts()
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
}

fn child_requests(server: &FakeModelServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.body["system"].to_string().contains(CHILD))
        .count()
}

/// The main agent's request whose last message is the prompt `prompt`.
fn resumed_request(server: &FakeModelServer, prompt: &str) -> Value {
    let found: Vec<Value> = server
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| !b["system"].to_string().contains(CHILD))
        .filter(|b| {
            let last = b["messages"].as_array().and_then(|m| m.last()).cloned();
            last.is_some_and(|m| m["content"].to_string().contains(prompt))
        })
        .collect();
    assert_eq!(found.len(), 1, "one request ends with {prompt:?}");
    found.into_iter().next().unwrap()
}

/// The text of every `<task-notification>` block in a request's user messages.
fn notifications(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        })
        .filter(|t| t.contains("<task-notification>"))
        .collect()
}

/// Every tool call in `body` is answered in the message right after it.
fn assert_every_call_answered(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    for (i, message) in messages.iter().enumerate() {
        let calls: Vec<&str> = message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str())
            .collect();
        if calls.is_empty() {
            continue;
        }
        let next = messages
            .get(i + 1)
            .unwrap_or_else(|| panic!("calls {calls:?} end the conversation"));
        let answered: Vec<&str> = next["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        for call in calls {
            assert!(
                answered.contains(&call),
                "call {call} is not answered: {next}"
            );
        }
    }
}

fn element<'a>(text: &'a str, name: &str) -> &'a str {
    let open = format!("<{name}>");
    let start = text.find(&open).unwrap() + open.len();
    let end = start + text[start..].find(&format!("</{name}>")).unwrap();
    &text[start..end]
}

/// Starts `fleet -p` on the fan-out and kills it with SIGKILL once every child's second
/// request is waiting at the server; returns the session id.
fn run_and_kill(project: &Project, server: &FakeModelServer) -> String {
    run_and_kill_when(project, server, &[], || true)
}

/// [`run_and_kill`] with `extra` arguments, killing only once `also` holds too.
fn run_and_kill_when(
    project: &Project,
    server: &FakeModelServer,
    extra: &[&str],
    mut also: impl FnMut() -> bool,
) -> String {
    let out = std::fs::File::create(project.home.join("first.out")).unwrap();
    let mut args = vec![
        "-p",
        "fan out",
        "--output-format",
        "stream-json",
        "--verbose",
    ];
    args.extend_from_slice(extra);
    let mut cmd = project.command(server, &args);
    cmd.stdin(Stdio::null()).stdout(out).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Every task is recorded as launched in the transcript, and every child is mid-call.
    wait_until("the launches in the transcript", || {
        transcript(project).is_some_and(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            text.matches("\"async_launched\"").count() >= AGENTS
        })
    });
    wait_until("every child's second request", || {
        child_requests(server) >= 2 * AGENTS
    });
    wait_until("the main agent's own call to be under way", &mut also);
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed: {status:?}");
    let path = transcript(project).unwrap();
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn json_result(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}\n{}", stdout(out), stderr(out));
    let result: Value = serde_json::from_str(stdout(out).trim()).unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    result
}

#[tokio::test(flavor = "multi_thread")]
async fn background_agents_running_at_a_kill_are_reported_interrupted_once_on_resume() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let server = server(scenario()).await;
    // Waiting blocks this thread; the server answers on the runtime's other threads.
    let id = tokio::task::block_in_place(|| run_and_kill(&project, &server));

    let out = project
        .run(
            &server,
            &["-p", "next", "--resume", &id, "--output-format", "json"],
            "",
        )
        .await;
    assert_eq!(json_result(&out)["result"], "RESUMED-OK");
    let body = resumed_request(&server, "next");
    assert_every_call_answered(&body);
    let notes = notifications(&body);
    assert_eq!(notes.len(), AGENTS, "one notification per task: {notes:#?}");
    let mut tasks: Vec<&str> = notes.iter().map(|n| element(n, "task-id")).collect();
    tasks.sort_unstable();
    tasks.dedup();
    assert_eq!(tasks.len(), AGENTS, "{tasks:?}");
    for note in &notes {
        assert_eq!(element(note, "status"), "killed");
        assert!(
            element(note, "summary").contains("was interrupted"),
            "{note}"
        );
        let result = element(note, "result");
        assert!(result.starts_with("Interrupted:"), "{note}");
        assert!(result.contains(PROGRESS), "what it produced: {note}");
        assert_eq!(element(note, "tool_uses"), "1", "{note}");
        assert!(
            Path::new(element(note, "output-file")).is_file(),
            "its transcript: {note}"
        );
    }
    // The notifications come before the prompt.
    let messages = body["messages"].as_array().unwrap();
    assert!(messages.last().unwrap()["content"]
        .to_string()
        .contains("next"));

    // A second resume sends nothing again: the notifications are in the conversation once.
    let out = project
        .run(
            &server,
            &["-p", "again", "--resume", &id, "--output-format", "json"],
            "",
        )
        .await;
    assert_eq!(json_result(&out)["result"], "RESUMED-AGAIN");
    let again = resumed_request(&server, "again");
    assert_every_call_answered(&again);
    assert_eq!(notifications(&again), notes);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_under_way_at_the_kill_is_answered_as_interrupted_on_resume() {
    let project = Project::new(&[("README.md", "# app\n")]);
    // The main agent's next call runs for good: the kill comes while it runs.
    let command = "echo $$ > sh.pid; exec sleep 600";
    let server = server(scenario_then(Rule::tool_use(
        "Bash",
        json!({"command": command, "timeout": 600000}),
    )))
    .await;
    let pid_file = project.repo.join("sh.pid");
    let id = tokio::task::block_in_place(|| {
        run_and_kill_when(
            &project,
            &server,
            &["--permission-mode", "bypassPermissions"],
            || std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')),
        )
    });
    // The command outlived the process that ran it (nothing can reap it after SIGKILL).
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", pid.trim())).unwrap_or_default();
    if String::from_utf8_lossy(&cmdline).contains("sleep") {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status();
    }

    let out = project
        .run(
            &server,
            &["-p", "next", "--resume", &id, "--output-format", "json"],
            "",
        )
        .await;
    assert_eq!(json_result(&out)["result"], "RESUMED-OK");
    let body = resumed_request(&server, "next");
    assert_every_call_answered(&body);
    let messages = body["messages"].as_array().unwrap();
    let bash = messages
        .iter()
        .position(|m| m["content"].to_string().contains("sleep 600"))
        .unwrap();
    let answer = &messages[bash + 1]["content"][0];
    assert_eq!(answer["type"], "tool_result");
    assert_eq!(answer["is_error"], true);
    assert_eq!(answer["content"], fleet_store::INTERRUPTED_TOOL_RESULT);
    assert_eq!(notifications(&body).len(), AGENTS);
}
