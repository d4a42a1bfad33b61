//! What the dashboard's end-to-end tests share: starting `fleet dashboard` and `fleet -p …
//! --dashboard`, reading their URL, and following a session's event stream as the page does.
#![allow(dead_code)]

use super::common::Project;
use fleet_dashboard::api::{AgentNode, Batch, PermissionRequest, Snapshot};
use fleet_testkit::{FakeModelServer, Scenario};
use futures::StreamExt;
use serde_json::json;
use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// The longest any step may take; a hang fails the test instead of blocking it.
pub const WAIT: Duration = Duration::from_secs(60);

pub const CHILD: &str = "running as a subagent";

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().timeout(WAIT).build().unwrap()
}

/// `http://HOST:PORT` of a dashboard URL.
pub fn origin_of(url: &str) -> String {
    url.split("/?token=").next().unwrap().to_string()
}

pub fn token_of(url: &str) -> String {
    url.split("?token=").nth(1).unwrap().trim().to_string()
}

/// `fleet dashboard --no-open …` running, its first stdout line read.
pub async fn start_dashboard(project: &Project, extra: &[&str]) -> (Child, String) {
    let mut args = vec!["--no-open"];
    args.extend_from_slice(extra);
    start_dashboard_with(project, &args, &[]).await
}

/// `fleet dashboard args…` running with `env` added, its first stdout line read.
pub async fn start_dashboard_with(
    project: &Project,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, String) {
    let server = super::common::server(Scenario::new()).await;
    let mut all = vec!["dashboard"];
    all.extend_from_slice(args);
    let mut cmd = Command::from(project.command(&server, &all));
    cmd.envs(env.iter().copied());
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .expect("the URL within the wait")
        .unwrap()
        .expect("a first line");
    (child, first)
}

/// Stops a server with SIGTERM; its exit status and stderr.
pub async fn terminate(mut child: Child) -> (std::process::ExitStatus, String) {
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("it stops on SIGTERM")
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .await
        .unwrap();
    (status, err)
}

pub struct Run {
    pub child: Child,
    pub url: String,
}

pub fn user_line(text: &str) -> String {
    format!(
        "{}\n",
        json!({"type": "user", "message": {"role": "user", "content": text}})
    )
}

pub async fn user(run: &mut Run, text: &str) {
    let stdin = run.child.stdin.as_mut().unwrap();
    stdin.write_all(user_line(text).as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
}

impl Run {
    pub async fn start(project: &Project, server: &FakeModelServer, args: &[&str]) -> Self {
        Self::start_with(project, server, args, "").await
    }

    /// Starts the run with `input` written on its stdin (kept open).
    pub async fn start_with(
        project: &Project,
        server: &FakeModelServer,
        args: &[&str],
        input: &str,
    ) -> Self {
        let mut cmd = Command::from(project.command(server, args));
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(input.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = tokio::time::timeout(WAIT, async {
            while let Some(line) = stderr.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("fleet: dashboard: ") {
                    return url.to_string();
                }
            }
            panic!("stderr ended without the dashboard's URL");
        })
        .await
        .expect("the URL on stderr within the wait");
        tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
        Self { child, url }
    }

    pub fn api(&self, path: &str) -> String {
        format!(
            "{}{path}?token={}",
            origin_of(&self.url),
            token_of(&self.url)
        )
    }

    /// stdout to the end, once the run is over.
    pub async fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.child.stdin.take());
        let mut out = String::new();
        let mut stdout = self.child.stdout.take().unwrap();
        tokio::time::timeout(WAIT, stdout.read_to_string(&mut out))
            .await
            .expect("the run ends")
            .unwrap();
        let status = tokio::time::timeout(WAIT, self.child.wait()).await.unwrap();
        (status.unwrap(), out)
    }
}

/// The agents of a session as its event stream draws them: the snapshot, then each batch.
pub struct Tree {
    pub agents: HashMap<String, AgentNode>,
    pub batches: usize,
    /// The permission questions waiting now.
    pub pending: Vec<PermissionRequest>,
}

/// The session's event stream, subscribed (the server subscribes before it answers).
pub async fn connect(url: &str) -> reqwest::Response {
    // A stream has no end to wait for: only its silence is bounded (by `follow`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let streaming = reqwest::Client::builder().build().unwrap();
    let response = tokio::time::timeout(WAIT, streaming.get(url).send())
        .await
        .expect("the stream answers")
        .unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response
}

/// Follows the session's stream until `done` holds for the tree it has drawn.
pub async fn follow(response: reqwest::Response, done: impl Fn(&Tree) -> bool) -> Tree {
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let mut tree = Tree {
        agents: HashMap::new(),
        batches: 0,
        pending: Vec::new(),
    };
    let step = async {
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                let (mut event, mut data) = ("", String::new());
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                let agents = match event {
                    "snapshot" => {
                        let snapshot: Snapshot = serde_json::from_str(&data).unwrap();
                        tree.agents.clear();
                        tree.pending = snapshot.pending_permissions;
                        snapshot.agents
                    }
                    "batch" => {
                        tree.batches += 1;
                        let batch: Batch = serde_json::from_str(&data).unwrap();
                        if let Some(pending) = batch.pending_permissions {
                            tree.pending = pending;
                        }
                        batch.agents
                    }
                    _ => Vec::new(),
                };
                for agent in agents {
                    tree.agents.insert(agent.id.clone(), agent);
                }
                if done(&tree) {
                    return;
                }
            }
            let chunk = stream.next().await.expect("the stream goes on").unwrap();
            buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(WAIT, step)
        .await
        .unwrap_or_else(|_| panic!("the stream never showed it; drawn: {:#?}", tree.agents));
    tree
}

/// The data of the first event named `name` on a stream.
pub async fn first_event(response: reqwest::Response, name: &str) -> String {
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let found = async {
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                let (mut event, mut data) = ("", String::new());
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if event == name {
                    return data;
                }
            }
            let chunk = stream.next().await.expect("the stream goes on").unwrap();
            buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(WAIT, found)
        .await
        .unwrap_or_else(|_| panic!("no {name} event within {WAIT:?}"))
}
