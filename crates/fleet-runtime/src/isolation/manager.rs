//! Making and ending worktrees: [`WorktreeManager`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use fleet_store::{project_slug, FleetHome};

use super::error::IsolationError;
use super::git::{repo_lock, Git};
use super::record::Record;
use super::repo::{self, Checkout};
use super::{inspect, Outcome, Worktree, WorktreeKind};

/// Longest label part of a snapshot folder name.
const MAX_LABEL: usize = 24;

/// Makes, ends, lists and cleans fleet's worktrees under `$FLEET_HOME/worktrees`.
#[derive(Debug, Clone)]
pub struct WorktreeManager {
    root: PathBuf,
}

impl WorktreeManager {
    pub fn new(home: &FleetHome) -> Self {
        Self {
            root: home.root().join("worktrees"),
        }
    }

    /// `$FLEET_HOME/worktrees`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A new worktree on branch `fleet/agent-<id8>` from the current HEAD of the checkout that
    /// holds `caller_cwd` (not `origin/HEAD`). A detached HEAD is fine: the branch starts at that
    /// commit. Refused with a clear error: a folder outside git, a bare repository, a repository
    /// without commits. Should `agent-<id8>` be taken already (a kept worktree of an agent whose
    /// id shares its first eight characters), the whole id is used instead.
    pub async fn create_for_agent(
        &self,
        caller_cwd: &Path,
        agent_id: &str,
    ) -> Result<Worktree, IsolationError> {
        let checkout = repo::resolve(caller_cwd).await?;
        let base = checkout.head_commit()?.to_string();
        let full = sanitize(agent_id);
        if full.is_empty() {
            return Err(IsolationError::BadId {
                id: agent_id.to_string(),
            });
        }
        let short: String = full.chars().take(8).collect();
        let repo_dir = self.repo_dir(&checkout).await?;
        let git = Git::at(&checkout.root);

        let _guard = repo_lock(&checkout.git_dir).await;
        let mut chosen = None;
        for name in [&short, &full] {
            let path = repo_dir.join(format!("agent-{name}"));
            let branch = format!("fleet/agent-{name}");
            if !taken(&git, &path, &branch).await? {
                chosen = Some((path, branch));
                break;
            }
        }
        let Some((path, branch)) = chosen else {
            return Err(IsolationError::AlreadyExists {
                id: agent_id.to_string(),
                path: repo_dir.join(format!("agent-{full}")),
            });
        };
        let record = Record {
            kind: WorktreeKind::Agent,
            agent_id: agent_id.to_string(),
            path: path.clone(),
            cwd: path.join(&checkout.prefix),
            repo_root: checkout.root.clone(),
            git_dir: checkout.git_dir.clone(),
            branch: Some(branch.clone()),
            base_commit: base.clone(),
            created_at: Record::now(),
            pid: std::process::id(),
        };
        record.save().await?;
        if let Err(e) = add_agent_worktree(&git, &path, &branch, &base).await {
            let _ = Record::remove(&path).await;
            return Err(e);
        }
        drop(_guard);
        populate(&record).await?;
        self.opened(record).await
    }

    /// A throwaway detached worktree holding the current state of the checkout that holds
    /// `caller_cwd`, uncommitted and untracked (not ignored) files included. The user's index and
    /// working tree are not touched: the state is staged into a private copy of the index
    /// (`GIT_INDEX_FILE`), written as a tree, committed with `commit-tree` (HEAD as parent, if
    /// any), and that commit checked out with `git worktree add --detach`. Works in a repository
    /// without commits too. End it with [`Self::discard`].
    pub async fn create_snapshot(
        &self,
        caller_cwd: &Path,
        label: &str,
    ) -> Result<Worktree, IsolationError> {
        let checkout = repo::resolve(caller_cwd).await?;
        let repo_dir = self.repo_dir(&checkout).await?;
        let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        let label_part: String = sanitize(label).chars().take(MAX_LABEL).collect();
        let name = match label_part.is_empty() {
            true => format!("snapshot-{tag}"),
            false => format!("snapshot-{label_part}-{tag}"),
        };
        let path = repo_dir.join(name);
        let mut record = Record {
            kind: WorktreeKind::Snapshot,
            agent_id: label.to_string(),
            path: path.clone(),
            cwd: path.join(&checkout.prefix),
            repo_root: checkout.root.clone(),
            // The snapshot is a repository of its own; nothing of it lives in the user's.
            git_dir: path.join(".git"),
            branch: None,
            base_commit: checkout.head.clone().unwrap_or_default(),
            created_at: Record::now(),
            pid: std::process::id(),
        };
        // Written first, so a snapshot left by a killed run is still found and cleaned.
        record.save().await?;
        match snapshot_clone(&checkout, &path, label, true).await {
            Ok(commit) => {
                record.base_commit = commit;
                record.save().await?;
                self.opened(record).await
            }
            Err(e) => {
                let _ = tokio::fs::remove_dir_all(&path).await;
                let _ = Record::remove(&path).await;
                Err(e)
            }
        }
    }

    /// Ends an agent's worktree. When HEAD has not moved and nothing is modified, staged or
    /// untracked, the worktree and its branch are removed ([`Outcome::Removed`]); otherwise both
    /// are kept ([`Outcome::Kept`]) with a report of what changed.
    pub async fn finish(&self, wt: &Worktree) -> Result<Outcome, IsolationError> {
        let changes = inspect::changes(&wt.path).await?;
        if changes.unchanged(&wt.base_commit) {
            match remove_worktree(&wt.git_dir, &wt.path, false).await {
                Ok(()) => {
                    if let Some(branch) = &wt.branch {
                        remove_branch(&wt.git_dir, branch, Some(&wt.base_commit)).await?;
                    }
                    Record::remove(&wt.path).await?;
                    closed(&wt.path);
                    return Ok(Outcome::Removed);
                }
                // Something was written between the look and the removal: keep it after all.
                Err(IsolationError::Git { stderr, .. })
                    if stderr.contains("modified or untracked files") => {}
                Err(e) => return Err(e),
            }
        }
        let changes = inspect::changes(&wt.path).await?;
        let report =
            inspect::report(&wt.path, wt.branch.as_deref(), &wt.base_commit, changes).await?;
        closed(&wt.path);
        Ok(Outcome::Kept(report))
    }

    /// Removes a worktree whatever it holds (a snapshot, or an agent's work the caller chose to
    /// drop), and its branch if it has one.
    pub async fn discard(&self, wt: &Worktree) -> Result<(), IsolationError> {
        if wt.kind == WorktreeKind::Snapshot {
            // A repository of its own, registered nowhere: deleting it is all there is.
            match tokio::fs::remove_dir_all(&wt.path).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(IsolationError::io("remove", &wt.path, e)),
            }
            Record::remove(&wt.path).await?;
            closed(&wt.path);
            return Ok(());
        }
        remove_worktree(&wt.git_dir, &wt.path, true).await?;
        if let Some(branch) = &wt.branch {
            remove_branch(&wt.git_dir, branch, None).await?;
        }
        Record::remove(&wt.path).await?;
        closed(&wt.path);
        Ok(())
    }

    /// `$FLEET_HOME/worktrees/<slug of the repository's main checkout>`, created.
    async fn repo_dir(&self, checkout: &Checkout) -> Result<PathBuf, IsolationError> {
        let dir = self.root.join(project_slug(&checkout.main_root()));
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| IsolationError::io("create", &dir, e))?;
        Ok(dir)
    }

    /// The worktree of a freshly added record, with the caller's cwd created inside it (it may
    /// be a folder git does not track, such as an empty or ignored one).
    async fn opened(&self, record: Record) -> Result<Worktree, IsolationError> {
        tokio::fs::create_dir_all(&record.cwd)
            .await
            .map_err(|e| IsolationError::io("create", &record.cwd, e))?;
        active().insert(record.path.clone());
        Ok(Worktree {
            path: record.path,
            cwd: record.cwd,
            repo_root: record.repo_root,
            branch: record.branch,
            base_commit: record.base_commit,
            kind: record.kind,
            git_dir: record.git_dir,
        })
    }
}

/// Worktrees this process made and has not ended: `clean` leaves them to their agents.
pub(crate) fn active() -> std::sync::MutexGuard<'static, HashSet<PathBuf>> {
    static ACTIVE: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    ACTIVE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn closed(path: &Path) {
    active().remove(path);
}

/// Keeps ASCII letters, digits, `-` and `_`, so an id is safe in a folder and a branch name.
fn sanitize(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '-',
        })
        .collect::<String>()
        .trim_matches('-')
        .to_string()
}

/// Whether a worktree folder, its record or its branch already exists.
async fn taken(git: &Git, path: &Path, branch: &str) -> Result<bool, IsolationError> {
    if path.exists() || Record::path_for(path).exists() {
        return Ok(true);
    }
    let refname = format!("refs/heads/{branch}");
    let out = git
        .output(&[&"rev-parse", &"--verify", &"-q", &refname])
        .await?;
    Ok(out.success)
}

/// Creates the branch, then registers the worktree on it (files come later, see [`populate`]).
/// Two steps rather than `worktree add -b`, so a
/// lock race retried by the runner never meets a branch its own failed attempt left behind.
async fn add_agent_worktree(
    git: &Git,
    path: &Path,
    branch: &str,
    base: &str,
) -> Result<(), IsolationError> {
    git.run(&[&"branch", &"--no-track", &branch, &base]).await?;
    let added = git
        .run(&[
            &"worktree",
            &"add",
            &"--quiet",
            &"--no-checkout",
            &path,
            &branch,
        ])
        .await;
    if added.is_err() {
        let refname = format!("refs/heads/{branch}");
        let _ = git.run(&[&"update-ref", &"-d", &refname, &base]).await;
    }
    added.map(drop)
}

/// Checks out the files of a worktree registered with `--no-checkout`. Registration is the only
/// step that needs the repository lock; writing the files (the slow part) runs outside it, so
/// many worktrees are populated at once. Should it fail, the worktree, its branch and its record
/// are removed again: a half-made worktree is never handed out.
async fn populate(record: &Record) -> Result<(), IsolationError> {
    let checkout = Git::at(&record.path)
        .run(&[&"reset", &"--hard", &"--quiet"])
        .await;
    if let Err(e) = checkout {
        let _ = remove_worktree(&record.git_dir, &record.path, true).await;
        if let Some(branch) = &record.branch {
            let _ = remove_branch(&record.git_dir, branch, Some(&record.base_commit)).await;
        }
        let _ = Record::remove(&record.path).await;
        return Err(e);
    }
    Ok(())
}

/// Makes the snapshot at `path`: a clone sharing the user's objects read-only
/// (`--shared`), the user's files as they are now staged into the clone's own index and object
/// store (the user's index copied first, so unchanged files are not hashed again), committed,
/// and checked out (unless `check_out` is false: a snapshot made only to be bundled). Nothing
/// is written into the user's repository, not even an object. Returns the snapshot commit.
pub(super) async fn snapshot_clone(
    checkout: &Checkout,
    path: &Path,
    label: &str,
    check_out: bool,
) -> Result<String, IsolationError> {
    let parent = path.parent().unwrap_or(path);
    Git::at(parent)
        .run(&[
            &"clone",
            &"--quiet",
            &"--shared",
            &"--no-checkout",
            &checkout.root,
            &path,
        ])
        .await?;
    let git_dir = path.join(".git");
    let index = git_dir.join("index");
    let staging = Git::at(&checkout.root)
        .with_git_dir(&git_dir)
        .with_index(&index);
    let copied = tokio::fs::copy(&checkout.index, &index).await.is_ok();
    if !copied {
        start_from_head(&staging, checkout).await?;
    }
    if let Err(e) = staging.run(&[&"add", &"-A"]).await {
        if !copied {
            return Err(e);
        }
        tracing::debug!(error = %e, "the copied index was refused; staging from HEAD");
        let _ = tokio::fs::remove_file(&index).await;
        start_from_head(&staging, checkout).await?;
        staging.run(&[&"add", &"-A"]).await?;
    }
    let tree = staging.run(&[&"write-tree"]).await?;
    let tree = tree.trim();
    let message = format!("fleet snapshot: {label}");
    let committer = Git::at(path).with_identity();
    let commit = match &checkout.head {
        Some(head) => {
            committer
                .run(&[&"commit-tree", &tree, &"-p", head, &"-m", &message])
                .await?
        }
        None => {
            committer
                .run(&[&"commit-tree", &tree, &"-m", &message])
                .await?
        }
    };
    let commit = commit.trim().to_string();
    // The index still describes the user's files; the snapshot's own checkout starts afresh.
    let _ = tokio::fs::remove_file(&index).await;
    if check_out {
        Git::at(path)
            .run(&[&"checkout", &"--quiet", &"--force", &"--detach", &commit])
            .await?;
    }
    Ok(commit)
}

async fn start_from_head(git: &Git, checkout: &Checkout) -> Result<(), IsolationError> {
    if let Some(head) = &checkout.head {
        git.run(&[&"read-tree", head]).await?;
    }
    Ok(())
}

/// Unregisters and deletes a worktree folder (`git worktree remove`, with `--force --force`
/// when `force`); a folder already gone is pruned from git's list instead.
///
/// Removal does not take the repository lock: it touches only the worktree's own folders
/// (`.git/worktrees/<name>` and the checkout), and deleting files is the slow part, so removals
/// run side by side (50 serial removals of a 2,000-file checkout took ~16 s on the 2-core test
/// machine, 50 parallel ones ~2 s). Pruning, which edits every stale entry, is serialised.
pub(crate) async fn remove_worktree(
    git_dir: &Path,
    path: &Path,
    force: bool,
) -> Result<(), IsolationError> {
    let git = Git::at(git_dir);
    if !path.exists() {
        let _guard = repo_lock(git_dir).await;
        git.run(&[&"worktree", &"prune"]).await?;
        return Ok(());
    }
    if force {
        git.run(&[&"worktree", &"remove", &"--force", &"--force", &path])
            .await?;
    } else {
        git.run(&[&"worktree", &"remove", &path]).await?;
    }
    Ok(())
}

/// Deletes a fleet branch; with `expected`, only while it still points there (a branch someone
/// moved meanwhile holds work and stays). A branch already gone is fine.
pub(crate) async fn remove_branch(
    git_dir: &Path,
    branch: &str,
    expected: Option<&str>,
) -> Result<(), IsolationError> {
    let git = Git::at(git_dir);
    let refname = format!("refs/heads/{branch}");
    let exists = git
        .output(&[&"rev-parse", &"--verify", &"-q", &refname])
        .await?;
    if !exists.success {
        return Ok(());
    }
    let _guard = repo_lock(git_dir).await;
    let out = match expected {
        Some(old) => git.output(&[&"update-ref", &"-d", &refname, &old]).await?,
        None => git.output(&[&"update-ref", &"-d", &refname]).await?,
    };
    if !out.success {
        tracing::warn!(branch, stderr = %out.stderr.trim(), "kept a fleet branch that moved");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn ids_become_safe_names() {
        assert_eq!(sanitize("a1b2c3d4e5f6a7b8"), "a1b2c3d4e5f6a7b8");
        assert_eq!(sanitize("reviewer@team"), "reviewer-team");
        assert_eq!(sanitize("../x"), "x");
        assert_eq!(sanitize("@@"), "");
    }
}
