//! ExitPlanMode for the main agent of a session started in plan mode, driven as an SDK host
//! (and a remote Ultraplan worker) drives it: `-p` on stream-json with
//! `--permission-prompt-tool stdio`, the plan arriving as a `can_use_tool` question.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{server, Project};
use fleet_testkit::{FakeModelServer, Rule, Scenario};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const WAIT: Duration = Duration::from_secs(30);

/// fleet on stream-json, as an SDK host sees it.
struct Host {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Host {
    fn start(project: &Project, server: &FakeModelServer, extra: &[&str]) -> Self {
        let mut args = vec![
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--permission-prompt-tool",
            "stdio",
        ];
        args.extend_from_slice(extra);
        let mut child = tokio::process::Command::from(project.command(server, &args))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Self {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            _child: child,
        }
    }

    async fn send(&mut self, line: Value) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Initializes, sends `prompt`, answers every `can_use_tool` with `answer` and returns
    /// the questions asked and the result line.
    async fn run(&mut self, prompt: &str, answer: impl Fn(&Value) -> Value) -> (Vec<Value>, Value) {
        self.send(json!({"type": "control_request", "request_id": "init",
            "request": {"subtype": "initialize"}}))
            .await;
        self.send(json!({"type": "user", "message": {"role": "user", "content": prompt}}))
            .await;
        let mut asked = Vec::new();
        loop {
            let line = tokio::time::timeout(WAIT, self.stdout.next_line())
                .await
                .expect("a line in time")
                .unwrap()
                .expect("fleet kept writing until its result");
            let line: Value = serde_json::from_str(&line).unwrap();
            if line["type"] == "result" {
                return (asked, line);
            }
            if line["type"] != "control_request" {
                continue;
            }
            let request = &line["request"];
            let body = if request["subtype"] == "can_use_tool" {
                asked.push(request.clone());
                answer(request)
            } else {
                json!({})
            };
            self.send(json!({"type": "control_response", "response": {
                "subtype": "success", "request_id": line["request_id"], "response": body}}))
                .await;
        }
    }
}

fn plans_and_tools(asked: &[Value]) -> Vec<String> {
    asked
        .iter()
        .map(|q| match q["input"]["plan"].as_str() {
            Some(plan) => format!("{}: {plan}", q["tool_name"].as_str().unwrap()),
            None => q["tool_name"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// The model's part: plan A, then (told what is missing) plan B, then once approved a write,
/// then done.
fn planner(done: &str) -> Scenario {
    Scenario::with_rules([
        Rule::tool_use("Write", json!({"file_path": done, "content": "done\n"}))
            .when_tool_result_contains("User has approved your plan"),
        Rule::tool_use(
            "ExitPlanMode",
            json!({"plan": "PLAN-B: write done.txt, with tests"}),
        )
        .when_tool_result_contains("needs tests"),
        Rule::text("FINISHED").when_tool_result(true),
        Rule::tool_use("ExitPlanMode", json!({"plan": "PLAN-A: write done.txt"})),
    ])
}

#[tokio::test]
async fn a_refused_plan_returns_the_feedback_and_an_approved_one_leaves_plan_mode() {
    let project = Project::new(&[]);
    let done = project.path("done.txt");
    let server = server(planner(&done)).await;
    let mut host = Host::start(&project, &server, &["--permission-mode", "plan"]);
    let (asked, result) = host
        .run("plan the change", |q| {
            if q["input"]["plan"]
                .as_str()
                .is_some_and(|p| p.starts_with("PLAN-A"))
            {
                json!({"behavior": "deny", "message": "This plan needs tests."})
            } else {
                json!({"behavior": "allow"})
            }
        })
        .await;
    assert_eq!(result["result"], "FINISHED", "{result}");
    // Plan mode would have refused the write outright; default mode asks about it.
    assert_eq!(
        plans_and_tools(&asked),
        vec![
            "ExitPlanMode: PLAN-A: write done.txt",
            "ExitPlanMode: PLAN-B: write done.txt, with tests",
            "Write",
        ]
    );
    assert_eq!(project.read("done.txt"), "done\n");
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0]["tool_name"], "ExitPlanMode");
    // The model read the person's feedback as the call's error.
    let requests = server.requests();
    let feedback = requests
        .iter()
        .find(|r| r.body.to_string().contains("This plan needs tests."))
        .expect("the feedback reached the model");
    let last = feedback.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    let block = &last["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["is_error"], true);
    // The question says why it was asked.
    assert!(
        asked[0]["decision_reason"]
            .as_str()
            .unwrap()
            .contains("ExitPlanMode"),
        "{}",
        asked[0]
    );
}

#[tokio::test]
async fn a_mode_chosen_in_the_answer_stands() {
    let project = Project::new(&[]);
    let done = project.path("done.txt");
    let server = server(planner(&done)).await;
    let mut host = Host::start(&project, &server, &["--permission-mode", "plan"]);
    let (asked, result) = host
        .run("plan the change", |_| {
            json!({"behavior": "allow", "updatedPermissions": [
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]})
        })
        .await;
    assert_eq!(result["result"], "FINISHED", "{result}");
    // acceptEdits writes in the project without asking.
    assert_eq!(
        plans_and_tools(&asked),
        vec!["ExitPlanMode: PLAN-A: write done.txt"]
    );
    assert_eq!(project.read("done.txt"), "done\n");
}

#[tokio::test]
async fn only_a_session_started_in_plan_mode_has_it() {
    let project = Project::new(&[]);
    let server = server(Scenario::with_rules([Rule::text("hello")])).await;
    let tool_names = |server: &FakeModelServer| -> Vec<String> {
        let request = server.last_request().unwrap();
        request.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut host = Host::start(&project, &server, &[]);
    host.run("hi", |_| json!({"behavior": "allow"})).await;
    assert!(!tool_names(&server).contains(&"ExitPlanMode".to_string()));
    let mut host = Host::start(&project, &server, &["--permission-mode", "plan"]);
    host.run("hi", |_| json!({"behavior": "allow"})).await;
    assert!(tool_names(&server).contains(&"ExitPlanMode".to_string()));
}
