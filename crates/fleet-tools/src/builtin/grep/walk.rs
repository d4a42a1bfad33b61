//! What Glob and Grep share: turning the model's `path` into an absolute search root, the
//! walker settings both use (so the two tools agree on which files exist), per-thread result
//! collection, and running a walk off the async runtime so that cancellation stops it.
//!
//! The walk follows ripgrep's defaults with `--hidden`: `.gitignore` (inside a git repository),
//! `.ignore`, `.git/info/exclude` and the global git excludes are respected; hidden files are
//! included, because agents often need `.github/` or `.env.example`; version-control folders
//! (`.git`, `.hg`, …) are always skipped; symlinks are not followed.

use crate::permissions::ReadGuard;
use crate::{ToolContext, ToolError};
use ignore::{DirEntry, WalkBuilder};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Folders of version-control systems: never worth searching and often huge.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", ".jj", ".sl"];

/// The absolute path the model meant: `path` (default: the cwd) with `~` expanded, joined to
/// the cwd when relative, and `.`/`..` removed lexically, so results show the folder as the
/// model named it rather than where its symlinks lead.
pub(crate) fn absolute_path(path: Option<&str>, cwd: &Path) -> PathBuf {
    let given = path.map(str::trim).filter(|p| !p.is_empty());
    let joined = match given {
        None => cwd.to_path_buf(),
        Some(p) => {
            let expanded = expand_home(p);
            if expanded.is_absolute() {
                expanded
            } else {
                cwd.join(expanded)
            }
        }
    };
    normalize(&joined)
}

fn expand_home(path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (path, home) {
        ("~", Some(home)) => home,
        (p, Some(home)) if p.starts_with("~/") => home.join(&p[2..]),
        (p, _) => PathBuf::from(p),
    }
}

/// Removes `.` and resolves `..` without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A sibling of a missing `path` whose name differs only in case or extension, for a
/// "Did you mean" hint.
pub(crate) fn similar_sibling(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let wanted = path.file_name()?.to_string_lossy().to_lowercase();
    let wanted_stem = path.file_stem()?.to_string_lossy().to_lowercase();
    std::fs::read_dir(parent)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|candidate| {
            let name = candidate
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase());
            let stem = candidate
                .file_stem()
                .map(|n| n.to_string_lossy().to_lowercase());
            name.as_deref() == Some(wanted.as_str()) || stem.as_deref() == Some(&wanted_stem)
        })
}

/// The " Did you mean …?" tail of a missing-path error, or nothing.
pub(crate) fn did_you_mean(path: &Path) -> String {
    similar_sibling(path)
        .map(|p| format!(" Did you mean {}?", p.display()))
        .unwrap_or_default()
}

/// A walker over `root` with the settings described in the module docs. Entries `guard`
/// denies are left out, and a denied folder is not entered.
pub(crate) fn walker(root: &Path, cwd: &Path, guard: &Arc<ReadGuard>) -> WalkBuilder {
    let guard = guard.below(root);
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .current_dir(cwd)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !is_vcs_dir(entry) && !guard.skips(entry.path(), is_dir)
        });
    builder
}

/// Refuses a search rooted at a path the agent may not read, as Read refuses the file.
pub(crate) fn check_root(guard: &ReadGuard, root: &Path) -> Result<(), ToolError> {
    match guard.denial(root) {
        Some(denial) => Err(ToolError::ReadDenied {
            path: root.to_path_buf(),
            denial,
        }),
        None => Ok(()),
    }
}

fn is_vcs_dir(entry: &DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_dir())
        && entry
            .file_name()
            .to_str()
            .is_some_and(|name| VCS_DIRS.contains(&name))
}

/// Set when the caller stops waiting (cancelled or dropped); the walk polls it per entry. A
/// plain atomic because `CancellationToken::is_cancelled` takes a lock, too dear per file.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Raises the flag when the async side goes away, so a dropped call also stops its walk.
struct RaiseOnDrop(StopFlag);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Runs `work` on the blocking pool and returns its result, or `Cancelled` as soon as the
/// agent's token fires (the walk then stops at its next entry).
pub(crate) async fn run_blocking<T, F>(ctx: &ToolContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(StopFlag) -> Result<T, ToolError> + Send + 'static,
{
    let stop = StopFlag::default();
    let _raise = RaiseOnDrop(stop.clone());
    let task = crate::builtin::file_jobs::run(move || work(stop));
    tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        joined = task => joined.map_err(|err| {
            ToolError::Internal {
                message: format!("The search stopped unexpectedly: {err}"),
                source: Some(Box::new(err)),
            }
        })?,
    }
}

/// Each walker thread keeps its results in `local` and hands them over once, when the thread
/// finishes and drops its visitor, so threads never contend for a lock per file.
pub(crate) struct Collector<'s, T> {
    pub(crate) local: Vec<T>,
    shared: &'s Mutex<Vec<T>>,
}

impl<'s, T> Collector<'s, T> {
    pub(crate) fn new(shared: &'s Mutex<Vec<T>>) -> Self {
        Self {
            local: Vec::new(),
            shared,
        }
    }
}

impl<T> Drop for Collector<'_, T> {
    fn drop(&mut self) {
        if self.local.is_empty() {
            return;
        }
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.append(&mut self.local);
    }
}

/// Takes the merged results out of the shared list after the walk.
pub(crate) fn into_results<T>(shared: Mutex<Vec<T>>) -> Vec<T> {
    shared.into_inner().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_cwd_and_lose_dots() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            absolute_path(Some("./src/../lib"), cwd),
            PathBuf::from("/work/project/lib")
        );
        assert_eq!(absolute_path(None, cwd), PathBuf::from("/work/project"));
        assert_eq!(
            absolute_path(Some("  "), cwd),
            PathBuf::from("/work/project")
        );
        assert_eq!(
            absolute_path(Some("/etc/./x"), cwd),
            PathBuf::from("/etc/x")
        );
    }
}
