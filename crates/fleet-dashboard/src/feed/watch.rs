//! Watching the store with inotify: one instance, read by a tokio task through `AsyncFd`,
//! so nothing polls. Each event names a folder (by its watch) and a file; the folder's role
//! says what to re-read:
//!
//! | folder | on | re-reads |
//! |---|---|---|
//! | `projects/<slug>/` | a transcript or lock written, a session folder made | the new bytes / liveness |
//! | `projects/<slug>/<id>/subagents/` | a sidechain written | its new bytes |
//! | `teams/<team>/`, `…/inboxes/`, `tasks/<team>/` | config replaced, mail, a task | the team |
//! | `worktrees/<slug>/` | a record written | the record |
//!
//! A folder made later is watched as soon as its parent reports it, and then listed, so files
//! written before the watch took are read too. Session folders of sessions idle for a day are
//! only watched once their main transcript changes again, to spare the kernel's watch budget.
//! If the kernel's queue overflows, everything is read again (only new bytes, by cursor).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};
use tokio::io::unix::AsyncFd;

use super::store::{classify, list_dir, StorePath};
use crate::error::DashboardError;
use crate::hub::{lock, Inner};

/// Session folders of sessions written within this long are watched from the start.
const RECENT: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    Root,
    Projects,
    Project,
    SessionDir,
    Subagents,
    Teams,
    Team(String),
    Inboxes(String),
    Tasks,
    TaskList(String),
    Worktrees,
    WorktreeRepo,
}

struct Fd(Inotify);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

struct Watches {
    roles: HashMap<WatchDescriptor, (PathBuf, Role)>,
    watched: HashSet<PathBuf>,
    /// A watch was refused once (the kernel's budget): said once in the log.
    warned: bool,
}

struct Watcher {
    /// Set while `start` lists the store's folders.
    starting: AtomicBool,
    fd: AsyncFd<Fd>,
    watches: Mutex<Watches>,
}

const DIR_EVENTS: AddWatchFlags = AddWatchFlags::IN_CREATE
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_MODIFY)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_ONLYDIR);

/// Starts watching `inner`'s store (once per hub).
pub(crate) fn start(inner: &Arc<Inner>) -> Result<(), DashboardError> {
    let handle = tokio::runtime::Handle::try_current().map_err(|_| DashboardError::NoRuntime {
        what: "watching the store",
    })?;
    {
        let mut store = lock(&inner.store);
        if store.watching {
            return Ok(());
        }
        store.watching = true;
    }
    let root = inner.home.root().to_path_buf();
    std::fs::create_dir_all(&root).map_err(|e| DashboardError::io("create", &root, e))?;
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).map_err(|e| {
        DashboardError::Watch {
            action: "start inotify for",
            path: root.clone(),
            source: e,
        }
    })?;
    let fd = {
        let _guard = handle.enter();
        register(Fd(inotify)).map_err(|e| DashboardError::io("register inotify for", &root, e))?
    };
    let watcher = Arc::new(Watcher {
        starting: AtomicBool::new(true),
        fd,
        watches: Mutex::new(Watches {
            roles: HashMap::new(),
            watched: HashSet::new(),
            warned: false,
        }),
    });
    watcher.add(&root, Role::Root)?;
    for (name, role) in [
        ("projects", Role::Projects),
        ("teams", Role::Teams),
        ("tasks", Role::Tasks),
        ("worktrees", Role::Worktrees),
    ] {
        watcher.enter(inner, &root.join(name), role, true);
    }
    watcher.starting.store(false, Ordering::Relaxed);
    // What was written between the hub's first read and the watches taking, read on a
    // thread (only new bytes, by cursor) so that watching starts at once.
    let weak = Arc::downgrade(inner);
    std::thread::Builder::new()
        .name("fleet-dash-catch-up".into())
        .spawn(move || {
            if let Some(inner) = weak.upgrade() {
                if let Err(err) = super::store::scan_all(&inner) {
                    tracing::warn!("dashboard: {err}");
                }
            }
        })
        .map_err(|e| DashboardError::io("start the store reader for", &root, e))?;
    handle.spawn(run(Arc::downgrade(inner), watcher));
    Ok(())
}

async fn run(weak: Weak<Inner>, watcher: Arc<Watcher>) {
    loop {
        let Ok(mut ready) = watcher.fd.readable().await else {
            return;
        };
        let events = match ready.try_io(|fd| fd.get_ref().0.read_events().map_err(Into::into)) {
            Ok(Ok(events)) => events,
            Ok(Err(err)) => {
                tracing::warn!("dashboard: reading inotify events stopped: {err}");
                return;
            }
            Err(_would_block) => continue,
        };
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let watcher = watcher.clone();
        let handled = tokio::task::spawn_blocking(move || watcher.handle(&inner, events)).await;
        if handled.is_err() {
            return;
        }
    }
}

impl Watcher {
    fn add(&self, dir: &Path, role: Role) -> Result<bool, DashboardError> {
        let mut watches = lock(&self.watches);
        if watches.watched.contains(dir) {
            return Ok(false);
        }
        match self.fd.get_ref().0.add_watch(dir, DIR_EVENTS) {
            Ok(wd) => {
                watches.roles.insert(wd, (dir.to_path_buf(), role));
                watches.watched.insert(dir.to_path_buf());
                Ok(true)
            }
            Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => Ok(false),
            Err(source) => {
                if !std::mem::replace(&mut watches.warned, true) {
                    tracing::warn!(
                        "dashboard: cannot watch {} ({source}); changes there show on the next \
                         change elsewhere in the session",
                        dir.display()
                    );
                }
                Err(DashboardError::Watch {
                    action: "watch",
                    path: dir.to_path_buf(),
                    source,
                })
            }
        }
    }

    /// Watches `dir` in `role` and reads what it already holds (when `read`).
    fn enter(&self, inner: &Inner, dir: &Path, role: Role, read: bool) {
        if !matches!(self.add(dir, role.clone()), Ok(true)) {
            return;
        }
        if !read {
            return;
        }
        for path in list_dir(dir).unwrap_or_default() {
            self.changed(inner, &role, &path, path.is_dir(), true);
        }
    }

    fn handle(&self, inner: &Inner, events: Vec<InotifyEvent>) {
        if events
            .iter()
            .any(|e| e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW))
        {
            let root = inner.home.root().to_path_buf();
            self.enter(inner, &root.join("projects"), Role::Projects, true);
            if let Err(err) = super::store::scan_all(inner) {
                tracing::warn!("dashboard: {err}");
            }
            return;
        }
        // Each file once per read, in order; teams once each.
        let mut seen = HashSet::new();
        let mut teams = BTreeSet::new();
        for event in events {
            let Some(name) = &event.name else {
                continue;
            };
            let Some((dir, role)) = lock(&self.watches).roles.get(&event.wd).cloned() else {
                continue;
            };
            let path = dir.join(name);
            if !seen.insert(path.clone()) {
                continue;
            }
            let is_dir = event.mask.contains(AddWatchFlags::IN_ISDIR);
            match &role {
                Role::Team(team) | Role::Inboxes(team) | Role::TaskList(team) => {
                    if role == Role::Team(team.clone()) && is_dir {
                        self.enter(inner, &path, Role::Inboxes(team.clone()), false);
                    }
                    teams.insert(team.clone());
                }
                _ => self.changed(inner, &role, &path, is_dir, false),
            }
        }
        for team in teams {
            super::teams::refresh(inner, &team);
        }
    }

    /// `path` in a watched folder of `role` appeared or changed.
    fn changed(&self, inner: &Inner, role: &Role, path: &Path, is_dir: bool, first: bool) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        match role {
            Role::Root => match name.as_str() {
                "projects" => self.enter(inner, path, Role::Projects, true),
                "teams" => self.enter(inner, path, Role::Teams, true),
                "tasks" => self.enter(inner, path, Role::Tasks, true),
                "worktrees" => self.enter(inner, path, Role::Worktrees, true),
                _ => {}
            },
            Role::Projects if is_dir => self.enter(inner, path, Role::Project, true),
            Role::Project if is_dir => {
                let recent = !first || modified_within(&path.with_extension("jsonl"), RECENT);
                if recent {
                    self.enter(inner, path, Role::SessionDir, true);
                }
            }
            // Files there when watching starts are read by the catch-up scan, not here, so
            // `watch` returns without reading the store.
            Role::Project | Role::Subagents if first && self.starting.load(Ordering::Relaxed) => {}
            Role::Project => {
                super::store::refresh(inner, path);
                let projects = inner.home.projects_dir();
                let transcript =
                    matches!(classify(&projects, path), Some(StorePath::Transcript(..)));
                if transcript && !first {
                    // A session written again: its folder is watched from now on.
                    let session_dir = path.with_extension("");
                    if session_dir.is_dir() {
                        self.enter(inner, &session_dir, Role::SessionDir, true);
                    }
                }
            }
            Role::SessionDir if name == "subagents" => {
                self.enter(inner, path, Role::Subagents, true);
            }
            Role::Subagents => super::store::refresh(inner, path),
            Role::Teams if is_dir && !name.contains(".deleted-") => {
                self.enter(inner, path, Role::Team(name.clone()), false);
                self.enter(
                    inner,
                    &path.join("inboxes"),
                    Role::Inboxes(name.clone()),
                    false,
                );
                super::teams::refresh(inner, &name);
            }
            Role::Tasks if is_dir => {
                self.enter(inner, path, Role::TaskList(name.clone()), false);
                super::teams::refresh(inner, &name);
            }
            Role::Worktrees if is_dir => self.enter(inner, path, Role::WorktreeRepo, true),
            Role::WorktreeRepo => super::worktrees::refresh(inner, path),
            _ => {}
        }
    }
}

/// tokio deprecated its safe `AsyncFd` constructors for an `unsafe` one whose condition is
/// that the wrapped value keeps one open descriptor for as long as it is watched. [`Fd`] owns
/// the inotify descriptor and closes it only when dropped with the `AsyncFd`, and this
/// workspace forbids `unsafe`, so the deprecated safe entry is used on purpose (as in
/// fleet-runtime's pid watch).
#[allow(deprecated)]
fn register(fd: Fd) -> std::io::Result<AsyncFd<Fd>> {
    AsyncFd::new(fd)
}

fn modified_within(path: &Path, window: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < window)
}
