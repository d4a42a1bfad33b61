//! Repository state as git bundles: the caller's HEAD plus a snapshot commit of its
//! uncommitted and untracked files going out, a job's branch coming back. Only the `git`
//! command line is used, with argv words, never a shell.
//! PLACEHOLDER: signatures agreed; bodies are written in the client helper's branch.

use crate::error::RemoteError;
use std::path::{Path, PathBuf};

/// A repository state ready to upload.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub head: String,
    /// HEAD itself when nothing was uncommitted, else a commit on top of it.
    pub snapshot: String,
    pub branch: Option<String>,
    /// The bundle file (in a temporary folder the caller removes).
    pub bundle: PathBuf,
}

/// Bundles `repo`'s state into `scratch`; `None` when `repo` is not in a git repository.
pub async fn snapshot(_repo: &Path, _scratch: &Path) -> Result<Option<Snapshot>, RemoteError> {
    unimplemented!("PLACEHOLDER")
}

/// Makes a fresh checkout of `commit` from `bundle` in `dir` (which does not exist yet).
pub async fn checkout(_bundle: &Path, _commit: &str, _dir: &Path) -> Result<(), RemoteError> {
    unimplemented!("PLACEHOLDER")
}

/// Commits everything the job changed in `checkout` on `branch` (based on `base`) and
/// bundles that branch into `out`; `None` (and no file) when nothing changed. Returns the
/// commit.
pub async fn result_bundle(
    _checkout: &Path,
    _base: &str,
    _branch: &str,
    _out: &Path,
) -> Result<Option<String>, RemoteError> {
    unimplemented!("PLACEHOLDER")
}

/// Fetches `branch` from `bundle` into `repo` as the same branch name.
pub async fn fetch_into(_repo: &Path, _bundle: &Path, _branch: &str) -> Result<(), RemoteError> {
    unimplemented!("PLACEHOLDER")
}
