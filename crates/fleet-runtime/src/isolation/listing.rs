//! Finding every fleet worktree (all repositories) and cleaning them up: what
//! `fleet worktrees list|clean` stands on. Worktrees are found through their records, so one
//! left by a killed run is found too, even when its folder or its registration is gone.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::IsolationError;
use super::git::{repo_lock, Git};
use super::inspect;
use super::manager::{active, remove_branch, remove_worktree, WorktreeManager};
use super::record::Record;
use super::WorktreeKind;
use fleet_store::process_alive;

/// Where a recorded worktree stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeState {
    /// Folder and git's registration both present.
    Present,
    /// The folder was deleted (by hand, or a run died before git made it); its registration is
    /// pruned by `list`.
    FolderMissing,
    /// The folder exists but git no longer knows it as a worktree.
    Unregistered,
    /// The repository it belonged to is gone.
    RepoMissing,
}

/// One fleet worktree, as `fleet worktrees list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeInfo {
    pub kind: WorktreeKind,
    /// The agent id (a snapshot's label).
    pub agent_id: String,
    pub repo_root: PathBuf,
    pub git_dir: PathBuf,
    pub branch: Option<String>,
    pub path: PathBuf,
    pub base_commit: String,
    /// HEAD of the worktree (or the branch tip when the folder is gone); `None` when unknown.
    pub head_commit: Option<String>,
    /// Whether it holds anything removal would lose: commits, modified, staged or untracked
    /// files. Unknown counts as changed.
    pub changed: bool,
    pub state: WorktreeState,
    /// Made by a fleet process that is still running (an agent may be working in it).
    pub in_use: bool,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub age_secs: u64,
}

/// Which worktrees `clean` considers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CleanTarget {
    All,
    /// One worktree, by agent id, its id8 (`a1b2c3d4`), folder name, branch or full path.
    One(String),
}

/// Why `clean` left a worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum KeepReason {
    /// It holds work; only `force` removes it.
    Changed,
    /// A running fleet process made it; only `force` removes it.
    InUse { pid: u32 },
    /// Removing it failed.
    Failed { error: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptWorktree {
    pub worktree: WorktreeInfo,
    #[serde(flatten)]
    pub reason: KeepReason,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CleanReport {
    pub removed: Vec<WorktreeInfo>,
    pub kept: Vec<KeptWorktree>,
}

impl WorktreeManager {
    /// Every fleet worktree under `$FLEET_HOME/worktrees`, all repositories, oldest record path
    /// first. Worktrees whose folder is gone are reported as such and `git worktree prune` is run
    /// for their repositories. An unreadable record is skipped with a warning.
    pub async fn list(&self) -> Result<Vec<WorktreeInfo>, IsolationError> {
        let mut registered: HashMap<PathBuf, Option<HashSet<PathBuf>>> = HashMap::new();
        let mut infos = Vec::new();
        let mut to_prune = HashSet::new();
        for record in Record::all(self.root()).await? {
            let record = match record {
                Ok(record) => record,
                Err(e) => {
                    tracing::warn!(error = %e, "skipped a worktree record");
                    continue;
                }
            };
            if !registered.contains_key(&record.git_dir) {
                let known = registered_worktrees(&record.git_dir).await;
                registered.insert(record.git_dir.clone(), known);
            }
            let known = registered.get(&record.git_dir).and_then(Option::as_ref);
            let info = describe(record, known).await;
            if info.state == WorktreeState::FolderMissing {
                to_prune.insert(info.git_dir.clone());
            }
            infos.push(info);
        }
        for git_dir in to_prune {
            let _guard = repo_lock(&git_dir).await;
            if let Err(e) = Git::at(&git_dir).run(&[&"worktree", &"prune"]).await {
                tracing::warn!(error = %e, "could not prune worktrees");
            }
        }
        Ok(infos)
    }

    /// Removes the targeted worktrees that hold nothing (and their branches and records);
    /// changed ones and ones in use by a running fleet only with `force`. A worktree whose
    /// folder is gone loses its record and registration; its branch goes too unless it holds
    /// commits (then only with `force`).
    pub async fn clean(
        &self,
        target: CleanTarget,
        force: bool,
    ) -> Result<CleanReport, IsolationError> {
        let infos = self.list().await?;
        let selected: Vec<_> = match &target {
            CleanTarget::All => infos,
            CleanTarget::One(wanted) => infos.into_iter().filter(|i| matches(i, wanted)).collect(),
        };
        if let (CleanTarget::One(wanted), true) = (&target, selected.is_empty()) {
            return Err(IsolationError::NotFound {
                target: wanted.clone(),
            });
        }
        let mut report = CleanReport::default();
        for info in selected {
            let reason = if info.in_use && !force {
                Some(KeepReason::InUse {
                    pid: owner_pid(&info).await.unwrap_or_default(),
                })
            } else if info.changed && !force {
                Some(KeepReason::Changed)
            } else {
                match remove(&info, force).await {
                    Ok(()) => None,
                    Err(e) => Some(KeepReason::Failed {
                        error: e.to_string(),
                    }),
                }
            };
            match reason {
                None => report.removed.push(info),
                Some(reason) => report.kept.push(KeptWorktree {
                    worktree: info,
                    reason,
                }),
            }
        }
        Ok(report)
    }
}

/// The worktree folders git knows for a repository (canonical paths); `None` when git cannot
/// be asked (the repository is gone).
async fn registered_worktrees(git_dir: &Path) -> Option<HashSet<PathBuf>> {
    if !git_dir.exists() {
        return None;
    }
    let out = Git::at(git_dir)
        .run(&[&"worktree", &"list", &"--porcelain"])
        .await
        .ok()?;
    Some(
        out.lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(|p| canonical(Path::new(p)))
            .collect(),
    )
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

async fn describe(record: Record, registered: Option<&HashSet<PathBuf>>) -> WorktreeInfo {
    let folder = record.path.exists();
    let state = match registered {
        None => WorktreeState::RepoMissing,
        Some(_) if !folder => WorktreeState::FolderMissing,
        Some(known) if !known.contains(&canonical(&record.path)) => WorktreeState::Unregistered,
        Some(_) => WorktreeState::Present,
    };
    let (head_commit, changed) = match state {
        WorktreeState::Present => match inspect::changes(&record.path).await {
            Ok(changes) => {
                let changed = !changes.unchanged(&record.base_commit);
                (Some(changes.head), changed)
            }
            Err(_) => (None, true),
        },
        WorktreeState::FolderMissing => {
            let tip = match &record.branch {
                Some(branch) => branch_tip(&record.git_dir, branch).await,
                None => None,
            };
            let changed = tip.as_ref().is_some_and(|t| *t != record.base_commit);
            (tip, changed)
        }
        WorktreeState::Unregistered | WorktreeState::RepoMissing => (None, true),
    };
    let in_use = if record.pid == std::process::id() {
        active().contains(&record.path)
    } else {
        process_alive(record.pid)
    };
    WorktreeInfo {
        age_secs: record.age().as_secs(),
        kind: record.kind,
        agent_id: record.agent_id,
        repo_root: record.repo_root,
        git_dir: record.git_dir,
        branch: record.branch,
        path: record.path,
        base_commit: record.base_commit,
        head_commit,
        changed,
        state,
        in_use,
        created_at: record.created_at,
    }
}

async fn branch_tip(git_dir: &Path, branch: &str) -> Option<String> {
    let refname = format!("refs/heads/{branch}");
    let out = Git::at(git_dir)
        .output(&[&"rev-parse", &"--verify", &"-q", &refname])
        .await
        .ok()?;
    out.success.then(|| out.stdout.trim().to_string())
}

async fn owner_pid(info: &WorktreeInfo) -> Option<u32> {
    Record::load(&Record::path_for(&info.path))
        .await
        .ok()
        .map(|r| r.pid)
}

fn matches(info: &WorktreeInfo, wanted: &str) -> bool {
    let folder = info.path.file_name().map(|n| n.to_string_lossy());
    info.agent_id == wanted
        || info.path == Path::new(wanted)
        || info.branch.as_deref() == Some(wanted)
        || folder.as_deref() == Some(wanted)
        || folder.as_deref() == Some(&format!("agent-{wanted}"))
}

/// Removes one worktree whatever its state, then its record. Only called for unchanged ones,
/// or under `force`.
async fn remove(info: &WorktreeInfo, force: bool) -> Result<(), IsolationError> {
    let expected = (!force).then_some(info.base_commit.as_str());
    if info.kind == WorktreeKind::Snapshot {
        // A throwaway repository of its own, registered nowhere.
        if info.path.exists() {
            tokio::fs::remove_dir_all(&info.path)
                .await
                .map_err(|e| IsolationError::io("remove", &info.path, e))?;
        }
        Record::remove(&info.path).await?;
        active().remove(&info.path);
        return Ok(());
    }
    match info.state {
        WorktreeState::Present | WorktreeState::FolderMissing => {
            remove_worktree(&info.git_dir, &info.path, force).await?;
            if let Some(branch) = &info.branch {
                remove_branch(&info.git_dir, branch, expected).await?;
            }
        }
        WorktreeState::Unregistered | WorktreeState::RepoMissing => {
            if info.path.exists() {
                tokio::fs::remove_dir_all(&info.path)
                    .await
                    .map_err(|e| IsolationError::io("remove", &info.path, e))?;
            }
            if let (Some(branch), WorktreeState::Unregistered) = (&info.branch, info.state) {
                remove_branch(&info.git_dir, branch, expected).await?;
            }
        }
    }
    Record::remove(&info.path).await?;
    active().remove(&info.path);
    Ok(())
}
