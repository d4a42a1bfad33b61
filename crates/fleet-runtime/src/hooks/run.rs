//! Running one hook. [`HookRunner`] is the seam: [`CommandRunner`] runs command hooks from
//! settings and agent files; a runner that forwards to SDK callbacks can sit beside it later
//! and the engine above does not change.
//!
//! A command runs as `sh -c <command>` in a process group of its own, in the agent's working
//! directory, with the event as JSON on stdin — the only way the event reaches it: nothing of
//! the input (which holds what the model wrote) is ever put on the command line or in the
//! environment. When the timeout passes, or the run is cancelled, the whole group is killed,
//! so a hook's children do not outlive it.

use super::config::{Handler, HookSpec};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// The most of a hook's stdout and of its stderr that is kept: enough for any decision, and a
/// hook that floods its output cannot make the agent hold it all.
const OUTPUT_CAP: usize = 256 * 1024;

/// How one hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// Killed at its timeout.
    TimedOut,
    /// Killed because the agent's run was cancelled.
    Cancelled,
    /// It could not be started, or ended by a signal; the text says which.
    Failed(String),
}

/// What a hook produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
}

/// Where and for whom a hook runs.
#[derive(Debug, Clone)]
pub struct RunPlace {
    pub cwd: PathBuf,
    /// The project folder, given to commands as `CLAUDE_PROJECT_DIR` and `FLEET_PROJECT_DIR`
    /// so that `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh` works as in Claude Code.
    pub project_dir: Option<PathBuf>,
}

pub type RunFuture<'a> = Pin<Box<dyn Future<Output = HookRun> + Send + 'a>>;

/// Runs one hook with the event's JSON as input.
pub trait HookRunner: Send + Sync {
    fn run<'a>(
        &'a self,
        hook: &'a HookSpec,
        input: Arc<Vec<u8>>,
        place: &'a RunPlace,
        cancel: &'a CancellationToken,
    ) -> RunFuture<'a>;
}

/// Runs command hooks.
#[derive(Debug, Default)]
pub struct CommandRunner;

impl HookRunner for CommandRunner {
    fn run<'a>(
        &'a self,
        hook: &'a HookSpec,
        input: Arc<Vec<u8>>,
        place: &'a RunPlace,
        cancel: &'a CancellationToken,
    ) -> RunFuture<'a> {
        Box::pin(async move {
            match &hook.handler {
                Handler::Command(command) => {
                    run_command(command, hook.timeout, input, place, cancel).await
                }
                Handler::Callback(id) => HookRun {
                    ending: Ending::Failed(format!(
                        "callback hook {id:?} has no SDK host to run it"
                    )),
                    stdout: String::new(),
                    stderr: String::new(),
                },
            }
        })
    }
}

/// Kills the group when dropped, so a hook whose caller stopped waiting (its agent dropped
/// mid-call) is not left running.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn run_command(
    command: &str,
    timeout: std::time::Duration,
    input: Arc<Vec<u8>>,
    place: &RunPlace,
    cancel: &CancellationToken,
) -> HookRun {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&place.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &place.project_dir {
        cmd.env("CLAUDE_PROJECT_DIR", dir)
            .env("FLEET_PROJECT_DIR", dir);
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => {
            return HookRun {
                ending: Ending::Failed(format!("could not start `sh -c`: {err}")),
                stdout: String::new(),
                stderr: String::new(),
            }
        }
    };
    let mut group = GroupGuard(child.id().and_then(|id| i32::try_from(id).ok()));
    // Written from a task of its own: a hook that never reads its input must not block us
    // on a full pipe. A hook that exits without reading makes the write fail; that is fine.
    if let Some(mut stdin) = child.stdin.take() {
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = Captured::default();
    let stderr = Captured::default();
    let readers = [
        child.stdout.take().map(|out| stdout.read_from(out)),
        child.stderr.take().map(|err| stderr.read_from(err)),
    ];
    let ending = tokio::select! {
        biased;
        _ = cancel.cancelled() => Ending::Cancelled,
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        status = child.wait() => match status {
            Ok(status) => match status.code() {
                Some(code) => Ending::Exited(code),
                None => Ending::Failed(format!("ended by a signal ({status})")),
            },
            Err(err) => Ending::Failed(format!("waiting for it failed: {err}")),
        },
    };
    match ending {
        Ending::Exited(_) => {
            // The pipes close when the last process holding them ends; a hook that left a
            // background child holding them is cut off with its group.
            for reader in readers.into_iter().flatten() {
                let done = tokio::time::timeout(std::time::Duration::from_secs(2), reader);
                if done.await.is_err() {
                    group.kill();
                }
            }
        }
        _ => {
            group.kill();
            let _ = child.wait().await;
            for reader in readers.into_iter().flatten() {
                reader.abort();
            }
        }
    }
    group.kill();
    HookRun {
        ending,
        stdout: stdout.text(),
        stderr: stderr.text(),
    }
}

/// One stream of a hook's output, filled by a reader task, capped at [`OUTPUT_CAP`].
#[derive(Debug, Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn read_from(
        &self,
        mut from: impl AsyncRead + Unpin + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let into = self.0.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 8192];
            loop {
                match from.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut kept = into.lock().unwrap_or_else(PoisonError::into_inner);
                        let room = OUTPUT_CAP.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            }
        })
    }

    fn text(&self) -> String {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&kept).into_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    fn spec(command: &str, timeout: Duration) -> HookSpec {
        HookSpec {
            handler: Handler::Command(command.into()),
            timeout,
            source: Arc::from("test"),
        }
    }

    fn place() -> RunPlace {
        RunPlace {
            cwd: std::env::temp_dir(),
            project_dir: None,
        }
    }

    #[tokio::test]
    async fn the_input_arrives_on_stdin_and_the_output_is_kept() {
        let run = CommandRunner
            .run(
                &spec("cat; echo oops >&2; exit 3", Duration::from_secs(30)),
                Arc::new(b"{\"a\":1}".to_vec()),
                &place(),
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(run.ending, Ending::Exited(3));
        assert_eq!(run.stdout, "{\"a\":1}");
        assert_eq!(run.stderr.trim(), "oops");
    }

    #[tokio::test]
    async fn a_hook_past_its_timeout_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let command = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let run = CommandRunner
            .run(
                &spec(&command, Duration::from_millis(300)),
                Arc::new(Vec::new()),
                &place(),
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(run.ending, Ending::TimedOut);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "the hook's child outlived the timeout");
    }
}
