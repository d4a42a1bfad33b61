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
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::logs::{open_log, MAX_LOG_BYTES};

/// How much of a server's stderr is kept for error messages: the end, where the reason is.
const STDERR_TAIL_BYTES: usize = 4096;

/// The longest a shutdown waits for the last of a server's stderr to be read (and written to
/// its log) once the server is dead: longer only when something it started still holds the
/// pipe open.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// The most of a server's last stderr line an error message quotes.
const LAST_LINE_CHARS: usize = 300;

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

    /// The line of the end of its stderr most likely to say why it stopped, cut to a few
    /// hundred characters, for a one-line message (all it wrote is in its log): the last
    /// line that mentions an error, else the last line; stack frames and notes are passed
    /// over (`at main (server.js:3)`, `File "x.py", line 3`, `note: run with …`).
    pub fn last_line(&self) -> Option<String> {
        let text = self.text();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let said = |l: &&&str| {
            !(l.starts_with("at ")
                || l.starts_with("File \"")
                || l.starts_with("note: ")
                || l.starts_with("Traceback"))
        };
        let line = lines
            .iter()
            .filter(said)
            .rfind(|l| l.to_ascii_lowercase().contains("error"))
            .or_else(|| lines.iter().rfind(said))
            .or(lines.last())?;
        Some(match line.char_indices().nth(LAST_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => (*line).to_string(),
        })
    }
}

/// A running stdio server. Dropping it kills the server's whole process group.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// The group id, which is the child's pid (`process_group(0)`).
    group: i32,
    stderr: StderrTail,
    /// The task reading stderr into the tail and the log; it ends when the pipe closes.
    reader: Option<JoinHandle<()>>,
    /// The file the server's stderr goes to, when it could be opened.
    log: Option<PathBuf>,
}

/// The pipes of a freshly spawned server, for the transport.
pub struct ServerPipes {
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

impl ServerProcess {
    /// Starts `command args…` in a new process group, with `env` added to fleet's environment.
    /// Its stderr is kept (the end of it, for error messages) and, with `log`, appended to that
    /// file; never passed on to fleet's own stderr.
    pub fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
        log: Option<&Path>,
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
        let file = log.and_then(|path| match open_log(path) {
            Ok(file) => Some((path.to_path_buf(), file)),
            Err(err) => {
                tracing::warn!(
                    "MCP server {command}: cannot write its output to {}: {err}",
                    path.display()
                );
                None
            }
        });
        let log = file.as_ref().map(|(path, _)| path.clone());
        let reader = child.stderr.take().map(|pipe| {
            let file = file.map(|(_, file)| tokio::fs::File::from_std(file));
            tokio::spawn(read_stderr(
                pipe,
                stderr.clone(),
                file,
                started(command, pid),
            ))
        });
        let process = Self {
            child,
            group: pid,
            stderr,
            reader,
            log,
        };
        Ok((process, ServerPipes { stdout, stdin }))
    }

    /// The file its stderr goes to, when there is one.
    pub fn log(&self) -> Option<&Path> {
        self.log.as_deref()
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
    /// The last of its stderr is read (and logged) before this returns, so an error message
    /// built afterwards sees it.
    pub async fn shutdown(self) {
        self.stop_after(Duration::ZERO).await;
    }

    /// Gives the server up to `grace` to exit by itself, then kills its group, and says how
    /// it exited when it did so by itself: a server that closed its pipes is usually dying,
    /// and its exit status tells more than the broken pipe. Its stderr is read to the end
    /// first, as in [`Self::shutdown`].
    pub async fn stop_after(mut self, grace: Duration) -> Option<ExitStatus> {
        let exited = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        };
        // Also when it exited: what it started may still run in its group.
        self.kill_group();
        if exited.is_none() {
            let _ = self.child.wait().await;
        }
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
        }
        exited
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

/// The line a log starts each start of a server with. The arguments are left out: they may
/// hold a token expanded from the environment.
fn started(command: &str, pid: i32) -> String {
    format!(
        "--- fleet started {command} (pid {pid}) at {} ---\n",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    )
}

/// Reads the server's stderr until it closes: the end into `tail`, all of it (up to
/// [`MAX_LOG_BYTES`]) into `file`, flushed as it comes so a crash loses nothing.
async fn read_stderr(
    mut pipe: ChildStderr,
    tail: StderrTail,
    mut file: Option<tokio::fs::File>,
    header: String,
) {
    let mut written: u64 = 0;
    if let Some(out) = file.as_mut() {
        if out.write_all(header.as_bytes()).await.is_err() {
            file = None;
        }
    }
    let mut buf = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.push(&buf[..n]);
        let Some(out) = file.as_mut() else {
            continue;
        };
        let room = usize::try_from(MAX_LOG_BYTES.saturating_sub(written)).unwrap_or(usize::MAX);
        let chunk = &buf[..n.min(room)];
        let mut ok = out.write_all(chunk).await.is_ok() && out.flush().await.is_ok();
        written += chunk.len() as u64;
        if ok && chunk.len() < n {
            let note = format!("\n--- fleet: the log stops here, at {MAX_LOG_BYTES} bytes ---\n");
            let _ = out.write_all(note.as_bytes()).await;
            let _ = out.flush().await;
            ok = false;
        }
        if !ok {
            // Read on (the server must not block on a full pipe), write no more.
            file = None;
        }
    }
    if let Some(mut out) = file {
        let _ = out.flush().await;
    }
}

/// How a server that exited by itself ended: `it exited with status 1`, `it was killed by
/// signal 9`.
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("it exited with status {code}"),
        (None, Some(signal)) => format!("it was killed by signal {signal}"),
        (None, None) => "it exited".to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tail(text: &str) -> StderrTail {
        let tail = StderrTail::default();
        tail.push(text.as_bytes());
        tail
    }

    #[test]
    fn the_telling_line_is_the_error_not_the_stack_frame_under_it() {
        let node =
            tail("starting db server\nError: DB_URL is not set\n    at main (server.js:3)\n");
        assert_eq!(node.last_line().unwrap(), "Error: DB_URL is not set");
        let python =
            tail("Traceback (most recent call last):\n  File \"s.py\", line 3\nKeyError: 'DB'\n");
        assert_eq!(python.last_line().unwrap(), "KeyError: 'DB'");
        let rust = tail("thread 'main' panicked at src/main.rs:2:5:\nno database\nnote: run with `RUST_BACKTRACE=1`\n");
        assert_eq!(rust.last_line().unwrap(), "no database");
        assert_eq!(tail("  \n").last_line(), None);
        let long = tail(&"x".repeat(1000));
        assert_eq!(
            long.last_line().unwrap().chars().count(),
            LAST_LINE_CHARS + 1
        );
    }
}
