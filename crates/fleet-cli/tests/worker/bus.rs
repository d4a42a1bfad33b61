//! The test side of the bus and the worker processes: publish jobs and controls as a caller
//! would, read records and events back, start and `kill -9` `fleet worker`s, and find the
//! processes a job started.
#![allow(dead_code, clippy::unwrap_used)]

use crate::common::Project;
use fleet_remote::{names, Broker, Control, Job, TaskRecord, WorkerRecord};
use fleet_testkit::{FakeModelServer, NatsServer};
use futures::StreamExt;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::time::Instant;

/// How long a test waits for anything; a hang fails with what was seen.
const WAIT: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(50);
/// Short, so a killed worker's job comes back within seconds (every process uses it).
const ACK_WAIT_MS: &str = "2000";

pub use crate::cluster::jobs::agent_job;

pub struct Bus {
    pub broker: Broker,
}

/// The key the test signs its jobs with, which every worker started here trusts (in memory
/// only: no test touches the user's own key).
pub fn caller_key() -> std::sync::Arc<fleet_remote::signing::UserKey> {
    static KEY: std::sync::OnceLock<std::sync::Arc<fleet_remote::signing::UserKey>> =
        std::sync::OnceLock::new();
    KEY.get_or_init(|| std::sync::Arc::new(fleet_remote::signing::UserKey::generate("test caller")))
        .clone()
}

impl Bus {
    pub async fn connect(nats: &NatsServer) -> Self {
        // Whoever connects first makes the consumer, with this ack wait.
        std::env::set_var("FLEET_REMOTE_ACK_WAIT_MS", ACK_WAIT_MS);
        Self {
            broker: Broker::connect(&nats.url()).await.unwrap(),
        }
    }

    /// Records the task as queued and puts the job on the queue.
    pub async fn publish(&self, job: &Job) {
        let record = TaskRecord {
            task_id: job.task_id.clone(),
            kind: job.kind,
            description: job.description.clone(),
            state: fleet_remote::TaskState::Queued,
            worker: None,
            attempt: 0,
            plan: None,
            result: None,
            branch: None,
            usage: Default::default(),
            events: 0,
            queued_ms: job.queued_ms,
            started_ms: None,
            ended_ms: None,
            updated_ms: fleet_remote::now_ms(),
            origin: job.origin.clone(),
        };
        let bytes = serde_json::to_vec(&record).unwrap();
        self.broker
            .tasks
            .put(&job.task_id, bytes.into())
            .await
            .unwrap();
        let payload = fleet_remote::signing::sign(job, &caller_key()).unwrap();
        self.broker
            .js
            .publish(names::JOBS_SUBJECT, payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }

    pub async fn control(&self, task_id: &str, control: &Control) {
        let payload = fleet_remote::signing::sign_control(task_id, control, &caller_key()).unwrap();
        self.broker
            .js
            .publish(names::control_subject(task_id), payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }

    pub async fn record(&self, task_id: &str) -> Option<TaskRecord> {
        let bytes = self.broker.tasks.get(task_id).await.unwrap()?;
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    /// Waits until the task's record satisfies `done`.
    pub async fn wait(
        &self,
        task_id: &str,
        done: impl Fn(&TaskRecord) -> bool,
        workers: &Workers,
    ) -> TaskRecord {
        let deadline = Instant::now() + WAIT;
        loop {
            let record = self.record(task_id).await;
            if let Some(record) = record.as_ref().filter(|r| done(r)) {
                return record.clone();
            }
            assert!(
                Instant::now() < deadline,
                "task {task_id} did not get there; record: {record:#?}\nworkers:\n{}",
                workers.logs()
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until `n` workers have a heartbeat entry; their records.
    pub async fn wait_workers(&self, n: usize) -> Vec<WorkerRecord> {
        let deadline = Instant::now() + WAIT;
        loop {
            let mut found = Vec::new();
            let mut keys = self.broker.workers.keys().await.unwrap();
            while let Some(Ok(key)) = keys.next().await {
                if let Ok(Some(bytes)) = self.broker.workers.get(&key).await {
                    found.push(serde_json::from_slice::<WorkerRecord>(&bytes).unwrap());
                }
            }
            if found.len() >= n {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "{n} workers never beat: {found:?}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// The task's events (attempt, line) from the stream, once its `ended` one is there.
    pub async fn events(&self, task_id: &str) -> Vec<(u32, Value)> {
        let subject = names::events_subject(task_id);
        let deadline = Instant::now() + WAIT;
        loop {
            let mut stream = self
                .broker
                .js
                .get_stream(names::EVENTS_STREAM)
                .await
                .unwrap();
            let last = stream.info().await.unwrap().state.last_sequence;
            let mut events = Vec::new();
            for seq in 1..=last {
                let message = match stream.get_raw_message(seq).await {
                    Ok(message) => message,
                    Err(err) => {
                        eprintln!("seq {seq}: {err}");
                        continue;
                    }
                };
                if message.subject.as_str() != subject {
                    continue;
                }
                let attempt = message
                    .headers
                    .get(names::ATTEMPT_HEADER)
                    .and_then(|v| v.as_str().parse().ok())
                    .unwrap();
                events.push((attempt, serde_json::from_slice(&message.payload).unwrap()));
            }
            let ended = events.last().is_some_and(|(_, l): &(u32, Value)| {
                l["type"] == "fleet_remote" && l["event"] == "ended"
            });
            if ended {
                return events;
            }
            assert!(
                Instant::now() < deadline,
                "no ended event for {task_id}: {events:#?}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until processes with the argument `arg` run; their ids.
    pub async fn wait_for_pids(&self, arg: &str, workers: &Workers) -> Vec<i32> {
        let deadline = Instant::now() + WAIT;
        loop {
            let pids = pids_with_arg(arg);
            if !pids.is_empty() {
                return pids;
            }
            assert!(
                Instant::now() < deadline,
                "no process with {arg:?}; workers:\n{}",
                workers.logs()
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until none of `pids` runs.
    pub async fn wait_gone(&self, pids: &[i32]) {
        let deadline = Instant::now() + WAIT;
        while pids.iter().any(|pid| running(*pid)) {
            assert!(Instant::now() < deadline, "{pids:?} still run");
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Whether `pid` runs (a zombie waiting for its parent does not count).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The running processes one of whose arguments is exactly `arg`.
pub fn pids_with_arg(arg: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()) && running(pid) {
            pids.push(pid);
        }
    }
    pids
}

/// `fleet worker` processes of one test, pointed at the fake model, stopped when dropped.
pub struct Workers {
    project: Project,
    url: String,
    model_url: String,
    children: Vec<Child>,
    /// Process groups a killed worker left behind (its jobs' processes), killed at the end.
    orphans: Vec<i32>,
}

impl Workers {
    pub fn new(nats: &NatsServer, fake: &FakeModelServer) -> Self {
        Self {
            project: Project::new(&[("README.md", "# w\n")]),
            url: nats.url(),
            model_url: fake.base_url(),
            children: Vec::new(),
            orphans: Vec::new(),
        }
    }

    pub fn start(&mut self, slots: u32) {
        self.start_with(slots, &[]);
    }

    pub fn start_with(&mut self, slots: u32, labels: &[&str]) {
        self.start_with_args(slots, labels, &[]);
    }

    /// A worker with `extra` arguments too (`--max-mode bypassPermissions`).
    pub fn start_with_args(&mut self, slots: u32, labels: &[&str], extra: &[&str]) {
        let n = self.children.len();
        let log = std::fs::File::create(self.project.home.join(format!("worker-{n}.log"))).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
        cmd.args(["worker", "--nats", &self.url, "--slots", &slots.to_string()]);
        cmd.args(["--trust-key", &caller_key().public_key().to_string()]);
        cmd.args(extra);
        if !labels.is_empty() {
            cmd.args(["--labels", &labels.join(",")]);
        }
        // As `Project::environment`: its own HOME, no developer credentials, the fake model.
        cmd.current_dir(&self.project.repo)
            .env("HOME", &self.project.home)
            .env("FLEET_HOME", &self.project.fleet_home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        for var in crate::common::SCRUBBED {
            cmd.env_remove(var);
        }
        cmd.env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &self.model_url)
            .env("FLEET_REMOTE_ACK_WAIT_MS", ACK_WAIT_MS)
            .env("FLEET_REMOTE_HEARTBEAT_MS", "200")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        self.children.push(cmd.spawn().unwrap());
    }

    /// The id worker `i` goes by (`<host>-<pid>`).
    pub fn id(&self, i: usize) -> String {
        format!(
            "{}-{}",
            fleet_remote::worker::host_name(),
            self.children[i].id()
        )
    }

    /// `kill -9` of worker `i`. Its jobs' processes should die with it; the groups are noted so
    /// that any that did not are killed when the test ends.
    pub fn kill(&mut self, i: usize) {
        let pid = self.children[i].id() as i32;
        self.orphans.extend(tree_groups(pid));
        self.children[i].kill().unwrap();
        self.children[i].wait().unwrap();
    }

    /// SIGTERM to worker `i`, and its exit status.
    pub fn terminate(&mut self, i: usize) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(self.children[i].id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        fleet_testkit::wait_child(&mut self.children[i], WAIT, "the worker to exit on SIGTERM")
    }

    /// The folder of the project the workers run in (a git repository).
    pub fn repo(&self) -> &std::path::Path {
        &self.project.repo
    }

    /// Whether worker `i` still runs.
    pub fn alive(&mut self, i: usize) -> bool {
        matches!(self.children[i].try_wait(), Ok(None))
    }

    pub fn logs(&self) -> String {
        (0..self.children.len())
            .map(|n| {
                let path = self.project.home.join(format!("worker-{n}.log"));
                format!(
                    "--- worker {n}\n{}",
                    std::fs::read_to_string(path).unwrap_or_default()
                )
            })
            .collect()
    }
}

/// The process groups under `pid` (each job's `fleet` leads one, its Bash commands more).
fn tree_groups(pid: i32) -> Vec<i32> {
    let table: Vec<(i32, i32, i32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let p = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
            Some((
                p,
                fields.get(1)?.parse().ok()?,
                fields.get(2)?.parse().ok()?,
            ))
        })
        .collect();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        for (p, ppid, _) in &table {
            if *ppid == parent && !tree.contains(p) {
                tree.push(*p);
            }
        }
        i += 1;
    }
    let mut groups: Vec<i32> = table
        .iter()
        .filter(|(p, _, _)| *p != pid && tree.contains(p))
        .map(|(_, _, g)| *g)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

impl Drop for Workers {
    fn drop(&mut self) {
        use nix::sys::signal::{kill, killpg, Signal};
        use nix::unistd::Pid;
        // SIGTERM: a worker gives its jobs back and kills their processes, then exits.
        for child in &mut self.children {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
        }
        for child in &mut self.children {
            fleet_testkit::reap(child, WAIT, "a worker sent SIGTERM");
        }
        for group in &self.orphans {
            let _ = killpg(Pid::from_raw(*group), Signal::SIGKILL);
        }
    }
}
