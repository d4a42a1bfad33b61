//! Bounded waits for tests: every wait a test makes has a deadline, and a wait that runs out
//! fails the test with what it waited for, instead of hanging until CI's clock kills the job
//! with nothing to read.
//!
//! The helpers poll a condition (a file appearing, a pane showing text, a process gone) with a
//! short back-off, or put a limit on one future (`recv()`, a child's `wait()`). They panic on
//! timeout because they are test helpers: the panic message is the test's failure message:
//!
//! ```text
//! timed out after 60s waiting for the worker's pid file /tmp/x/pid
//! ```
//!
//! The limit is generous ([`WAIT`], a minute) on purpose: it is not an assertion about speed (the
//! project has no timed assertions), only the point where a wait that is still waiting has
//! certainly lost the event it waits for. nextest's `slow-timeout` (`.config/nextest.toml`) is
//! the backstop above these for anything they do not cover.
//!
//! An absence check ("X did not happen") should not sleep and then look: wait on an event that
//! proves X had its chance (the process exited, a later line was written), then look.

use std::future::IntoFuture;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The default bound of a test's wait: far past any legitimate wait on a loaded 2-core machine,
/// well under nextest's `terminate-after`.
pub const WAIT: Duration = Duration::from_secs(60);

/// The first pause between two polls; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(5);
/// The longest pause between two polls.
const MAX_POLL: Duration = Duration::from_millis(100);

/// Polls `cond` (blocking the thread between polls) until it holds; panics after `within`
/// saying it timed out waiting for `what`.
#[track_caller]
pub fn wait_until(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    wait_for(within, what, || cond().then_some(()));
}

/// Polls `probe` (blocking the thread between polls) until it returns `Some`, and returns
/// that; panics after `within` saying it timed out waiting for `what`.
#[track_caller]
pub fn wait_for<T>(within: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    let mut pause = FIRST_POLL;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        if Instant::now() >= deadline {
            timed_out(within, what);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// [`wait_until`] for async tests: sleeps on the runtime's timer between polls, so the tasks
/// the test waits on keep running on a current-thread runtime.
pub async fn wait_until_async(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    wait_for_async(within, what, || cond().then_some(())).await;
}

/// [`wait_for`] for async tests.
pub async fn wait_for_async<T>(
    within: Duration,
    what: &str,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    let mut pause = FIRST_POLL;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        if Instant::now() >= deadline {
            timed_out(within, what);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Awaits `fut` for at most `within`; panics saying it timed out waiting for `what`. For one
/// event that may never come: `within(WAIT, "the run's result", handle.recv())`.
pub async fn within<F: IntoFuture>(limit: Duration, what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(limit, fut).await {
        Ok(out) => out,
        Err(_) => timed_out(limit, what),
    }
}

/// Waits for a child process to exit for at most `limit`; on timeout kills it (so it does not
/// outlive the test) and panics saying what it waited for.
#[track_caller]
pub fn wait_child(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    let mut pause = FIRST_POLL;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) => {}
            Err(e) => panic!("cannot wait for {what}: {e}"),
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            timed_out(limit, what);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// For a `Drop` that asked a child to stop (SIGTERM, closed stdin): waits at most `grace` for it
/// to exit, then kills it, and reaps it either way. Never panics (a panic in a drop while the
/// test unwinds would abort the whole test binary); says on stderr what it had to kill. Returns
/// whether the child exited by itself.
pub fn reap(child: &mut Child, grace: Duration, what: &str) -> bool {
    let deadline = Instant::now() + grace;
    let mut pause = FIRST_POLL;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => break,
            Ok(None) => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
    eprintln!("{what} did not exit within {grace:?} of being asked to; killing it");
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// [`Command::output`] with a deadline: runs `cmd` with stdin from `/dev/null` (as `output()`
/// does; set up the child yourself and use [`wait_output`] to give it other stdin), captures
/// stdout and stderr, and waits at most `limit` for the process to exit and its output to end.
/// On timeout the process is killed and the test fails naming `what`, with the output so far.
#[track_caller]
pub fn output_within(cmd: &mut Command, limit: Duration, what: &str) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    wait_output(child, limit, what)
}

/// `Child::wait_with_output` with a deadline, for a child spawned with piped stdout and stderr:
/// waits at most `limit` for it to exit and for its output to end. The output ends when every
/// process holding the pipes has closed them, so a descendant left running with the child's
/// stdout also fails the wait (a leaked process would otherwise hang the test after the child
/// exited). On timeout the child is killed and the test fails naming `what`, with the output
/// read so far.
#[track_caller]
pub fn wait_output(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    // As `wait_with_output` does: a child reading its stdin to the end sees the end.
    drop(child.stdin.take());
    let stdout = Pipe::read(child.stdout.take());
    let stderr = Pipe::read(child.stderr.take());
    let mut pause = FIRST_POLL;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => {}
            Err(e) => panic!("cannot wait for {what}: {e}"),
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    };
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "timed out after {limit:?} waiting for {what} to exit; stdout so far:\n{}\nstderr so far:\n{}",
            stdout.text(),
            stderr.text()
        );
    };
    while !(stdout.ended() && stderr.ended()) {
        if Instant::now() >= deadline {
            panic!(
                "{what} exited ({status}) but its output did not end within {limit:?}: a \
                 process it started still holds its stdout or stderr; stdout so far:\n{}\n\
                 stderr so far:\n{}",
                stdout.text(),
                stderr.text()
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
    Output {
        status,
        stdout: stdout.take(),
        stderr: stderr.take(),
    }
}

/// One output pipe of a child, read to its end on a thread of its own, so that what was read
/// so far can be shown when the wait runs out.
struct Pipe {
    read: Arc<Mutex<(Vec<u8>, bool)>>,
}

impl Pipe {
    fn read(source: Option<impl Read + Send + 'static>) -> Self {
        let read = Arc::new(Mutex::new((Vec::new(), source.is_none())));
        if let Some(mut source) = source {
            let sink = Arc::clone(&read);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    let n = source.read(&mut buf).unwrap_or(0);
                    let mut state = sink.lock().unwrap_or_else(|e| e.into_inner());
                    if n == 0 {
                        state.1 = true;
                        return;
                    }
                    state.0.extend_from_slice(&buf[..n]);
                }
            });
        }
        Self { read }
    }

    fn ended(&self) -> bool {
        self.read.lock().unwrap_or_else(|e| e.into_inner()).1
    }

    fn text(&self) -> String {
        let state = self.read.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&state.0).into_owned()
    }

    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.read.lock().unwrap_or_else(|e| e.into_inner()).0)
    }
}

/// Whether process `pid` has ended: no longer in `/proc`, or a zombie waiting for its parent to
/// reap it (which runs no code any more).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
        Err(_) => true,
    }
}

#[track_caller]
fn timed_out(within: Duration, what: &str) -> ! {
    panic!("timed out after {within:?} waiting for {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_for_returns_what_the_probe_found() {
        let mut calls = 0;
        let found = wait_for(WAIT, "the third call", || {
            calls += 1;
            (calls == 3).then_some(calls)
        });
        assert_eq!(found, 3);
    }

    #[test]
    #[should_panic(expected = "timed out after 10ms waiting for a condition that never holds")]
    fn wait_until_names_what_it_waited_for() {
        wait_until(
            Duration::from_millis(10),
            "a condition that never holds",
            || false,
        );
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for a message that never comes")]
    async fn within_names_what_it_waited_for() {
        let (_tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
        within(
            Duration::from_millis(10),
            "a message that never comes",
            rx.recv(),
        )
        .await;
    }

    #[test]
    fn a_child_that_exited_is_gone_once_reaped_and_its_status_is_returned() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let pid = child.id();
        let status = wait_child(&mut child, WAIT, "`true` to exit");
        assert!(status.success());
        assert!(process_gone(pid));
        assert!(!process_gone(std::process::id()));
    }

    #[test]
    fn output_within_returns_the_status_and_both_outputs() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            WAIT,
            "sh",
        );
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    #[should_panic(expected = "stdout so far:\nstarted\n")]
    fn output_within_kills_a_child_that_does_not_exit_and_shows_its_output() {
        output_within(
            Command::new("sh").args(["-c", "echo started; exec sleep 600"]),
            Duration::from_millis(300),
            "a sleeping shell",
        );
    }

    #[test]
    #[should_panic(expected = "still holds its stdout")]
    fn output_within_fails_when_a_descendant_keeps_the_output_open() {
        output_within(
            Command::new("sh").args(["-c", "sleep 2 & exit 0"]),
            Duration::from_millis(300),
            "a shell leaving a sleep behind",
        );
    }

    #[test]
    fn reap_kills_what_does_not_exit_in_its_grace() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        assert!(!reap(&mut child, Duration::from_millis(50), "sleep"));
        assert!(child.try_wait().expect("reaped").is_some());
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        assert!(reap(&mut child, WAIT, "true"));
    }

    #[test]
    #[should_panic(expected = "waiting for sleep to exit")]
    fn a_child_that_does_not_exit_is_killed_and_named() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        wait_child(&mut child, Duration::from_millis(50), "sleep to exit");
    }
}
