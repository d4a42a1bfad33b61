//! One shell command running in its own process group, so that everything it starts
//! (pipelines, `&` jobs, nested shells) can be stopped together — and is stopped if the caller
//! goes away without waiting for it.
//!
//! An unconfined shell gets its group from the spawn (`process_group(0)`). A sandboxed one is
//! started through the launcher, which makes a new *session* (`setsid`, so the command has no
//! controlling terminal; see [`crate::sandbox::launcher`]) and with it the group; `setsid`
//! fails for a group leader, so the launcher is spawned in fleet's group and moves out itself.
//! Until it has, there is no group of that id: signals then go to the launcher's pid too.

use super::output::{Capture, Captured};
use crate::sandbox::{guardian, launcher, Plan};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::future::{pending, Future};
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::time::{sleep_until, Instant};

/// Bytes asked of a pipe per read.
const READ_CHUNK: usize = 64 * 1024;

/// Variables that keep a command from waiting for a person: stdin is /dev/null, so an editor,
/// a pager or a password prompt would only sit there until the timeout.
const QUIET_ENV: [(&str, &str); 5] = [
    ("FLEET_AGENT", "1"),
    ("GIT_EDITOR", "true"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// `/bin/bash` where it exists (so a PATH change cannot swap the shell), else `bash` on PATH.
fn shell() -> &'static str {
    if Path::new("/bin/bash").is_file() {
        "/bin/bash"
    } else {
        "bash"
    }
}

/// Sends signals to the command's process group, and SIGKILL when dropped while still armed,
/// so a call that is aborted (its future dropped) leaves no process behind.
#[derive(Debug)]
struct GroupGuard {
    group: Option<Pid>,
    /// The leader (the shell, or the launcher about to become it) has not been reaped yet, so
    /// its pid still names it and may be signalled on its own: a launcher signalled before its
    /// `setsid` is in no group of that id yet. Cleared once reaped, as the pid may be reused.
    leader_unreaped: bool,
}

impl GroupGuard {
    fn new(group: Pid) -> Self {
        Self {
            group: Some(group),
            leader_unreaped: true,
        }
    }

    fn signal(&self, signal: Signal) {
        let Some(group) = self.group else {
            return;
        };
        // ESRCH only means every process of the group has already gone, or (for a sandboxed
        // command) that the launcher has not made the group yet.
        if let Err(err) = killpg(group, signal) {
            tracing::debug!(%group, ?signal, %err, "signalling the Bash process group");
        }
        if self.leader_unreaped {
            // The leader itself, in case the group did not exist yet. Once it is the leader the
            // signal above reached it already; a second one changes nothing.
            let _ = kill(group, signal);
        }
    }

    fn leader_reaped(&mut self) {
        self.leader_unreaped = false;
    }

    fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Why [`Running::run_until`] returned.
#[derive(Debug)]
pub(super) enum Ended<T> {
    /// The shell exited and both pipes closed.
    Exited,
    /// The shell exited, but processes it left in the background still hold its output open.
    HeldOpen,
    /// The `stop` future finished first.
    Stopped(T),
}

/// A command that has finished or was stopped, with what it printed.
#[derive(Debug)]
pub(super) struct Finished {
    pub status: Option<ExitStatus>,
    pub stdout: Captured,
    pub stderr: Captured,
}

#[derive(Debug)]
pub(super) struct Running {
    // Declared first so it is dropped first: the group is killed before the child handle goes.
    group: GroupGuard,
    child: Child,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    stdout_capture: Capture,
    stderr_capture: Capture,
    status: Option<ExitStatus>,
    /// Where output goes as it arrives once the command was moved to the background.
    tee: Option<tokio::fs::File>,
}

/// Starts `bash -c command` in `cwd`, keeping at most `capture_limit` bytes of each stream: in
/// the environment `env` (already scrubbed), confined as `plan` says, and watched by the
/// guardian (started with `launcher` if this is the first command) so nothing it starts
/// outlives fleet.
pub(super) fn spawn(
    command: &str,
    cwd: &Path,
    capture_limit: usize,
    env: Vec<(OsString, OsString)>,
    plan: &Plan,
    launcher: Option<&Path>,
) -> io::Result<Running> {
    let shell = Path::new(shell());
    let mut cmd = match (&plan.policy, &plan.launcher) {
        (Some(policy), Some(launcher)) => {
            let (program, args) = launcher::command(launcher, policy, shell);
            let mut cmd = Command::new(program);
            // No `process_group(0)`: the launcher's `setsid` makes the group (and a session
            // without a terminal), and would fail for a process that already leads a group.
            cmd.args(args);
            cmd
        }
        _ => {
            let mut cmd = Command::new(shell);
            cmd.process_group(0);
            cmd
        }
    };
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .envs(QUIET_ENV)
        .env(guardian::MARK_ENV, guardian::token())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(temp) = &plan.temp {
        cmd.env("TMPDIR", temp);
    }
    if cwd.is_absolute() {
        // So `pwd` prints the path the agent knows, symlinks included.
        cmd.env("PWD", cwd);
    }
    let mut child = cmd.spawn()?;
    let group = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .map(Pid::from_raw)
        .ok_or_else(|| io::Error::other("the started shell has no process id"))?;
    guardian::watch(group, plan.launcher.as_deref().or(launcher));
    Ok(Running {
        group: GroupGuard::new(group),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        stdout_capture: Capture::new(capture_limit),
        stderr_capture: Capture::new(capture_limit),
        status: None,
        tee: None,
    })
}

impl Running {
    /// Reads both pipes and watches the shell until it has exited and the pipes have closed,
    /// or until `stop` finishes. Once the shell has exited, pipes still open after `linger`
    /// count as held open by background processes.
    pub(super) async fn run_until<T>(
        &mut self,
        stop: impl Future<Output = T>,
        linger: Duration,
    ) -> io::Result<Ended<T>> {
        tokio::pin!(stop);
        let mut out_buf = vec![0; READ_CHUNK];
        let mut err_buf = vec![0; READ_CHUNK];
        let mut held_after = self.status.map(|_| Instant::now() + linger);
        loop {
            if self.status.is_some() && self.stdout.is_none() && self.stderr.is_none() {
                return Ok(Ended::Exited);
            }
            // Not `biased`: a command that prints without pause must not starve the timeout.
            tokio::select! {
                read = read_some(&mut self.stdout, &mut out_buf), if self.stdout.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            self.stdout_capture.push(&out_buf[..n]);
                            self.write_tee(&out_buf[..n]).await;
                        }
                        _ => self.stdout = None,
                    }
                }
                read = read_some(&mut self.stderr, &mut err_buf), if self.stderr.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            self.stderr_capture.push(&err_buf[..n]);
                            self.write_tee(&err_buf[..n]).await;
                        }
                        _ => self.stderr = None,
                    }
                }
                status = self.child.wait(), if self.status.is_none() => {
                    self.status = Some(status?);
                    self.group.leader_reaped();
                    held_after = Some(Instant::now() + linger);
                }
                () = sleep_until_some(held_after) => return Ok(Ended::HeldOpen),
                value = &mut stop => return Ok(Ended::Stopped(value)),
            }
        }
    }

    /// Stops every process of the group: SIGTERM (and SIGCONT, so stopped jobs see it), output
    /// still read for up to `grace`, then SIGKILL for whatever is left; the shell is reaped.
    pub(super) async fn stop_group(&mut self, grace: Duration) -> io::Result<()> {
        self.group.signal(Signal::SIGTERM);
        self.group.signal(Signal::SIGCONT);
        self.run_until(tokio::time::sleep(grace), grace).await?;
        self.group.signal(Signal::SIGKILL);
        if self.status.is_none() {
            self.status = Some(self.child.wait().await?);
            self.group.leader_reaped();
        }
        self.stdout = None;
        self.stderr = None;
        Ok(())
    }

    /// What the command has printed so far (each stream bounded as the result will be),
    /// while it goes on running.
    pub(super) fn printed_so_far(&self) -> (Captured, Captured) {
        (
            self.stdout_capture.clone().finish(),
            self.stderr_capture.clone().finish(),
        )
    }

    /// From now on, also appends everything the command prints to `file`.
    pub(super) fn tee_to(&mut self, file: tokio::fs::File) {
        self.tee = Some(file);
    }

    /// A failed write loses only the file's copy: the result still has the output.
    async fn write_tee(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        if let Some(file) = self.tee.as_mut() {
            let written = async {
                file.write_all(bytes).await?;
                file.flush().await
            };
            if let Err(err) = written.await {
                tracing::warn!(%err, "writing a background command's output file");
                self.tee = None;
            }
        }
    }

    /// Hands over the output. Processes the command left running with their output redirected
    /// elsewhere are not touched: starting a server in the background is a legitimate request.
    pub(super) fn finish(mut self) -> Finished {
        self.group.disarm();
        Finished {
            status: self.status,
            stdout: self.stdout_capture.finish(),
            stderr: self.stderr_capture.finish(),
        }
    }
}

async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => pending().await,
    }
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => pending().await,
    }
}
