//! The one place fleet runs `git`. No git library creates worktrees, and the command line is what
//! users debug with, so every operation is a `git` process; this module gives them a clean
//! environment, turns failures into [`IsolationError::Git`] naming the command and the folder,
//! retries git's own lock races, and serialises the steps that edit shared repository state
//! (registering a worktree, its branch, pruning) per repository in-process.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::OwnedMutexGuard;

use super::error::IsolationError;

/// How many times a command that lost a lock race is run in all. With the backoff below this
/// spans about three seconds, far longer than any git lock is normally held.
const ATTEMPTS: u32 = 10;
const FIRST_BACKOFF_MS: u64 = 15;
const MAX_BACKOFF_MS: u64 = 600;

/// Variables that would point git at another repository, index or work tree than the folder we
/// name (they are set when fleet itself runs from a git hook); they must not leak into our runs.
const SCRUBBED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
];

/// The author and committer of the only commits fleet makes itself: snapshot commits. Set
/// explicitly because the user's configuration may have no identity at all.
const IDENTITY: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "fleet"),
    ("GIT_AUTHOR_EMAIL", "fleet@localhost"),
    ("GIT_COMMITTER_NAME", "fleet"),
    ("GIT_COMMITTER_EMAIL", "fleet@localhost"),
];

/// One argument of a git command: a `&str`, `&Path`, `&String`… (Sync, so the futures that
/// hold them can move between threads).
pub(crate) type Arg<'a> = &'a (dyn AsRef<OsStr> + Sync);

/// What a finished git process said.
#[derive(Debug)]
pub(crate) struct GitOutput {
    pub success: bool,
    pub status: String,
    pub stdout: String,
    pub stderr: String,
}

/// A git invocation in one folder (`git -C <dir>`), optionally with a private index file or
/// fleet's commit identity.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    dir: PathBuf,
    index_file: Option<PathBuf>,
    identity: bool,
    /// Another repository's git folder to use (`GIT_DIR`), with `dir` as its work tree.
    git_dir: Option<PathBuf>,
}

impl Git {
    pub(crate) fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            index_file: None,
            identity: false,
            git_dir: None,
        }
    }

    /// Reads `dir` as the work tree of the repository whose git folder is `git_dir`: how a
    /// snapshot stages the user's files into its own repository, so that not even an object
    /// is written into the user's.
    pub(crate) fn with_git_dir(mut self, git_dir: &Path) -> Self {
        self.git_dir = Some(git_dir.to_path_buf());
        self
    }

    /// Use `index` instead of the repository's index: how a snapshot is staged without touching
    /// the user's own staging area.
    pub(crate) fn with_index(mut self, index: &Path) -> Self {
        self.index_file = Some(index.to_path_buf());
        self
    }

    /// Commit as `fleet <fleet@localhost>`.
    pub(crate) fn with_identity(mut self) -> Self {
        self.identity = true;
        self
    }

    /// Runs `git args…`; its stdout when it exits 0, else a [`IsolationError::Git`].
    pub(crate) async fn run(&self, args: &[Arg<'_>]) -> Result<String, IsolationError> {
        let out = self.output(args).await?;
        if out.success {
            Ok(out.stdout)
        } else {
            Err(self.failure(args, out))
        }
    }

    /// Runs `git args…` and returns what it said whatever its exit code, for commands whose
    /// failure is an answer (`rev-parse --verify`). Lock races are still retried.
    pub(crate) async fn output(&self, args: &[Arg<'_>]) -> Result<GitOutput, IsolationError> {
        let mut attempt = 1;
        loop {
            let out = self.once(args).await?;
            if out.success || attempt >= ATTEMPTS || !is_lock_race(&out.stderr) {
                return Ok(out);
            }
            tracing::debug!(command = %self.describe(args), attempt, "git lost a lock race; retrying");
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// The error for a failed run, naming the command and the folder.
    pub(crate) fn failure(&self, args: &[Arg<'_>], out: GitOutput) -> IsolationError {
        IsolationError::Git {
            command: self.describe(args),
            dir: self.dir.clone(),
            status: out.status,
            stderr: out.stderr.trim().to_string(),
        }
    }

    async fn once(&self, args: &[Arg<'_>]) -> Result<GitOutput, IsolationError> {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.dir);
        cmd.args(args.iter().map(|a| a.as_ref()));
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        // English messages (the lock-race test reads them), no prompts, and no optional locks:
        // a read such as `status` must not take index.lock and race a concurrent writer.
        cmd.env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0");
        if let Some(index) = &self.index_file {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(git_dir) = &self.git_dir {
            cmd.env("GIT_DIR", git_dir).env("GIT_WORK_TREE", &self.dir);
        }
        if self.identity {
            cmd.envs(IDENTITY.iter().copied());
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let out = cmd.output().await.map_err(|source| IsolationError::Spawn {
            command: self.describe(args),
            dir: self.dir.clone(),
            source,
        })?;
        Ok(GitOutput {
            success: out.status.success(),
            status: out
                .status
                .code()
                .map_or_else(|| "by signal".to_string(), |c| c.to_string()),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn describe(&self, args: &[Arg<'_>]) -> String {
        let mut words: Vec<OsString> = vec!["git".into()];
        words.extend(args.iter().map(|a| a.as_ref().to_os_string()));
        words
            .iter()
            .map(|w| w.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether git failed only because another git process held a lock it needed: `index.lock`,
/// `shallow.lock`, `config.lock`, a ref lock, or a racing `mkdir` under `.git/worktrees/`. Such
/// a failure leaves nothing behind, so running the command again is safe.
pub(crate) fn is_lock_race(stderr: &str) -> bool {
    let lock_file = stderr.contains(".lock")
        && (stderr.contains("File exists")
            || stderr.contains("Unable to create")
            || stderr.contains("could not lock")
            || stderr.contains("cannot lock"));
    lock_file
        || stderr.contains("could not lock config file")
        || stderr.contains("Another git process seems to be running")
        || (stderr.contains("worktrees/") && stderr.contains("File exists"))
        // Another process is half way through adding a worktree: its entry under
        // `.git/worktrees/` exists before its `commondir` / `gitdir` files do, and any git that
        // reads the list meanwhile trips on it.
        || (stderr.contains("worktrees/")
            && stderr.contains("failed to read")
            && (stderr.contains("commondir") || stderr.contains("gitdir")))
        // …or half way through removing one: its entry vanishes while this git walks the list.
        || (stderr.contains("worktrees/")
            && stderr.contains("Invalid path")
            && stderr.contains("No such file or directory"))
}

/// Exponential backoff with full jitter, so racing processes do not retry in step.
fn backoff(attempt: u32) -> Duration {
    let ceiling = (FIRST_BACKOFF_MS << attempt.min(10)).min(MAX_BACKOFF_MS);
    let random = uuid::Uuid::new_v4().as_u128();
    let ms = ceiling / 2 + (random % u128::from(ceiling / 2 + 1)) as u64;
    Duration::from_millis(ms)
}

/// Holds the in-process lock of one repository (keyed by its common git folder) for the life of
/// the guard. Registering a worktree creates `.git/worktrees/<name>` and a branch ref; running
/// those one at a time per repository keeps 50 spawns of one reply from racing each other at
/// all, and the retry above handles other processes. Writing and deleting the worktrees' files
/// (the slow part) happens outside it.
pub(crate) async fn repo_lock(git_dir: &Path) -> OwnedMutexGuard<()> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let lock = {
        let mut map = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        map.entry(git_dir.to_path_buf()).or_default().clone()
    };
    lock.lock_owned().await
}

/// Splits `-z` output into its non-empty fields.
pub(crate) fn nul_fields(stdout: &str) -> impl Iterator<Item = &str> {
    stdout.split('\0').filter(|f| !f.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_races_are_recognised() {
        assert!(is_lock_race(
            "fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process seems to be running in this repository"
        ));
        assert!(is_lock_race(
            "error: could not lock config file .git/config: File exists"
        ));
        assert!(is_lock_race(
            "fatal: cannot lock ref 'refs/heads/fleet/agent-1': Unable to create '/r/.git/refs/heads/fleet/agent-1.lock': File exists."
        ));
        assert!(is_lock_race(
            "fatal: could not create directory of '.git/worktrees/agent-1': File exists"
        ));
        assert!(is_lock_race(
            "fatal: Unable to create '/r/.git/shallow.lock': File exists."
        ));
    }

    #[test]
    fn real_failures_are_not_lock_races() {
        assert!(!is_lock_race(
            "fatal: a branch named 'fleet/agent-1' already exists"
        ));
        assert!(!is_lock_race(
            "fatal: not a git repository (or any of the parent directories): .git"
        ));
        assert!(!is_lock_race("fatal: '/w/agent-1' already exists"));
        assert!(is_lock_race(
            "fatal: failed to read .git/worktrees/agent-c0000002/commondir: Success"
        ));
        assert!(is_lock_race(
            "fatal: Invalid path '/r/.git/worktrees/agent-a4': No such file or directory"
        ));
    }

    #[test]
    fn backoff_stays_within_its_ceiling() {
        for attempt in 1..20 {
            let ms = backoff(attempt).as_millis() as u64;
            assert!(ms <= MAX_BACKOFF_MS, "{ms}");
        }
    }
}
