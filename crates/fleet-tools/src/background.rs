//! Moving foreground calls to the background on the user's word (Claude Code's Ctrl+B).
//!
//! A call that may run long in the foreground (a synchronous subagent, a Bash command) enrols
//! with its agent's [`MoveSignal`] while it waits, and races its work against
//! [`Enrolment::moved`]. [`MoveSignal::move_all`] wakes every enrolled call at once: each then
//! hands its still-running work to a background task, says so through [`Moving`], and
//! answers its tool call straight away.
//!
//! The cost stays off the hot path: one signal per agent (made once, cloned into its
//! [`crate::ToolContext`]), one registration per long-running call, nothing per event.
//!
//! Bash lives here but background tasks live in the runtime, so the runtime lends the signal a
//! [`ShellTasks`] that adopts a moved command as a task.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The "move to the background now" signal of one agent's foreground calls; cheap to clone,
/// every clone the same signal.
#[derive(Clone, Default)]
pub struct MoveSignal {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    waiting: Mutex<Waiting>,
    shells: OnceLock<Arc<dyn ShellTasks>>,
}

#[derive(Default)]
struct Waiting {
    next_id: u64,
    calls: HashMap<u64, oneshot::Sender<Moving>>,
}

impl std::fmt::Debug for MoveSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MoveSignal")
            .field("waiting", &self.waiting())
            .field("shells", &self.inner.shells.get().is_some())
            .finish()
    }
}

impl MoveSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Enrols one foreground call; it stays enrolled until the [`Enrolment`] is dropped or
    /// the signal fires.
    pub fn enrol(&self) -> Enrolment {
        let (tx, rx) = oneshot::channel();
        let mut waiting = lock(&self.inner.waiting);
        waiting.next_id += 1;
        let id = waiting.next_id;
        waiting.calls.insert(id, tx);
        Enrolment {
            id,
            signal: Arc::downgrade(&self.inner),
            moved: Some(rx),
        }
    }

    /// Moves every call enrolled now to the background, and returns once each has become a
    /// background task (or found it could not: it ended meanwhile); returns how many moved.
    pub async fn move_all(&self) -> usize {
        let calls: Vec<oneshot::Sender<Moving>> = lock(&self.inner.waiting)
            .calls
            .drain()
            .map(|(_, tx)| tx)
            .collect();
        let mut answers = Vec::with_capacity(calls.len());
        for call in calls {
            let (tx, rx) = oneshot::channel();
            if call.send(Moving { answer: Some(tx) }).is_ok() {
                answers.push(rx);
            }
        }
        let mut moved = 0;
        for answer in answers {
            // A call dropped before it could answer did not move.
            moved += usize::from(answer.await.unwrap_or(false));
        }
        moved
    }

    /// How many calls are enrolled now.
    pub fn waiting(&self) -> usize {
        lock(&self.inner.waiting).calls.len()
    }

    /// Lends the signal what adopts moved Bash commands; the first one set stays.
    pub fn set_shell_tasks(&self, shells: Arc<dyn ShellTasks>) {
        let _ = self.inner.shells.set(shells);
    }

    /// What adopts moved Bash commands; without it, Bash calls do not enrol.
    pub fn shell_tasks(&self) -> Option<Arc<dyn ShellTasks>> {
        self.inner.shells.get().cloned()
    }
}

/// One call's place on a [`MoveSignal`].
#[derive(Debug)]
pub struct Enrolment {
    id: u64,
    signal: Weak<Inner>,
    moved: Option<oneshot::Receiver<Moving>>,
}

impl Enrolment {
    /// Resolves once the call is to move to the background, with the [`Moving`] it must
    /// answer; never, if the signal is gone. Resolves at most once: afterwards it pends.
    pub async fn moved(&mut self) -> Moving {
        let Some(rx) = self.moved.as_mut() else {
            return std::future::pending().await;
        };
        let told = rx.await;
        self.moved = None;
        match told {
            Ok(moving) => moving,
            Err(_) => std::future::pending().await,
        }
    }
}

/// A call told to move, which says whether it did: [`MoveSignal::move_all`] waits for the
/// answer, so once it returns every moved call is a background task (an interrupt right
/// after no longer reaches it). Dropped unanswered, it counts as not moved.
#[derive(Debug)]
pub struct Moving {
    answer: Option<oneshot::Sender<bool>>,
}

impl Moving {
    /// The call is now a background task.
    pub fn done(mut self) {
        self.answer(true);
    }

    /// The call could not move (it ended meanwhile, or no task could be made); it answers
    /// as usual.
    pub fn refused(mut self) {
        self.answer(false);
    }

    fn answer(&mut self, moved: bool) {
        if let Some(tx) = self.answer.take() {
            let _ = tx.send(moved);
        }
    }
}

impl Drop for Enrolment {
    fn drop(&mut self) {
        if let Some(inner) = self.signal.upgrade() {
            lock(&inner.waiting).calls.remove(&self.id);
        }
    }
}

/// A Bash command being moved to the background.
#[derive(Debug, Clone)]
pub struct ShellStart {
    pub command: String,
    /// The call's `description`, or the command when it gave none.
    pub description: String,
    pub tool_use_id: String,
}

/// The task a moved Bash command became.
#[derive(Debug)]
pub struct AdoptedShell {
    pub task_id: String,
    /// Where its output goes from now on (what it printed so far is written first).
    pub output_file: PathBuf,
    /// Cancelled when the task is stopped (TaskStop); the command must then be killed.
    pub cancel: CancellationToken,
    /// Takes how the command ended; dropped unsent, the task ends as failed.
    pub done: oneshot::Sender<ShellEnding>,
}

/// How a moved Bash command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellEnding {
    pub status: ShellStatus,
    /// What it printed (bounded as a Bash result is) and how it exited.
    pub result: String,
    pub exit_code: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellStatus {
    Completed,
    Failed,
    Killed,
}

pub type AdoptFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AdoptedShell, AdoptError>> + Send + 'a>>;

/// Why a moved Bash command could not become a background task (it then stays in the
/// foreground; the reason is only logged).
#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    #[error("the session is ending: no task can be started")]
    SessionEnding,
    #[error("the main agent's tools are not set up")]
    NoMainAgent,
    /// The task registry refused the new task; its error is the source.
    #[error(transparent)]
    Registry(crate::error::BoxedSource),
}

/// Turns a moved Bash command into a background task (the runtime's task registry).
pub trait ShellTasks: Send + Sync {
    /// Registers the command as a running background shell task; the error says why not
    /// (the command then stays in the foreground).
    fn adopt(&self, shell: ShellStart) -> AdoptFuture<'_>;
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn move_all_waits_for_each_enrolled_call_and_counts_those_that_moved() {
        let signal = MoveSignal::new();
        assert_eq!(signal.move_all().await, 0, "nothing enrolled");
        let mut first = signal.enrol();
        let mut second = signal.enrol();
        let gone = signal.enrol();
        drop(gone);
        assert_eq!(signal.waiting(), 2);
        let calls = tokio::spawn(async move {
            first.moved().await.done();
            second.moved().await.refused();
            (first, second)
        });
        assert_eq!(signal.move_all().await, 1, "one moved, one could not");
        let (mut first, _second) = calls.await.expect("the calls answer");
        assert_eq!(signal.waiting(), 0);
        assert_eq!(signal.move_all().await, 0, "a call moves once");
        let again = tokio::time::timeout(Duration::from_millis(20), first.moved()).await;
        assert!(again.is_err(), "it resolves only once");
    }

    #[tokio::test]
    async fn a_call_dropped_before_answering_does_not_count() {
        let signal = MoveSignal::new();
        let call = signal.enrol();
        let dropper = tokio::spawn(async move {
            tokio::task::yield_now().await;
            drop(call);
        });
        assert_eq!(signal.move_all().await, 0);
        dropper.await.expect("dropped");
    }

    #[tokio::test]
    async fn an_enrolment_not_moved_stays_pending() {
        let signal = MoveSignal::new();
        let mut call = signal.enrol();
        let waited = tokio::time::timeout(Duration::from_millis(20), call.moved()).await;
        assert!(waited.is_err());
        drop(signal);
        let waited = tokio::time::timeout(Duration::from_millis(20), call.moved()).await;
        assert!(waited.is_err(), "a dropped signal never moves anything");
    }
}
