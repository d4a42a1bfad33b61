//! Stdio server processes: each in its own process group, so that killing the group also kills
//! whatever the server started (an `npx` wrapper and the node process under it, a language
//! server's workers), and so that a Ctrl-C aimed at fleet's terminal group does not reach the
//! servers before fleet has decided to stop them.
//!
//! A [`ServerProcess`] kills its group when it is dropped. Every live group is also recorded in
//! a process-wide table so that [`kill_all_server_groups`] can end them all when fleet exits
//! (the CLI calls it from its Ctrl-C handler and its panic hook).
//!
//! `PR_SET_PDEATHSIG` would cover the one case left, fleet itself being SIGKILLed; it can only
//! be set in the child between fork and exec, which needs `pre_exec` and so `unsafe`, which this
//! workspace forbids. That case is covered less strongly: the server's stdin closes when fleet
//! dies, and MCP stdio servers exit on end of input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How much of a server's stderr is kept for error messages: the end, where the reason is.
const STDERR_TAIL_BYTES: usize = 4096;

/// Process groups of live stdio servers, for [`kill_all_server_groups`].
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Kills every stdio server group still alive in this process. Safe to call more than once and
/// from a panic hook (it never panics itself).
pub fn kill_all_server_groups() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner));
    for group in groups {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// The last few KB a server wrote to stderr, shared with the task that reads it.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<Vec<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend_from_slice(bytes);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }

    /// The tail as text, trimmed; empty when the server wrote nothing.
    pub fn text(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&tail).trim().to_string()
    }
}

/// A running stdio server. Dropping it kills the server's whole process group.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// The group id, which is the child's pid (`process_group(0)`).
    group: i32,
    stderr: StderrTail,
}

/// The pipes of a freshly spawned server, for the transport.
pub struct ServerPipes {
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

impl ServerProcess {
    /// Starts `command args…` in a new process group, with `env` added to fleet's environment.
    pub fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
    ) -> std::io::Result<(Self, ServerPipes)> {
        let mut cmd = Command::new(command);
        cmd.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn()?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| std::io::Error::other("the server exited as it started"))?;
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pid);
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the server's pipes were not opened"));
        };
        let stderr = StderrTail::default();
        if let Some(mut pipe) = child.stderr.take() {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    tail.push(&buf[..n]);
                }
            });
        }
        let process = Self {
            child,
            group: pid,
            stderr,
        };
        Ok((process, ServerPipes { stdout, stdin }))
    }

    /// The server's pid, which is also its process group id.
    pub fn pid(&self) -> i32 {
        self.group
    }

    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Kills the group and waits for the server itself to be reaped, so that its pid is gone
    /// when this returns (its own children are reaped by whoever inherits them).
    pub async fn shutdown(mut self) {
        self.kill_group();
        let _ = self.child.wait().await;
    }

    /// Kills the group once: a group no longer in the table was already killed (by an earlier
    /// call or by [`kill_all_server_groups`]), and its id may since belong to someone else.
    fn kill_group(&mut self) {
        let live = LIVE_GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.group);
        if live {
            let _ = killpg(Pid::from_raw(self.group), Signal::SIGKILL);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // `kill_on_drop` only reaches the server itself; the group reaches what it started.
        self.kill_group();
    }
}
