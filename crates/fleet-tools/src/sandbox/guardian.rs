//! No Bash process outlives fleet, even a `kill -9`ed fleet.
//!
//! Each command's shell leads its own process group (a sandboxed one its own session too) and
//! is killed with fleet (`PR_SET_PDEATHSIG`, set by the launcher), but what it started would be
//! adopted by init and live on. So the first Bash call of a fleet process starts a guardian — the launcher binary
//! in `__sandbox-guard` mode, in a process group of its own so a Ctrl-C meant for fleet does
//! not reach it — and fleet tells it, through a pipe only fleet holds, the process group of
//! every command it starts. When that pipe closes (fleet exited, however it exited), the
//! guardian kills every group it was told about, then every process still carrying this fleet's
//! mark in its environment (`FLEET_GUARD=<token>`, which every Bash process inherits), which
//! catches those that moved to a group or session of their own (`setsid`).
//!
//! So a background job with its output redirected keeps running after its call, as documented,
//! until fleet itself exits. What still escapes: a process that both leaves the group and drops
//! the mark (`setsid env -i …`), or one started for the user by a daemon (which the sandbox's
//! refusal of Unix sockets prevents for sandboxed commands). The guardian forgets a group once
//! it is gone (it checks every few seconds), so a reused group id is never signalled later.

use super::launcher::GUARD_MODE;
use nix::sys::signal::{kill, killpg, SigSet, Signal};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The variable every Bash process of this fleet carries.
pub const MARK_ENV: &str = "FLEET_GUARD";
/// How often the guardian forgets groups that are gone.
const PRUNE_EVERY: Duration = Duration::from_secs(5);
/// Sweeps of `/proc` for marked processes, as killing one may race with it forking.
const SWEEPS: usize = 5;

/// This process's mark: its pid and a random part, so another fleet's processes never match.
pub fn token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        format!("{}-{:016x}", std::process::id(), hasher.finish())
    })
}

/// The pipe to the guardian, once started; `None` when it could not be.
fn pipe(launcher: Option<&Path>) -> &'static Mutex<Option<ChildStdin>> {
    static PIPE: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();
    PIPE.get_or_init(|| Mutex::new(start(launcher)))
}

fn start(launcher: Option<&Path>) -> Option<ChildStdin> {
    // Only shown in the warning below, so the two failures meet as text.
    let started = match super::availability::locate(launcher) {
        Ok(exe) => Command::new(&exe)
            .arg(GUARD_MODE)
            .arg(token())
            .env_clear()
            .stdin(Stdio::piped())
            // Holding fleet's output open would keep `fleet -p … | cat` from ever ending.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the guardian {}: {e}", exe.display())),
        Err(unavailable) => Err(unavailable.to_string()),
    };
    match started {
        // The child handle is dropped without waiting: the guardian outlives this process by
        // design, and is reaped by whoever inherits it.
        Ok(mut child) => child.stdin.take(),
        Err(err) => {
            super::availability::warn_once(
                "guardian",
                &format!(
                    "processes left running by Bash commands will not be stopped if fleet is \
                 killed: {err}"
                ),
            );
            None
        }
    }
}

/// Tells the guardian (started now if this is the first call) about the process group `group`.
/// `launcher` is used only to start it.
pub fn watch(group: Pid, launcher: Option<&Path>) {
    let mut pipe = pipe(launcher)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(stdin) = pipe.as_mut() {
        if let Err(err) = writeln!(stdin, "+{group}") {
            tracing::warn!(%err, "the guardian is gone; processes may outlive fleet");
            *pipe = None;
        }
    }
}

/// `__sandbox-guard TOKEN`: reads `+PGID` lines until its input closes, then kills.
pub(super) fn guard_main(args: &[OsString]) -> ExitCode {
    let Some(token) = args.first().and_then(|t| t.to_str()).map(str::to_string) else {
        return ExitCode::FAILURE;
    };
    // Signals meant for fleet's terminal or group must not end the guardian early. Blocked
    // here, before the reader thread starts, so every thread inherits the mask.
    let mut blocked = SigSet::empty();
    for signal in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        blocked.add(signal);
    }
    let _ = blocked.thread_block();
    let (tx, rx) = mpsc::channel::<i32>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Some(group) = line.strip_prefix('+').and_then(|g| g.trim().parse().ok()) {
                if tx.send(group).is_err() {
                    break;
                }
            }
        }
    });
    let mut groups = BTreeSet::new();
    loop {
        match rx.recv_timeout(PRUNE_EVERY) {
            Ok(group) => {
                groups.insert(group);
            }
            Err(RecvTimeoutError::Timeout) => {
                // A sandboxed command's group exists only once its launcher ran `setsid`;
                // until then the launcher's pid (the group's id to be) is what is alive.
                groups.retain(|&g| {
                    killpg(Pid::from_raw(g), None).is_ok() || kill(Pid::from_raw(g), None).is_ok()
                });
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    for group in groups {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
    let mark = format!("{MARK_ENV}={token}");
    for _ in 0..SWEEPS {
        let marked = marked_processes(mark.as_bytes());
        if marked.is_empty() {
            break;
        }
        for pid in marked {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
    ExitCode::SUCCESS
}

/// Processes whose environment holds exactly `mark`.
fn marked_processes(mark: &[u8]) -> Vec<Pid> {
    let Ok(proc) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    proc.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == mark))
        })
        .filter_map(|pid| i32::try_from(pid).ok().map(Pid::from_raw))
        .collect()
}
