//! The store feed: sessions under `$FLEET_HOME/projects/<slug>/`, read incrementally.
//!
//! ```text
//! projects/<slug>/<session>.jsonl                          the main agent's transcript
//! projects/<slug>/<session>.lock                           held while a process runs it
//! projects/<slug>/<session>/subagents/agent-<id>.jsonl     each subagent's (sidechain)
//! ```
//!
//! Each transcript file has a cursor (the bytes read so far and an unfinished last line), so a
//! growing file costs only its new bytes. Lines are fleet-store's own [`TranscriptEntry`] and
//! are applied by `entries.rs`. A session attached live takes its state from its events; its
//! files then only wake transcript followers.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use fleet_store::TranscriptEntry;

use super::entries;
use crate::api::{AgentKind, AgentState};
use crate::error::DashboardError;
use crate::hub::{is_terminal, lock, now_ms, Inner, SessionModel};

/// A session not known to be held by a running process stays live this long after its files
/// were last written.
pub(crate) const LIVE_WINDOW: Duration = Duration::from_secs(60);
/// Bytes read from a transcript at a time.
const CHUNK: usize = 256 * 1024;

/// What the store feed knows of the files.
#[derive(Default)]
pub(crate) struct StoreState {
    /// The inotify watcher runs (started once).
    pub watching: bool,
    files: HashMap<PathBuf, Cursor>,
    sessions: HashMap<String, SessionFiles>,
}

struct Cursor {
    offset: u64,
    partial: Vec<u8>,
}

/// Where a session's files are.
#[derive(Debug, Clone)]
pub(crate) struct SessionFiles {
    /// `projects/<slug>/<id>.jsonl`.
    pub transcript: PathBuf,
    /// When any of its files last changed (Unix ms).
    last_write_ms: u64,
    /// When its lock file was seen removed (Unix ms): the process let go of the session.
    lock_released_ms: Option<u64>,
}

impl SessionFiles {
    pub fn lock_file(&self) -> PathBuf {
        self.transcript.with_extension("lock")
    }

    /// `projects/<slug>/<id>/subagents`.
    pub fn subagents_dir(&self) -> PathBuf {
        self.transcript.with_extension("").join("subagents")
    }

    /// The transcript of agent `agent` (`main` for the session's own).
    pub fn agent_transcript(&self, agent: &str) -> PathBuf {
        if agent == "main" {
            self.transcript.clone()
        } else {
            self.subagents_dir().join(format!("agent-{agent}.jsonl"))
        }
    }
}

/// What a path in `projects/` is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StorePath {
    /// A transcript: `(session, agent)`, `main` for the session's own.
    Transcript(String, String),
    /// A session's lock file.
    Lock(String),
}

/// Reads a path under `projects/` as one of the session files, if it is one.
pub(crate) fn classify(projects: &Path, path: &Path) -> Option<StorePath> {
    let rel = path.strip_prefix(projects).ok()?;
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    let valid = |id: &str| fleet_store::validate_session_id(id).is_ok();
    match parts.as_slice() {
        [_, file] => {
            if let Some(id) = file.strip_suffix(".jsonl").filter(|id| valid(id)) {
                Some(StorePath::Transcript(id.to_owned(), "main".to_owned()))
            } else {
                let id = file.strip_suffix(".lock").filter(|id| valid(id))?;
                Some(StorePath::Lock(id.to_owned()))
            }
        }
        [_, session, "subagents", file] if valid(session) => {
            let agent = file.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
            valid(agent).then(|| StorePath::Transcript((*session).to_owned(), agent.to_owned()))
        }
        _ => None,
    }
}

impl Inner {
    /// Where session `id` started in `folder` keeps its files (a live session may have none
    /// yet).
    pub(crate) fn store_paths_for(&self, id: &str, folder: &Path) {
        let Ok(transcript) =
            fleet_store::SessionStore::new(self.home.clone()).session_path(folder, id)
        else {
            return;
        };
        lock(&self.store)
            .sessions
            .entry(id.to_owned())
            .or_insert(SessionFiles {
                transcript,
                last_write_ms: 0,
                lock_released_ms: None,
            });
    }

    pub(crate) fn session_files(&self, id: &str) -> Option<SessionFiles> {
        lock(&self.store).sessions.get(id).cloned()
    }
}

/// Sessions read before [`Hub::open`](crate::Hub::open) returns, newest first; the rest are
/// read on a thread, so opening costs the same however large the store has grown.
pub(crate) const FIRST_SESSIONS: usize = 20;

/// Every session's main transcript in the store, most recently written first.
fn sessions_on_disk(inner: &Inner) -> Result<Vec<PathBuf>, DashboardError> {
    let projects = inner.home.projects_dir();
    let mut mains = Vec::new();
    for project in list_dir(&projects)? {
        for path in list_dir(&project)? {
            if let Some(StorePath::Transcript(session, _)) = classify(&projects, &path) {
                if !inner.shows(&session) {
                    continue;
                }
                let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
                mains.push((modified, path));
            }
        }
    }
    mains.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok(mains.into_iter().map(|(_, path)| path).collect())
}

/// Reads one session: its main transcript first (so a child finds the call that started
/// it), then its sidechains.
fn read_session(inner: &Inner, main: &Path) {
    refresh(inner, main);
    for side in list_dir(&main.with_extension("").join("subagents")).unwrap_or_default() {
        refresh(inner, &side);
    }
}

/// Reads the newest sessions now and starts a thread reading the others; teams and
/// worktrees follow each part.
pub(crate) fn scan_at_open(inner: &Arc<Inner>) -> Result<(), DashboardError> {
    let mut mains = sessions_on_disk(inner)?;
    let rest = mains.split_off(mains.len().min(FIRST_SESSIONS));
    for main in &mains {
        read_session(inner, main);
    }
    super::teams::scan_all(inner);
    super::worktrees::scan_all(inner);
    recheck_liveness(inner);
    if rest.is_empty() {
        return Ok(());
    }
    let weak = Arc::downgrade(inner);
    std::thread::Builder::new()
        .name("fleet-dash-scan".into())
        .spawn(move || {
            for main in &rest {
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                read_session(&inner, main);
            }
            if let Some(inner) = weak.upgrade() {
                super::teams::scan_all(&inner);
                super::worktrees::scan_all(&inner);
                recheck_liveness(&inner);
            }
        })
        .map_err(|e| DashboardError::io("start the store reader for", inner.home.root(), e))?;
    Ok(())
}

/// Reads what is new in every session of the store (after the watches took, or after the
/// kernel dropped events), then teams and worktrees.
pub(crate) fn scan_all(inner: &Inner) -> Result<(), DashboardError> {
    for main in sessions_on_disk(inner)? {
        read_session(inner, &main);
    }
    super::teams::scan_all(inner);
    super::worktrees::scan_all(inner);
    recheck_liveness(inner);
    Ok(())
}

/// The entries of a folder; a missing folder is empty.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, DashboardError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.filter_map(|e| e.ok().map(|e| e.path())).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(DashboardError::io("list", dir, e)),
    }
}

/// A store path changed: reads what is new in it. Errors are logged, not returned: one
/// unreadable file must not stop the others.
pub(crate) fn refresh(inner: &Inner, path: &Path) {
    let projects = inner.home.projects_dir();
    match classify(&projects, path) {
        Some(StorePath::Transcript(session, _)) | Some(StorePath::Lock(session))
            if !inner.shows(&session) => {}
        Some(StorePath::Transcript(session, agent)) => {
            // A session attached live takes its state from its events: its files only wake
            // the transcript followers. Reading them too would parse a 10,000-agent
            // fan-out's sidechains a second time, in the session's own process.
            if let Some(shared) = inner.session(&session) {
                let mut m = lock(&shared);
                if m.live.attached {
                    m.tick_transcript(&agent);
                    return;
                }
            }
            if let Err(err) = read_transcript(inner, path, &session, &agent) {
                tracing::debug!("dashboard: {err}");
            }
        }
        Some(StorePath::Lock(session)) => {
            // Written (a process took the session) or removed (it let go, or was killed
            // and the next one took it over): either way liveness is decided again now.
            let files = lock(&inner.store).sessions.get_mut(&session).map(|files| {
                if lock_holder(&files.lock_file()) == Holder::Missing {
                    files.lock_released_ms = Some(now_ms());
                } else {
                    files.lock_released_ms = None;
                }
                files.clone()
            });
            if let Some(shared) = inner.session(&session) {
                inner.edit(&shared, |m| settle_liveness(m, files.as_ref()));
            }
        }
        None => {}
    }
}

fn read_transcript(
    inner: &Inner,
    path: &Path,
    session: &str,
    agent: &str,
) -> Result<(), DashboardError> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(DashboardError::io("open", path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| DashboardError::io("inspect", path, e))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    // One reader per hub at a time, so no two read the same bytes (the catch-up thread and
    // the watcher may both be at a file).
    let _reading = lock(&inner.reading);
    let (mut offset, mut partial) = {
        let mut store = lock(&inner.store);
        if agent == "main" {
            let files = store
                .sessions
                .entry(session.to_owned())
                .or_insert_with(|| SessionFiles {
                    transcript: path.to_path_buf(),
                    last_write_ms: 0,
                    lock_released_ms: None,
                });
            files.transcript = path.to_path_buf();
        }
        if let Some(files) = store.sessions.get_mut(session) {
            files.last_write_ms = files.last_write_ms.max(mtime);
        }
        let cursor = store.files.remove(path).unwrap_or(Cursor {
            offset: 0,
            partial: Vec::new(),
        });
        (cursor.offset, cursor.partial)
    };
    if meta.len() < offset {
        // Cut back (a torn write taken back): read on from the new end.
        offset = meta.len();
        partial.clear();
    }
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| DashboardError::io("seek in", path, e))?;
    let mut lines: Vec<TranscriptEntry> = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    let result = loop {
        let read = match file.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) => break Err(DashboardError::io("read", path, e)),
        };
        offset += read as u64;
        partial.extend_from_slice(&buf[..read]);
        let Some(last_nl) = partial.iter().rposition(|b| *b == b'\n') else {
            continue;
        };
        for line in partial[..last_nl].split(|b| *b == b'\n') {
            if let Ok(entry) = serde_json::from_slice::<TranscriptEntry>(line) {
                lines.push(entry);
            }
        }
        partial.drain(..=last_nl);
        if lines.len() >= 1024 {
            apply_lines(inner, session, agent, std::mem::take(&mut lines));
        }
    };
    lock(&inner.store)
        .files
        .insert(path.to_path_buf(), Cursor { offset, partial });
    apply_lines(inner, session, agent, lines);
    result
}

fn apply_lines(inner: &Inner, session: &str, agent: &str, lines: Vec<TranscriptEntry>) {
    if lines.is_empty() {
        return;
    }
    let folder = lines.first().map(|e| e.cwd.clone()).unwrap_or_default();
    let t = lines
        .first()
        .and_then(TranscriptEntry::time)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or_else(now_ms, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    let shared = inner.session_or_new(session, &folder, t);
    let files = inner.session_files(session);
    inner.edit(&shared, |m| {
        if !m.live.attached {
            for entry in &lines {
                entries::apply(m, &inner.catalog, agent, entry);
            }
        }
        m.tick_transcript(agent);
        settle_liveness(m, files.as_ref());
    });
}

/// Re-checks every store-live session (a process may have died without a word); returns
/// whether any is still live, so the caller knows to check again later. Ended sessions come
/// back to life only through a change to their files, which is checked where it is seen.
pub(crate) fn recheck_liveness(inner: &Inner) -> bool {
    let mut any = false;
    for shared in inner.all() {
        let id = {
            let m = lock(&shared);
            if !m.live.store {
                continue;
            }
            m.id.clone()
        };
        let files = inner.session_files(&id);
        inner.edit(&shared, |m| {
            settle_liveness(m, files.as_ref());
            any |= m.live.store;
        });
    }
    any
}

/// Works out whether the store says the session runs, and settles its agents when it ended.
///
/// The lock file decides when it names a process: running, the session is live however
/// long it has been quiet; gone (killed, so it could not remove its lock), it has ended
/// however recently it wrote. Without a pid to ask, the files' last write decides (live for a
/// minute after it), unless the lock was seen removed since that write.
fn settle_liveness(m: &mut SessionModel, files: Option<&SessionFiles>) {
    let window = LIVE_WINDOW.as_millis() as u64;
    let live = files.is_some_and(|f| match m.live.ended_ms {
        // Ended by its live feed: its process may still hold the lock on its way out.
        Some(ended) => {
            f.last_write_ms > ended + 1_000 && now_ms().saturating_sub(f.last_write_ms) < window
        }
        None => match lock_holder(&f.lock_file()) {
            Holder::Alive => true,
            Holder::Dead => false,
            Holder::Missing if f.lock_released_ms.is_some_and(|r| r >= f.last_write_ms) => false,
            Holder::Missing | Holder::Unknown => now_ms().saturating_sub(f.last_write_ms) < window,
        },
    });
    if live != m.live.store {
        m.live.store = live;
        m.summary_changed();
    }
    // Also for a session found ended when first read, and for lines read after it ended.
    if !live && !m.live.attached {
        settle_ended(m);
    }
}

/// The session ended: agents still marked as working did not finish (a subagent caught
/// mid-work is `killed`); the main agent and teammates are `done`.
pub(crate) fn settle_ended(m: &mut SessionModel) {
    let t = m.updated_ms;
    for i in m.agents.ids() {
        let node = &m.agents.at(i).node;
        if is_terminal(node.state) {
            continue;
        }
        match (node.kind, node.state) {
            (AgentKind::Main | AgentKind::Teammate, _) | (_, AgentState::Idle) => {
                m.agents.end(i, AgentState::Done, t, None)
            }
            _ => m.agents.end(
                i,
                AgentState::Killed,
                t,
                Some("the session ended before it finished".into()),
            ),
        }
    }
}

/// What a session's lock file says of the process that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// No lock file: no process holds the session (or it never took a lock).
    Missing,
    /// A lock file without a pid (being written, or unreadable).
    Unknown,
    Alive,
    /// The pid it names has exited (a zombie counts as exited).
    Dead,
}

/// Asks the process a session's lock file names.
fn lock_holder(lock_file: &Path) -> Holder {
    match fleet_store::SessionLock::holder_pid(lock_file) {
        Ok(Some(pid)) if fleet_store::process_alive(pid) => Holder::Alive,
        Ok(Some(_)) => Holder::Dead,
        Ok(None) => Holder::Unknown,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Holder::Missing,
        Err(_) => Holder::Unknown,
    }
}
