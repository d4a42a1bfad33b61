//! Remote agents end to end: a real nats-server with JetStream, real `fleet worker`
//! processes and the fake model server. A lead's Agent call with `isolation: "remote"` runs on
//! a worker and its branch arrives in the lead's repository; workers share a batch of jobs,
//! each run once; a broker restart loses nothing; TaskStop reaches the worker and kills the
//! job's processes.
#![allow(clippy::unwrap_used)]

use crate::cluster;
use crate::common;

use cluster::{job, wait_record, Cluster};
use common::{json_lines, server, stderr, stdout, Project};
use fleet_remote::{names, TaskState};
use fleet_testkit::{Rule, Scenario};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The lead asks for a remote agent that writes a file; the remote agent's answer and the
/// lead's reaction to the notification.
fn edit_scenario() -> Scenario {
    Scenario::with_rules([
        // The job's folder is the worker's own: a relative path in Bash reaches it.
        Rule::tool_use(
            "Bash",
            json!({"command": "printf 'hello from a worker' > hello.txt", "description": "write"}),
        )
        .when_marker("[case:remote-edit]")
        .when_tool_result(false),
        Rule::text("I wrote hello.txt.").when_marker("[case:remote-edit]"),
        Rule::text("The remote agent is done.")
            .when_marker("[case:lead]")
            .when_last_user_contains("<task-notification>"),
        Rule::text("Launched; I will wait for it.")
            .when_marker("[case:lead]")
            .when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({
                "description": "edit on a worker",
                "prompt": "[case:remote-edit] Write hello.txt.",
                "subagent_type": "general-purpose",
                "isolation": "remote"
            }),
        )
        .when_marker("[case:lead]"),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agent_edits_a_file_and_its_branch_arrives_locally() {
    let model = server(edit_scenario()).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    let project = Project::new(&[("README.md", "# app\n")]);
    // The lead signs its jobs with the key in its own home: the worker must trust it.
    cluster.trust_home(&project.fleet_home);
    cluster.add_worker(1, &[]).await;
    // Uncommitted work travels with the job.
    std::fs::write(project.repo.join("notes.txt"), "not committed").unwrap();
    let url = cluster.url();
    let out = project
        .run_with_env(
            &model,
            &[
                "-p",
                "[case:lead] Edit on a worker.",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash(printf *)",
            ],
            &[("FLEET_NATS_URL", &url)],
        )
        .await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    let launched = tool_result_text(&lines, "remote_launched");
    assert!(launched.is_some(), "no remote_launched result: {lines:#?}");
    let notification = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "task_notification")
        .unwrap_or_else(|| panic!("no task notification: {lines:#?}\n{}", cluster.logs()));
    assert_eq!(notification["status"], "completed", "{notification:#}");
    let task_id = notification["task_id"].as_str().unwrap();
    let branch = format!("fleet/remote-{}", &task_id[1..9]);
    let summary = notification.to_string();
    assert!(
        summary.contains(&branch),
        "the branch is reported: {summary}"
    );
    assert_eq!(
        project.git(&["show", &format!("{branch}:hello.txt")]),
        "hello from a worker"
    );
    assert_eq!(
        project.git(&["show", &format!("{branch}:notes.txt")]),
        "not committed",
        "the job started from the caller's uncommitted state"
    );
    assert_eq!(project.git(&["branch", "--show-current"]).trim(), "main");
    assert!(
        !project.repo.join("hello.txt").exists(),
        "the caller's files are not touched"
    );
    // Credentials never travel: neither the caller's key nor the worker's is on the bus.
    let remote = cluster.remote().await;
    let mut seen = serde_json::to_string(&remote.record(task_id).await.unwrap()).unwrap();
    for event in remote.logs(task_id).await.unwrap() {
        seen.push_str(&event.line.to_string());
    }
    assert!(seen.len() > 1000, "the log holds the job's story: {seen}");
    for key in ["sk-test", "sk-worker"] {
        assert!(!seen.contains(key), "{key} is on the bus: {seen}");
    }
}

fn tool_result_text(lines: &[Value], needle: &str) -> Option<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .map(|l| l.to_string())
        .find(|text| text.contains(needle))
}

#[tokio::test(flavor = "multi_thread")]
async fn three_workers_share_300_jobs_and_each_job_runs_once() {
    let model = server(Scenario::with_rules([Rule::text("done")])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    for _ in 0..3 {
        cluster.add_worker(2, &[]).await;
    }
    let remote = cluster.remote().await;
    let mut ids = Vec::new();
    for i in 0..300 {
        ids.push(
            remote
                .submit(job(&format!("job {i}")))
                .await
                .unwrap()
                .task_id,
        );
    }
    let mut by_worker: HashMap<String, usize> = HashMap::new();
    for id in &ids {
        let record = wait_record(&remote, id, |r| r.state.is_terminal()).await;
        assert_eq!(record.state, TaskState::Completed, "{record:#?}");
        assert_eq!(record.attempt, 1, "run once: {record:#?}");
        assert_eq!(record.result.as_deref(), Some("done"));
        *by_worker.entry(record.worker.clone().unwrap()).or_default() += 1;
    }
    assert_eq!(by_worker.len(), 3, "every worker took jobs: {by_worker:?}");
    // Each job's events hold one start.
    for id in ids.iter().take(20) {
        let starts = remote
            .logs(id)
            .await
            .unwrap()
            .iter()
            .filter(|e| e.line["type"] == "fleet_remote" && e.line["event"] == "started")
            .count();
        assert_eq!(starts, 1, "task {id}");
    }
    // Readers of finished jobs let go of their consumers at once (JetStream would keep them
    // 30 s, and a busy broker runs into its consumer limit).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut left = 0;
        for name in [names::CONTROL_STREAM, names::EVENTS_STREAM] {
            let mut stream = remote.broker().js.get_stream(name).await.unwrap();
            left += stream.info().await.unwrap().state.consumer_count;
        }
        if left == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{left} consumers left behind"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broker_restart_mid_run_loses_no_job() {
    let model = server(Scenario::with_rules([Rule::text("done").delay_ms(300)])).await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    cluster.add_worker(2, &[]).await;
    cluster.add_worker(2, &[]).await;
    let remote = cluster.remote().await;
    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(
            remote
                .submit(job(&format!("job {i}")))
                .await
                .unwrap()
                .task_id,
        );
    }
    wait_record(&remote, &ids[0], |r| r.state == TaskState::Running).await;
    cluster.nats.restart();
    // Jobs published while the broker is back are taken too.
    let remote = cluster.remote().await;
    for i in 12..16 {
        ids.push(
            remote
                .submit(job(&format!("job {i}")))
                .await
                .unwrap()
                .task_id,
        );
    }
    for id in &ids {
        let record = wait_record(&remote, id, |r| r.state.is_terminal()).await;
        assert_eq!(
            record.state,
            TaskState::Completed,
            "{record:#?}\n{}",
            cluster.logs()
        );
    }
    // A client that reconnects replays a job's whole story.
    let events = remote.logs(&ids[0]).await.unwrap();
    let kinds: HashSet<String> = events
        .iter()
        .filter(|e| e.line["type"] == "fleet_remote")
        .map(|e| e.line["event"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        kinds.contains("started") && kinds.contains("ended"),
        "{kinds:?}"
    );
}

/// fleet as an SDK host drives it: stream-json in and out, `stop_task` as a control request.
mod host {
    use serde_json::{json, Value};
    use std::time::Duration;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
    use tokio::process::{Child, ChildStdin, ChildStdout};

    pub struct Host {
        _child: Child,
        stdin: ChildStdin,
        stdout: Lines<BufReader<ChildStdout>>,
        pub seen: Vec<Value>,
    }

    impl Host {
        pub fn start(mut cmd: std::process::Command) -> Self {
            let mut child = tokio::process::Command::from({
                cmd.args([
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--input-format",
                    "stream-json",
                ]);
                cmd
            })
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
            let stdin = child.stdin.take().unwrap();
            let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
            Self {
                _child: child,
                stdin,
                stdout,
                seen: Vec::new(),
            }
        }

        pub async fn send(&mut self, line: Value) {
            self.stdin
                .write_all(format!("{line}\n").as_bytes())
                .await
                .unwrap();
            self.stdin.flush().await.unwrap();
        }

        pub async fn user(&mut self, text: &str) {
            self.send(json!({"type": "user", "message": {"role": "user", "content": text}}))
                .await;
        }

        /// Reads lines until one satisfies `want`.
        pub async fn until(&mut self, mut want: impl FnMut(&Value) -> bool) -> Value {
            loop {
                let line = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
                    .await
                    .unwrap_or_else(|_| panic!("no line came; seen: {:#?}", self.seen))
                    .unwrap()
                    .unwrap_or_else(|| panic!("fleet ended; seen: {:#?}", self.seen));
                let value: Value = serde_json::from_str(&line).unwrap();
                self.seen.push(value.clone());
                if want(&value) {
                    return value;
                }
            }
        }
    }
}

/// A `sleep` with an argument no other process has, so the test can find it by its whole
/// command line (`pgrep -xf`: the lead's and the job's own command lines name it too, inside
/// their `--allowedTools`).
const SLEEP: &str = "sleep 47.25";

fn pids_of(pattern: &str) -> Vec<u32> {
    let out = std::process::Command::new("pgrep")
        .args(["-xf", pattern])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn task_stop_of_a_remote_agent_kills_its_sleep_on_the_worker() {
    let model = server(Scenario::with_rules([
        Rule::tool_use("Bash", json!({"command": SLEEP, "description": "wait"}))
            .when_marker("[case:remote-sleep]")
            .when_tool_result(false),
        Rule::text("slept").when_marker("[case:remote-sleep]"),
        Rule::text("Stopped, as asked.")
            .when_marker("[case:lead]")
            .when_last_user_contains("<task-notification>"),
        Rule::text("It runs remotely.")
            .when_marker("[case:lead]")
            .when_tool_result(true),
        Rule::tool_use(
            "Agent",
            json!({
                "description": "sleep on a worker",
                "prompt": "[case:remote-sleep] Sleep.",
                "subagent_type": "general-purpose",
                "isolation": "remote"
            }),
        )
        .when_marker("[case:lead]"),
    ]))
    .await;
    let Some(mut cluster) = Cluster::start(&model) else {
        return;
    };
    let project = Project::new(&[("README.md", "# app\n")]);
    // The lead signs its jobs with the key in its own home: the worker must trust it.
    cluster.trust_home(&project.fleet_home);
    cluster.add_worker(1, &[]).await;
    let mut cmd = project.command(&model, &["--allowedTools", &format!("Bash({SLEEP})")]);
    cmd.env("FLEET_NATS_URL", cluster.url());
    let mut lead = host::Host::start(cmd);
    lead.user("[case:lead] Sleep on a worker.").await;
    let started = lead
        .until(|l| l["type"] == "system" && l["subtype"] == "task_started")
        .await;
    let task_id = started["task_id"].as_str().unwrap().to_string();
    assert!(task_id.starts_with('r'), "{started:#}");
    // The sleep runs on the worker (a process of the worker's job).
    let remote = cluster.remote().await;
    wait_record(&remote, &task_id, |r| r.state == TaskState::Running).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while pids_of(SLEEP).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the remote sleep never started\n{}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    lead.send(json!({"type": "control_request", "request_id": "stop-1",
                     "request": {"subtype": "stop_task", "task_id": task_id}}))
        .await;
    let notification = lead
        .until(|l| l["type"] == "system" && l["subtype"] == "task_notification")
        .await;
    // stream-json spells a killed task `stopped`, as Claude Code does.
    assert_eq!(notification["status"], "stopped", "{notification:#}");
    let record = wait_record(&remote, &task_id, |r| r.state.is_terminal()).await;
    assert_eq!(record.state, TaskState::Killed, "{record:#?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !pids_of(SLEEP).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the remote sleep outlived TaskStop: {:?}",
            pids_of(SLEEP)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
