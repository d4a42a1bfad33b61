//! The run's watchdog: every wait an agent makes on something outside itself — the model, a
//! tool, a child, mail, the reader of its events — is registered here for as long as it lasts,
//! and a wait that outlives its bound is reported: logged, sent as a `Waiting` event (a
//! `system`/`waiting` line in stream-json, a line on stderr in text mode), and named in the
//! run's result if the run ends that way.
//!
//! Most waits have deadlines of their own (first token, idle gap, tool timeouts). The watchdog
//! is for the rest, and for the case where a deadline was never armed: a run can then be slow,
//! but never silently stuck, since whoever watches it learns what it is waiting for.

use fleet_protocol::env::{self, EnvError};
use fleet_protocol::{AgentEvent, AgentRef, EventKind, WaitReport};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a wait may last before it is reported, unless `FLEET_WATCHDOG_MS` says otherwise.
pub const DEFAULT_BOUND: Duration = Duration::from_secs(300);

/// What an agent is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitingFor {
    /// The reply to a model request (its next event, once it streams).
    Model { model: String },
    /// A tool call's result.
    Tool { name: String, tool_use_id: String },
    /// A foreground subagent's report.
    Child { agent_id: String },
    /// Its own background tasks' notifications.
    Tasks,
    /// The reader of its events (the output, a UI, an SDK host) to take the next one.
    Output,
}

impl WaitingFor {
    fn kind(&self) -> &'static str {
        match self {
            Self::Model { .. } => "model",
            Self::Tool { .. } => "tool",
            Self::Child { .. } => "child",
            Self::Tasks => "tasks",
            Self::Output => "output",
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Model { model } => format!("the reply of the model {model}"),
            Self::Tool { name, tool_use_id } => format!("the tool {name} ({tool_use_id})"),
            Self::Child { agent_id } => format!("the subagent {agent_id}"),
            Self::Tasks => "its background tasks to report".into(),
            Self::Output => "the reader of its events to take the next one".into(),
        }
    }
}

struct Wait {
    agent: AgentRef,
    what: WaitingFor,
    since: Instant,
    /// The wait is reported once it is this old; then this doubles.
    next_report: Duration,
}

struct Inner {
    bound: Duration,
    next_id: AtomicU64,
    waits: Mutex<HashMap<u64, Wait>>,
}

/// The waits of one session's agents. Cloning shares it.
#[derive(Clone)]
pub struct Watchdog {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog")
            .field("bound", &self.inner.bound)
            .field("waits", &self.lock().len())
            .finish()
    }
}

impl Default for Watchdog {
    fn default() -> Self {
        Self::new(DEFAULT_BOUND)
    }
}

/// One registered wait; it ends when this is dropped, however the wait ends.
#[must_use = "the wait ends when the guard is dropped"]
pub struct WaitGuard {
    inner: Arc<Inner>,
    id: u64,
}

impl std::fmt::Debug for WaitGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitGuard").field("id", &self.id).finish()
    }
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        let mut waits = self.inner.waits.lock().unwrap_or_else(|e| e.into_inner());
        waits.remove(&self.id);
    }
}

impl Watchdog {
    pub fn new(bound: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                bound: bound.max(Duration::from_millis(1)),
                next_id: AtomicU64::new(0),
                waits: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The bound from `FLEET_WATCHDOG_MS`, else [`DEFAULT_BOUND`].
    pub fn from_env() -> Result<Self, EnvError> {
        Ok(Self::new(
            env::FLEET_WATCHDOG_MS.get()?.unwrap_or(DEFAULT_BOUND),
        ))
    }

    pub fn bound(&self) -> Duration {
        self.inner.bound
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Wait>> {
        self.inner.waits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers that `agent` now waits for `what`, until the guard drops.
    pub fn watch(&self, agent: &AgentRef, what: WaitingFor) -> WaitGuard {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(
            id,
            Wait {
                agent: agent.clone(),
                what,
                since: Instant::now(),
                next_report: self.inner.bound,
            },
        );
        WaitGuard {
            inner: self.inner.clone(),
            id,
        }
    }

    /// How many waits are registered now.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }

    /// The waits that have passed their bound (or its next doubling) since the last call, as
    /// events of their agents; each is due again once twice as old.
    pub fn overdue(&self, now: Instant) -> Vec<AgentEvent> {
        let bound = self.inner.bound;
        let mut due = Vec::new();
        for wait in self.lock().values_mut() {
            let waited = now.saturating_duration_since(wait.since);
            if waited < wait.next_report {
                continue;
            }
            while wait.next_report <= waited {
                wait.next_report = wait.next_report.saturating_mul(2);
            }
            due.push(AgentEvent {
                agent: wait.agent.clone(),
                kind: EventKind::Waiting(WaitReport {
                    kind: wait.what.kind().to_string(),
                    waiting_for: wait.what.describe(),
                    waited_ms: millis(waited),
                    bound_ms: millis(bound),
                }),
            });
        }
        due
    }

    /// What `agent_id` has been waiting for past the bound, the longest wait first: for a
    /// result that ends while it waits.
    pub fn overdue_for(&self, agent_id: &str) -> Option<String> {
        let now = Instant::now();
        self.lock()
            .values()
            .filter(|w| w.agent.agent_id == agent_id)
            .map(|w| (now.saturating_duration_since(w.since), &w.what))
            .filter(|(waited, _)| *waited >= self.inner.bound)
            .max_by_key(|(waited, _)| *waited)
            .map(|(waited, what)| {
                format!(
                    "it had waited {} s for {}",
                    waited.as_secs(),
                    what.describe()
                )
            })
    }

    /// Reports overdue waits until `stop` fires: each is logged, and sent on `events` when
    /// there is room (the watchdog never waits on the stream it watches).
    pub fn spawn_reporter(
        &self,
        events: mpsc::Sender<AgentEvent>,
        stop: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let watchdog = self.clone();
        let tick = (self.inner.bound / 4).clamp(Duration::from_millis(20), Duration::from_secs(5));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(tick);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                for event in watchdog.overdue(Instant::now()) {
                    if let EventKind::Waiting(report) = &event.kind {
                        tracing::warn!(
                            agent = %event.agent.agent_id,
                            "has waited {} ms for {}",
                            report.waited_ms,
                            report.waiting_for
                        );
                    }
                    let _ = events.try_send(event);
                }
            }
        })
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WaitingFor {
        WaitingFor::Model { model: "m".into() }
    }

    #[test]
    fn a_wait_is_reported_at_its_bound_then_at_each_doubling() {
        let dog = Watchdog::new(Duration::from_secs(10));
        let guard = dog.watch(&AgentRef::main(), model());
        let start = Instant::now();
        assert!(dog.overdue(start + Duration::from_secs(9)).is_empty());
        let due = dog.overdue(start + Duration::from_secs(11));
        assert_eq!(due.len(), 1);
        let EventKind::Waiting(report) = &due[0].kind else {
            panic!("not a wait report");
        };
        assert_eq!(report.kind, "model");
        assert!(report.waiting_for.contains("model m"));
        // Not again until twice the bound.
        assert!(dog.overdue(start + Duration::from_secs(15)).is_empty());
        assert_eq!(dog.overdue(start + Duration::from_secs(21)).len(), 1);
        drop(guard);
        assert!(dog.overdue(start + Duration::from_secs(100)).is_empty());
        assert_eq!(dog.waiting(), 0);
    }

    #[test]
    fn a_result_can_name_what_its_agent_waited_for() {
        let dog = Watchdog::new(Duration::from_millis(1));
        let child = AgentRef::main();
        let _wait = dog.watch(
            &child,
            WaitingFor::Child {
                agent_id: "a1".into(),
            },
        );
        std::thread::sleep(Duration::from_millis(5));
        let said = dog.overdue_for(&child.agent_id).expect("overdue");
        assert!(said.contains("the subagent a1"), "{said}");
        assert!(dog.overdue_for("someone-else").is_none());
    }

    #[tokio::test]
    async fn the_reporter_sends_overdue_waits_without_blocking_on_a_full_stream() {
        let dog = Watchdog::new(Duration::from_millis(30));
        let (tx, mut rx) = mpsc::channel(1);
        let stop = CancellationToken::new();
        let reporter = dog.spawn_reporter(tx.clone(), stop.clone());
        let _a = dog.watch(&AgentRef::main(), model());
        let _b = dog.watch(&AgentRef::main(), WaitingFor::Output);
        let first = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("a report within the test's bound")
            .expect("the channel is open");
        assert!(matches!(first.kind, EventKind::Waiting(_)));
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(30), reporter)
            .await
            .expect("the reporter stops when told")
            .expect("no panic");
    }
}
