//! The hub: the state of every session the dashboard shows, fed by the store (transcripts,
//! team files, inboxes, task lists, worktree records under `$FLEET_HOME`, watched with inotify)
//! and by the live events of a session started with `--dashboard` ([`LiveFeed`]).
//!
//! # Batching
//!
//! A change marks what it touched in its session's model and queues the session once; a
//! flusher thread turns each queued session's marks into one [`Batch`] at most every
//! [`TICK`] (200 ms) and broadcasts it as an `Arc`, so a subscriber costs one pointer per batch
//! and 10,000 agents changing at once make one batch per tick, not 10,000 messages. The thread
//! sleeps on a condition variable while nothing changes (no timer runs then), and ends with the
//! hub.
//!
//! # Liveness
//!
//! A session started with `--dashboard` is live from `attach_live` to [`LiveFeed::ended`]. A
//! session seen only in the store is live while its lock file (`<id>.lock`, held by the
//! process running it) names a running process; a lock naming a dead one (a process killed
//! with SIGKILL cannot remove it) makes it ended at once, however recently it wrote, and a
//! lock seen removed ends it too. Without a pid to ask, it is live while its files were written
//! in the last 60 s. This is re-checked on every change to its files or its lock and every
//! 10 s while it is live, so a killed process's session turns `ended` within about ten
//! seconds. When a session ends, agents
//! still marked as working are settled: the main agent (and teammates) `done`, subagents caught
//! mid-work `killed` ("the session ended before it finished").

mod agents;
mod remote;
mod session;
pub(crate) mod transcript;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, watch};

pub(crate) use agents::{is_terminal, new_node, teammate_name};
pub(crate) use session::{AgentCall, SessionModel};

use crate::api::{self, Batch, PermissionRequest, SessionSummary, Snapshot};
use crate::error::DashboardError;
use crate::feed::live::LiveFeed;
use crate::feed::store::StoreState;

/// At most one batch per session per tick.
pub const TICK: Duration = Duration::from_millis(200);
/// How often store-live sessions are re-checked for a dead process while any is live.
const RECHECK: Duration = Duration::from_secs(10);
/// Changes to a session's figures (cost, updated) tick the session list at most this often;
/// a new session or one going live or ended ticks it at the next batch.
const LIST_MINOR: Duration = Duration::from_secs(1);

/// A poisoned lock only means a thread panicked while holding it; the models are always left
/// whole between field writes, so carry on.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub(crate) type Shared = Arc<Mutex<SessionModel>>;

/// The state of every session; cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct Hub {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub home: fleet_store::FleetHome,
    pub sessions: RwLock<HashMap<String, Shared>>,
    pub list_tx: watch::Sender<u64>,
    pub flusher: Arc<Flusher>,
    pub catalog: Arc<fleet_model::Catalog>,
    pub store: Mutex<StoreState>,
    /// Held while a transcript file is read and applied (see `feed::store`).
    pub reading: Mutex<()>,
    /// The one session this hub shows (`--dashboard`), or `None` for all of the store.
    pub only: Option<String>,
}

impl Inner {
    /// Whether the store's files of session `id` are read at all.
    pub(crate) fn shows(&self, id: &str) -> bool {
        self.only.as_deref().is_none_or(|only| only == id)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let mut queue = lock(&self.flusher.queue);
        queue.shutdown = true;
        self.flusher.cv.notify_all();
    }
}

/// The sessions waiting for their next batch, and the flusher thread's wake-up.
#[derive(Default)]
pub(crate) struct Flusher {
    queue: Mutex<FlushQueue>,
    cv: Condvar,
}

#[derive(Default)]
struct FlushQueue {
    sessions: Vec<Shared>,
    shutdown: bool,
}

impl Flusher {
    /// Queues `model` (whose lock the caller holds as `guard`) for the next batch if it has
    /// changes and is not queued yet: one queue entry per session per batch.
    pub fn queue(&self, shared: &Shared, guard: &mut SessionModel) {
        if guard.queued || !guard.needs_flush() {
            return;
        }
        guard.queued = true;
        let mut queue = lock(&self.queue);
        queue.sessions.push(shared.clone());
        self.cv.notify_one();
    }
}

impl Inner {
    pub fn session(&self, id: &str) -> Option<Shared> {
        self.sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// The session `id`, made (and announced to the list) if new.
    pub fn session_or_new(&self, id: &str, folder: &str, t_ms: u64) -> Shared {
        if let Some(found) = self.session(id) {
            return found;
        }
        let mut sessions = self.sessions.write().unwrap_or_else(|p| p.into_inner());
        sessions
            .entry(id.to_owned())
            .or_insert_with(|| Arc::new(Mutex::new(SessionModel::new(id, folder, t_ms))))
            .clone()
    }

    /// Runs `f` on the session's model and queues it for the next batch when it changed.
    pub fn edit<R>(&self, shared: &Shared, f: impl FnOnce(&mut SessionModel) -> R) -> R {
        let mut guard = lock(shared);
        let out = f(&mut guard);
        self.flusher.queue(shared, &mut guard);
        out
    }

    pub fn all(&self) -> Vec<Shared> {
        self.sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

impl Hub {
    /// Store-backed: the sessions under `home` (`$FLEET_HOME`), live and past. The 20 most
    /// recently written are read before this returns, the others on a thread (each appears
    /// in the list as it is read); later changes are read as they come (only new bytes) once
    /// [`Hub::watch`] runs.
    pub fn open(home: PathBuf) -> Result<Hub, DashboardError> {
        Self::open_with(home, None)
    }

    /// For one session's own dashboard (`--dashboard`): only that session's files are read.
    /// A session's process should not hold every past session of the store in memory (a
    /// few 10,000-agent runs are hundreds of megabytes); `fleet dashboard` shows those.
    pub fn open_session(home: PathBuf, session_id: &str) -> Result<Hub, DashboardError> {
        Self::open_with(home, Some(session_id.to_owned()))
    }

    fn open_with(home: PathBuf, only: Option<String>) -> Result<Hub, DashboardError> {
        let (list_tx, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            home: fleet_store::FleetHome::at(home),
            sessions: RwLock::new(HashMap::new()),
            list_tx,
            flusher: Arc::new(Flusher::default()),
            catalog: Arc::new(fleet_model::Catalog::from_env()),
            store: Mutex::new(StoreState::default()),
            reading: Mutex::new(()),
            only,
        });
        let weak = Arc::downgrade(&inner);
        let flusher = inner.flusher.clone();
        std::thread::Builder::new()
            .name("fleet-dash-flush".into())
            .spawn(move || run_flusher(weak, flusher))
            .map_err(|e| DashboardError::io("start the batch thread for", inner.home.root(), e))?;
        crate::feed::store::scan_at_open(&inner)?;
        Ok(Hub { inner })
    }

    /// Starts the inotify watcher task (needs a tokio runtime). Calling it again does nothing.
    pub fn watch(&self) -> Result<(), DashboardError> {
        crate::feed::watch::start(&self.inner)
    }

    /// In-process: the session started with `--dashboard` pushes its events here. Its store
    /// files are then only used for transcripts, so nothing is counted twice.
    pub fn attach_live(&self, session_id: &str, folder: &Path, model: Option<&str>) -> LiveFeed {
        let folder_text = folder.to_string_lossy();
        let shared = self
            .inner
            .session_or_new(session_id, &folder_text, now_ms());
        self.inner.edit(&shared, |m| {
            m.live.attached = true;
            if m.folder.is_empty() {
                m.folder = folder_text.into_owned();
            }
            if let Some(model) = model {
                m.set_model(model);
            }
            m.actions.stop_task = true;
            m.actions.answer_permission = true;
            m.summary_changed();
        });
        self.inner.store_paths_for(session_id, folder);
        LiveFeed::new(shared, self.inner.clone())
    }

    /// Every session, most recently active first.
    pub fn sessions(&self) -> Vec<SessionSummary> {
        let mut list: Vec<SessionSummary> =
            self.inner.all().iter().map(|s| lock(s).summary()).collect();
        list.sort_by(|a, b| {
            b.updated_ms
                .cmp(&a.updated_ms)
                .then_with(|| a.id.cmp(&b.id))
        });
        list
    }

    pub fn snapshot(&self, session_id: &str) -> Option<Snapshot> {
        self.inner.session(session_id).map(|s| lock(&s).snapshot())
    }

    /// Batches after `snapshot().seq`, coalesced: at most one per 200 ms per session.
    /// Subscribe before taking the snapshot and skip batches with `seq <= snapshot.seq`, so no
    /// change falls between the two (a snapshot also holds changes not yet batched; they come
    /// again, whole, in the next batch). A receiver that falls 64 batches behind gets `Lagged`
    /// and should take a new snapshot.
    pub fn subscribe(&self, session_id: &str) -> Option<broadcast::Receiver<Arc<Batch>>> {
        self.inner.session(session_id).map(|s| lock(&s).subscribe())
    }

    /// Ticks when the session list changes: at the next batch for a new session or one going
    /// live or ended, at most once a second for changed figures.
    pub fn subscribe_sessions(&self) -> watch::Receiver<u64> {
        self.inner.list_tx.subscribe()
    }

    /// The agent's conversation after entry `after` (at most 500 entries a page).
    pub fn transcript(
        &self,
        session_id: &str,
        agent_id: &str,
        after: u64,
    ) -> Result<api::TranscriptPage, DashboardError> {
        transcript::page(&self.inner, session_id, agent_id, after)
    }

    /// Ticks when that agent's transcript grows.
    pub fn subscribe_transcript(
        &self,
        session_id: &str,
        agent_id: &str,
    ) -> Option<watch::Receiver<u64>> {
        let shared = self.inner.session(session_id)?;
        let mut model = lock(&shared);
        model.agents.find(agent_id)?;
        Some(model.subscribe_transcript(agent_id))
    }

    /// Permission questions (with `--dashboard`): the live session adds and removes them.
    pub fn set_pending_permissions(&self, session_id: &str, pending: Vec<PermissionRequest>) {
        if let Some(shared) = self.inner.session(session_id) {
            self.inner.edit(&shared, |m| m.set_permissions(pending));
        }
    }
}

fn run_flusher(weak: Weak<Inner>, flusher: Arc<Flusher>) {
    let mut last_flush: Option<Instant> = None;
    let mut last_list_tick: Option<Instant> = None;
    let mut minor_pending = false;
    // Whether some session is live by the store's word, and when that was last checked.
    let mut recheck = false;
    let mut last_recheck: Option<Instant> = None;
    loop {
        {
            let mut queue = lock(&flusher.queue);
            if queue.shutdown {
                return;
            }
            if queue.sessions.is_empty() {
                let timeout = match (minor_pending, recheck) {
                    (true, _) => Some(LIST_MINOR),
                    (false, true) => Some(RECHECK),
                    (false, false) => None,
                };
                queue = match timeout {
                    Some(t) => flusher
                        .cv
                        .wait_timeout(queue, t)
                        .map_or_else(|p| p.into_inner().0, |(g, _)| g),
                    None => flusher.cv.wait(queue).unwrap_or_else(|p| p.into_inner()),
                };
                if queue.shutdown {
                    return;
                }
            }
        }
        let Some(inner) = weak.upgrade() else {
            return;
        };
        if last_recheck.is_none_or(|at| at.elapsed() >= RECHECK) {
            recheck = crate::feed::store::recheck_liveness(&inner);
            last_recheck = Some(Instant::now());
        }
        if let Some(wait) = last_flush.map(|at| TICK.saturating_sub(at.elapsed())) {
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
        }
        let queued = std::mem::take(&mut lock(&flusher.queue).sessions);
        let mut major = false;
        for shared in queued {
            let mut model = lock(&shared);
            major |= std::mem::take(&mut model.list_dirty);
            minor_pending |= model.flush();
            // A session that changed may be live by the store's word only: check it later.
            recheck = true;
        }
        last_flush = Some(Instant::now());
        let minor_due = minor_pending && last_list_tick.is_none_or(|t| t.elapsed() >= LIST_MINOR);
        if major || minor_due {
            inner.list_tx.send_modify(|n| *n += 1);
            last_list_tick = Some(Instant::now());
            minor_pending = false;
        }
    }
}
