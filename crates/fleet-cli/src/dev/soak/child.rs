//! Processes of one run: the fake model server, the `fleet` session under test (in its own
//! process group, marked by an environment variable its descendants inherit), bounded waits,
//! kill -9, and what is left behind.

use anyhow::{bail, Context};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Set on every session the soak starts, with the run's id: what finds its descendants.
pub(super) const MARKER_VAR: &str = "FLEET_SOAK_RUN";

/// Variables from the caller's environment that would point fleet elsewhere.
const SCRUBBED: &[&str] = &[
    "FLEET_PROVIDER",
    "FLEET_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "FLEET_NO_SESSION_PERSISTENCE",
    "FLEET_MAX_CONCURRENT_SUBAGENTS",
    "FLEET_MAX_RETRIES",
    "FLEET_RETRY_BASE_DELAY_MS",
    "FLEET_STREAM_IDLE_TIMEOUT_MS",
    "FLEET_FIRST_TOKEN_TIMEOUT_MS",
    "TMUX",
];

/// How often a bounded wait looks again.
const POLL: Duration = Duration::from_millis(20);
/// How often a running session's progress is sampled.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What shows a session is still getting somewhere: the fake server's request log grows, or
/// the session's process uses CPU. A run with neither for the idle limit is a hang, however
/// long its deadline (the hangs of issue 31 sat at 0% CPU with the server done).
struct Progress {
    log: PathBuf,
    last: (u64, u64),
    since: Instant,
}

impl Progress {
    fn sample(&self, pid: u32) -> (u64, u64) {
        let log = std::fs::metadata(&self.log).map_or(0, |m| m.len());
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // utime and stime: fields 14 and 15, i.e. 12 and 13 after the `(comm)`.
        let cpu = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(11)
                    .take(2)
                    .filter_map(|f| f.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0);
        (log, cpu)
    }

    /// How long the session has made no progress.
    fn idle(&mut self, pid: u32) -> Duration {
        let now = self.sample(pid);
        if now != self.last {
            self.last = now;
            self.since = Instant::now();
        }
        self.since.elapsed()
    }
}

/// The fake model server of one run, killed on drop.
pub(super) struct FakeServer {
    child: Child,
    pub url: String,
}

impl FakeServer {
    /// Starts `fleet dev fake-model --scenario SCENARIO --log LOG` and reads its address
    /// (within 30 s: a reader thread, so a server that never prints cannot block the soak).
    pub fn start(exe: &Path, scenario: &Path, log: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(exe)
            .args(["dev", "fake-model", "--scenario"])
            .arg(scenario)
            .arg("--log")
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the fake model server")?;
        let stdout = child.stdout.take().context("the fake server's stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("the fake model server did not print its address within 30 s");
            }
        };
        let Some(url) = line.trim().strip_prefix("listening on ").map(str::to_owned) else {
            let _ = child.kill();
            let _ = child.wait();
            bail!("the fake model server did not start (it said {line:?})");
        };
        Ok(Self { child, url })
    }

    /// The server's full request records (`GET /_fake/requests`), bodies included; empty
    /// when the scenario keeps only counts. Bounded by a 10 s socket timeout.
    pub fn requests(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        let addr = self.url.trim_start_matches("http://");
        let mut tcp =
            std::net::TcpStream::connect(addr).context("connecting to the fake server")?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        tcp.write_all(b"GET /_fake/requests HTTP/1.0\r\nhost: fake\r\n\r\n")?;
        let mut raw = Vec::new();
        tcp.read_to_end(&mut raw)
            .context("reading the fake server's request log")?;
        let text = String::from_utf8_lossy(&raw);
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).context("parsing the fake server's request log")
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where one session runs and what it is given.
pub(super) struct Session<'a> {
    pub exe: &'a Path,
    pub dir: &'a Path,
    pub repo: &'a Path,
    pub base_url: &'a str,
    pub marker: &'a str,
    pub env: &'a [(String, String)],
    /// The fake server's request event log: its growth is progress.
    pub request_log: &'a Path,
}

/// When to kill -9 a session: once the fake server has received `after_requests` requests
/// (read from its request log), `jitter` later. Counting requests puts the kill inside the
/// run whatever the machine's speed; the count and the jitter are drawn at random.
pub(super) struct KillTrigger {
    pub log: PathBuf,
    pub after_requests: usize,
    pub jitter: Duration,
}

impl KillTrigger {
    fn reached(&self) -> bool {
        std::fs::read_to_string(&self.log)
            .map(|t| t.matches("\"event\":\"received\"").count() >= self.after_requests)
            .unwrap_or(false)
    }
}

/// How a session ended.
pub(super) enum Ended {
    Exited(ExitStatus),
    /// Killed by the soak on purpose (kill -9 at a random moment).
    Killed,
    /// Still running at its deadline; killed after `capture` was taken.
    Hung {
        capture: PathBuf,
        summary: String,
    },
}

/// One finished session: how it ended, its output files and its wall time.
pub(super) struct Outcome {
    pub ended: Ended,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    pub wall: Duration,
}

impl Session<'_> {
    /// Runs `fleet ARGS` until it exits, `kill` fires (kill -9), or it hangs: `deadline`
    /// passes, or it makes no progress for `idle_limit` (`capture` is called first). Output goes to `<tag>.stdout` / `.stderr` in the
    /// run's folder.
    pub fn run(
        &self,
        tag: &str,
        args: &[String],
        deadline: Duration,
        idle_limit: Duration,
        kill: Option<&KillTrigger>,
        capture: impl FnOnce(u32) -> (PathBuf, String),
    ) -> anyhow::Result<Outcome> {
        let stdout = self.dir.join(format!("{tag}.stdout"));
        let stderr = self.dir.join(format!("{tag}.stderr"));
        let mut cmd = Command::new(self.exe);
        cmd.args(args)
            .current_dir(self.repo)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).context("creating the stdout file")?)
            .stderr(std::fs::File::create(&stderr).context("creating the stderr file")?);
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        let tmp = self.dir.join("tmp");
        std::fs::create_dir_all(&tmp).context("creating the run's TMPDIR")?;
        cmd.env("HOME", self.dir.join("home"))
            .env("FLEET_HOME", self.dir.join("fleet-home"))
            .env("TMPDIR", &tmp)
            .env("TMUX_TMPDIR", &tmp)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("ANTHROPIC_API_KEY", "soak")
            .env("ANTHROPIC_BASE_URL", self.base_url)
            .env("FLEET_TRUST_PROJECT", "1")
            .env(MARKER_VAR, self.marker);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        use std::os::unix::process::CommandExt;
        // Its own group: a hang or a kill -9 can take every descendant with it.
        cmd.process_group(0);
        let started = Instant::now();
        let mut child = cmd.spawn().context("starting fleet")?;
        let pid = child.id();
        let mut kill_at: Option<Instant> = None;
        let mut progress = Progress {
            log: self.request_log.to_path_buf(),
            last: (0, 0),
            since: Instant::now(),
        };
        let mut sampled = Instant::now();
        let mut idle = Duration::ZERO;
        let ended = loop {
            if let Some(status) = child.try_wait().context("waiting for fleet")? {
                break Ended::Exited(status);
            }
            let elapsed = started.elapsed();
            if kill_at.is_none() {
                if let Some(k) = kill.filter(|k| k.reached()) {
                    kill_at = Some(Instant::now() + k.jitter);
                }
            }
            if kill_at.is_some_and(|at| Instant::now() >= at) {
                signal(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                break Ended::Killed;
            }
            if sampled.elapsed() >= PROGRESS_EVERY {
                sampled = Instant::now();
                idle = progress.idle(pid);
            }
            if elapsed >= deadline || idle >= idle_limit {
                let (capture, mut summary) = capture(pid);
                summary = if idle >= idle_limit {
                    format!(
                        "no progress (request log, CPU) for {} s; {summary}",
                        idle.as_secs()
                    )
                } else {
                    format!("past its {} s deadline; {summary}", deadline.as_secs())
                };
                kill_group(pid);
                let _ = child.wait();
                break Ended::Hung { capture, summary };
            }
            std::thread::sleep(POLL);
        };
        Ok(Outcome {
            ended,
            stdout,
            stderr,
            wall: started.elapsed(),
        })
    }
}

fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}

/// Kill -9 the process group led by `pid`.
pub(super) fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Processes whose environment carries `MARKER_VAR=marker`: the session's descendants
/// (commands, MCP servers, tmux) wherever they moved, process group or not.
pub(super) fn marked_processes(marker: &str) -> Vec<(u32, String)> {
    let needle = format!("{MARKER_VAR}={marker}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
        {
            let cmdline = std::fs::read(entry.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            found.push((pid, cmdline.trim().to_owned()));
        }
    }
    found
}

/// Waits up to `within` for every marked process to be gone; returns those still there.
/// Processes reparented after their parent died need a moment to be reaped.
pub(super) fn wait_marked_gone(marker: &str, within: Duration) -> Vec<(u32, String)> {
    let deadline = Instant::now() + within;
    loop {
        let left = marked_processes(marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kill -9 every marked process (the soak's own descendants), so one bad run does not load
/// the next.
pub(super) fn kill_marked(marker: &str) {
    for (pid, _) in marked_processes(marker) {
        signal(pid, nix::sys::signal::Signal::SIGKILL);
    }
}
