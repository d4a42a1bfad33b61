//! `fleet dev soak`: runs fleet, as users run it, over and over, under load and faults, and
//! checks after every run that it kept its two promises — it always ends (with a result or
//! a clear error, within its deadline) and an exit code of 0 means it worked — and that
//! nothing was lost or left behind.
//!
//! Each run is this binary (`std::env::current_exe()`) as a `fleet -p` child process in a
//! fresh temporary git repository and fleet home, against its own `fleet dev fake-model`
//! process (request event log on) scripted for the scenario: fan-outs of working agents,
//! injected faults (529/429/500, dropped streams, SSE errors, slow first tokens, stalls, TCP
//! resets), background agents, a team with mail, an MCP server, and kill -9 at a random
//! moment followed by `--resume`. `--busy N` adds N spinning threads. The invariants are in
//! `checks`; a hang is captured (threads, sockets, the server's side) before it is killed.
//!
//! `--short` is the CI size (a few runs of each at small sizes, ~2–3 minutes, and a bounded
//! `scripts/fuzz.sh 10` when present). See docs/soak.md.

mod checks;
mod child;
mod hang;
mod report;
mod run;
mod scenarios;
#[cfg(test)]
mod tests;

use anyhow::{bail, Context};
use report::{Failure, Report};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct SoakArgs {
    /// The CI size: a few runs of each scenario at small sizes (200 agents), plus a bounded
    /// fuzz pass when scripts/fuzz.sh and cargo-fuzz are there.
    #[arg(long)]
    short: bool,
    /// Run only this scenario (repeatable): fanout, faults, background, team, mcp,
    /// kill-background, kill-fanout.
    #[arg(long = "scenario", value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(scenarios::NAMES))]
    scenarios: Vec<String>,
    /// Runs of each scenario (default: 5 short, 25 full; twice that for the kill scenarios).
    #[arg(long)]
    runs: Option<usize>,
    /// Fan-out sizes instead of the mode's (comma-separated, e.g. 200,2000,10000).
    #[arg(long, value_delimiter = ',')]
    agents: Vec<usize>,
    /// Spin N busy threads for the whole soak (CPU contention).
    #[arg(long, default_value_t = 0)]
    busy: usize,
    /// Seed of the random kill moments (printed, to replay a soak).
    #[arg(long)]
    seed: Option<u64>,
    /// Where the runs' folders go (default: a new folder under the temporary directory).
    /// Failed runs are kept there; good ones are removed unless --keep.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Keep every run's folder, good ones too.
    #[arg(long)]
    keep: bool,
    /// Skip the fuzz pass of --short.
    #[arg(long)]
    no_fuzz: bool,
    /// The fleet binary whose sessions are soaked (default: this one). The fake model
    /// server is always this binary's, so a release build can be soaked by a debug one.
    #[arg(long, value_name = "PATH")]
    fleet: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: SoakArgs) -> anyhow::Result<()> {
    // Every run is a child process; the soak's own thread waits on it.
    tokio::task::spawn_blocking(move || soak(args))
        .await
        .context("the soak thread")?
}

fn soak(args: SoakArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding the fleet binary")?;
    let fleet = match &args.fleet {
        Some(path) => path
            .canonicalize()
            .with_context(|| format!("--fleet {}", path.display()))?,
        None => exe.clone(),
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let mut rng = XorShift::new(seed);
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("fleet-soak-{seed}")),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    raise_file_limit();
    let mut sizes = if args.short {
        scenarios::SHORT
    } else {
        scenarios::FULL
    };
    let agents: &'static [usize] = Box::leak(args.agents.clone().into_boxed_slice());
    if !agents.is_empty() {
        sizes.fanouts = agents;
    }
    // Always in the soak's own order, however they were named.
    let names: Vec<&str> = scenarios::NAMES
        .iter()
        .copied()
        .filter(|n| args.scenarios.is_empty() || args.scenarios.iter().any(|s| s == n))
        .collect();
    eprintln!(
        "soak: {} mode, seed {seed}, {} busy threads, {}, runs in {}",
        if args.short { "short" } else { "full" },
        args.busy,
        fleet.display(),
        out.display()
    );
    let busy = Busy::start(args.busy);
    let started = Instant::now();
    let exe_text = fleet.display().to_string();
    let mut report = Report::new(seed, args.busy, args.short);
    for name in names {
        for spec in scenarios::specs(name, sizes, &exe_text) {
            let runs =
                args.runs
                    .unwrap_or(match (args.short, spec.kill_within_requests.is_some()) {
                        (true, false) => 5,
                        (true, true) => 10,
                        (false, false) if spec.name == "fanout-10000" => 5,
                        (false, false) if spec.name == "fanout-2000" => 10,
                        (false, false) => 25,
                        (false, true) => 50,
                    });
            for i in 1..=runs {
                let dir = out.join(format!("{}-{i}", spec.name));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let dir = dir.canonicalize().unwrap_or(dir);
                let kill = spec.kill_within_requests.map(|n| run::KillPlan {
                    after_requests: 1 + rng.below(n as u64) as usize,
                    jitter: Duration::from_millis(rng.below(scenarios::KILL_JITTER_MS + 1)),
                });
                let result = run::run(&exe, &fleet, &spec, &dir, kill);
                let good = result.problems.is_empty();
                eprintln!(
                    "  {} #{i}: {} in {:.1} s{}",
                    spec.name,
                    if good { "ok" } else { "FAILED" },
                    result.wall.as_secs_f64(),
                    match (result.killed, kill) {
                        (true, Some(k)) => format!(
                            " (killed after request {} + {} ms, resumed)",
                            k.after_requests,
                            k.jitter.as_millis()
                        ),
                        _ => String::new(),
                    }
                );
                for p in &result.problems {
                    eprintln!("      {:?}: {}", p.kind, p.detail);
                }
                report.add(&spec.name, &result);
                if !good {
                    report.failures.push(Failure {
                        scenario: spec.name.clone(),
                        run: i,
                        problems: result.problems.clone(),
                        dir: dir.display().to_string(),
                    });
                } else if !args.keep {
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
    }
    if args.short && args.scenarios.is_empty() && !args.no_fuzz {
        fuzz(&exe, &mut report);
    }
    drop(busy);
    report.total_s = started.elapsed().as_secs_f64();
    report.out = out.display().to_string();
    if args.json {
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        print!("{}", report.table());
    }
    if report.failed() > 0 {
        bail!(
            "{} of {} runs failed ({} hangs, {} silent failures); their folders are in {}",
            report.failed(),
            report.runs(),
            report.count(checks::Kind::Hang),
            report.count(checks::Kind::SilentFailure),
            out.display()
        );
    }
    if !args.keep {
        let _ = std::fs::remove_dir(&out);
    }
    Ok(())
}

/// The bounded fuzz pass of the short soak: `scripts/fuzz.sh 10` when the script and
/// cargo-fuzz are both there; skipped (and said so) otherwise.
fn fuzz(exe: &Path, report: &mut Report) {
    let script = std::env::current_dir()
        .ok()
        .into_iter()
        .chain(exe.parent().map(Path::to_path_buf))
        .flat_map(|start| {
            start
                .ancestors()
                .map(|d| d.join("scripts/fuzz.sh"))
                .collect::<Vec<_>>()
        })
        .find(|p| p.is_file());
    let Some(script) = script else {
        eprintln!("  fuzz: skipped (no scripts/fuzz.sh)");
        return;
    };
    let has_cargo_fuzz = std::process::Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_cargo_fuzz {
        eprintln!("  fuzz: skipped (cargo-fuzz is not installed)");
        return;
    }
    let root = script
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let started = Instant::now();
    let limit = Duration::from_secs(30 * 60);
    let outcome = std::process::Command::new("bash")
        .arg(&script)
        .arg("10")
        .current_dir(&root)
        .spawn()
        .map_err(|e| e.to_string())
        .and_then(|mut child| loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status.success()),
                Ok(None) if started.elapsed() >= limit => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!("still running after {limit:?}"));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(200)),
                Err(e) => break Err(e.to_string()),
            }
        });
    let problems = match outcome {
        Ok(true) => Vec::new(),
        Ok(false) => vec![checks::Problem::new(
            checks::Kind::Failed,
            "scripts/fuzz.sh 10 failed (see its output above)",
        )],
        Err(e) => vec![checks::Problem::new(checks::Kind::Hang, e)],
    };
    let result = run::RunReport {
        wall: started.elapsed(),
        problems: problems.clone(),
        killed: false,
    };
    report.add("fuzz", &result);
    if !problems.is_empty() {
        report.failures.push(Failure {
            scenario: "fuzz".into(),
            run: 1,
            problems,
            dir: root.display().to_string(),
        });
    }
}

/// N threads spinning until dropped.
struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn start(n: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A small seeded generator for the kill moments (replayable with --seed).
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            self.0 % n
        }
    }
}

/// Thousands of agents each hold a socket and, briefly, a transcript file.
fn raise_file_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}
