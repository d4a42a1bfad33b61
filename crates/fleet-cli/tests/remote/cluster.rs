//! A small remote cluster for whole-binary tests: a real `nats-server` with JetStream, the
//! fake model server, and real `fleet worker` processes, each with its own home, pointed at
//! both, trusting the test's signing key (and any lead's given to `trust_home`). Workers are
//! killed when the cluster is dropped.
#![allow(dead_code, clippy::unwrap_used)]

#[path = "jobs.rs"]
pub mod jobs;
pub use jobs::agent_job as job;

use fleet_remote::signing::UserKey;
use fleet_remote::{Remote, TaskRecord};
use fleet_testkit::{FakeModelServer, NatsServer};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a job's delivery lasts without a worker renewing it: short, so a worker killed
/// with -9 loses its job within seconds.
pub const ACK_WAIT_MS: &str = "2000";

pub struct Cluster {
    pub nats: NatsServer,
    pub workers: Vec<Worker>,
    root: tempfile::TempDir,
    model_url: String,
    /// The public keys workers started from now on trust (`--trust-key`): the test's own
    /// caller key, and the keys of the fleet homes given to [`Cluster::trust_home`].
    trusted: Vec<String>,
}

/// The key the test process signs its jobs with (in memory only: no test touches the
/// user's own key).
pub fn caller_key() -> std::sync::Arc<UserKey> {
    static KEY: std::sync::OnceLock<std::sync::Arc<UserKey>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| std::sync::Arc::new(UserKey::generate("test caller")))
        .clone()
}

pub struct Worker {
    pub child: Child,
    pub home: PathBuf,
    pub log: PathBuf,
}

impl Worker {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the worker printed on stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Cluster {
    /// A broker and no workers yet; `None` when nats-server cannot be had (the test skips).
    pub fn start(model: &FakeModelServer) -> Option<Self> {
        let nats = NatsServer::start()?;
        Some(Self {
            nats,
            workers: Vec::new(),
            root: tempfile::tempdir().unwrap(),
            model_url: model.base_url(),
            trusted: vec![caller_key().public_key().to_string()],
        })
    }

    /// Workers started after this trust the jobs of a `fleet` whose home is `fleet_home`
    /// (a lead session's), whose key is made now.
    pub fn trust_home(&mut self, fleet_home: &std::path::Path) {
        let key = UserKey::load_or_create(fleet_home).unwrap();
        self.trusted.push(key.public_key().to_string());
    }

    pub fn url(&self) -> String {
        self.nats.url()
    }

    /// Starts a `fleet worker` with `slots` and waits until its heartbeat is on the broker.
    pub async fn add_worker(&mut self, slots: u32, labels: &[&str]) -> usize {
        let extra: Vec<String> = if labels.is_empty() {
            Vec::new()
        } else {
            vec!["--labels".into(), labels.join(",")]
        };
        self.add_worker_with(slots, &extra, true).await
    }

    /// Starts a `fleet worker` with `slots` and `extra` arguments, trusting the cluster's keys
    /// when `trust` (else none: it falls back to its own home's key), and waits until its
    /// heartbeat is on the broker. Its fleet home is `<home>/fleet-home`.
    pub async fn add_worker_with(&mut self, slots: u32, extra: &[String], trust: bool) -> usize {
        let index = self.workers.len();
        let home = self.root.path().join(format!("worker-{index}"));
        std::fs::create_dir_all(&home).unwrap();
        let log = home.join("worker.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fleet"));
        cmd.args([
            "worker",
            "--nats",
            &self.url(),
            "--slots",
            &slots.to_string(),
        ]);
        cmd.args(extra);
        if trust {
            for key in &self.trusted {
                cmd.args(["--trust-key", key]);
            }
        }
        for var in super::common::SCRUBBED {
            cmd.env_remove(var);
        }
        let child = cmd
            .current_dir(&home)
            .env("HOME", &home)
            .env("FLEET_HOME", home.join("fleet-home"))
            .env("TMPDIR", &home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("ANTHROPIC_API_KEY", "sk-worker")
            .env("ANTHROPIC_BASE_URL", &self.model_url)
            .env("FLEET_MAX_RETRIES", "2")
            .env("FLEET_REMOTE_ACK_WAIT_MS", ACK_WAIT_MS)
            .env("FLEET_REMOTE_HEARTBEAT_MS", "200")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let pid = child.id();
        self.workers.push(Worker { child, home, log });
        let remote = self.remote().await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let status = remote.status().await.unwrap();
            if status.workers.iter().any(|w| w.pid == pid) {
                return index;
            }
            assert!(
                Instant::now() < deadline,
                "worker {index} did not come up: {}",
                self.workers[index].log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The id worker `index` reports itself under.
    pub async fn worker_id(&self, index: usize) -> String {
        let pid = self.workers[index].pid();
        let status = self.remote().await.status().await.unwrap();
        status
            .workers
            .into_iter()
            .find(|w| w.pid == pid)
            .map(|w| w.id)
            .unwrap_or_else(|| panic!("worker {index} has no heartbeat"))
    }

    /// `kill -9` of worker `index`.
    pub fn kill_worker(&mut self, index: usize) {
        let worker = &mut self.workers[index];
        let _ = worker.child.kill();
        let _ = worker.child.wait();
    }

    /// A caller signing with [`caller_key`].
    pub async fn remote(&self) -> Remote {
        Remote::connect(&self.url())
            .await
            .unwrap()
            .with_signer(caller_key())
    }

    /// Every worker's log, for failure messages.
    pub fn logs(&self) -> String {
        self.workers
            .iter()
            .enumerate()
            .map(|(i, w)| format!("--- worker {i}\n{}", w.log()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            let _ = worker.child.kill();
            let _ = worker.child.wait();
        }
    }
}

/// Waits until `task` has a record for which `done` holds; panics with the last record after
/// a minute (only there so a broken build fails instead of hanging).
pub async fn wait_record(
    remote: &Remote,
    task: &str,
    mut done: impl FnMut(&TaskRecord) -> bool,
) -> TaskRecord {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = None;
    loop {
        if let Ok(Some(record)) = remote.record(task).await {
            if done(&record) {
                return record;
            }
            last = Some(record);
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting on task {task}; last record: {last:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
