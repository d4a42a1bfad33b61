//! Repository state as git bundles: the caller's HEAD plus a snapshot commit of its
//! uncommitted and untracked files going out, a job's branch coming back.
//!
//! The snapshot is made by the runtime's isolation module (the verifier's snapshot, in a
//! scratch repository sharing the user's objects), so nothing is written into the user's
//! repository, index or files until a result branch is fetched on purpose. Bundles carry a
//! fixed ref ([`SNAPSHOT_REF`]) so a worker can fetch them without knowing the caller's
//! branch names. Only the `git` command line is used, with argv words, never a shell.

use crate::error::RemoteError;
use std::path::{Path, PathBuf};
use tokio::process::Command;

/// The ref a repository bundle holds: the snapshot commit.
pub const SNAPSHOT_REF: &str = "refs/fleet/snapshot";

/// A repository state ready to upload.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The caller's HEAD (the snapshot itself in a repository without commits).
    pub head: String,
    /// HEAD itself when nothing was uncommitted, else a commit on top of it.
    pub snapshot: String,
    pub branch: Option<String>,
    /// The caller's folder inside the checkout; empty at the top.
    pub subdir: String,
    /// The bundle file (in the scratch folder the caller removes).
    pub bundle: PathBuf,
}

/// Bundles `repo`'s state into `scratch`; `None` when `repo` is not in a git repository.
pub async fn snapshot(repo: &Path, scratch: &Path) -> Result<Option<Snapshot>, RemoteError> {
    let into = scratch.join("snapshot");
    let exported = match fleet_runtime::isolation::export_snapshot(repo, &into, "remote").await {
        Ok(exported) => exported,
        Err(fleet_runtime::isolation::IsolationError::NotARepo { .. }) => return Ok(None),
        Err(e) => {
            return Err(RemoteError::Git {
                step: "snapshot".into(),
                dir: repo.display().to_string(),
                reason: e.to_string(),
            })
        }
    };
    // A clean checkout's snapshot has HEAD's tree: bundle HEAD itself, so every caller on
    // that commit shares one object in the store.
    let snapshot = match &exported.head {
        Some(head) if same_tree(&into, head, &exported.commit).await? => head.clone(),
        _ => exported.commit.clone(),
    };
    git(
        &into,
        &["update-ref", SNAPSHOT_REF, &snapshot],
        "update-ref",
    )
    .await?;
    let bundle = scratch.join("repo.bundle");
    git(
        &into,
        &[
            "bundle",
            "create",
            "--quiet",
            path_str(&bundle)?,
            SNAPSHOT_REF,
        ],
        "bundle create",
    )
    .await?;
    Ok(Some(Snapshot {
        head: exported.head.unwrap_or_else(|| snapshot.clone()),
        snapshot,
        branch: exported.branch,
        subdir: exported.prefix.to_string_lossy().into_owned(),
        bundle,
    }))
}

/// Makes a fresh checkout of `commit` from `bundle` in `dir` (which does not exist yet).
pub async fn checkout(bundle: &Path, commit: &str, dir: &Path) -> Result<(), RemoteError> {
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|source| RemoteError::Io {
            what: format!("create the checkout folder {}", dir.display()),
            source,
        })?;
    git(dir, &["init", "--quiet"], "init").await?;
    let refspec = format!("{SNAPSHOT_REF}:{SNAPSHOT_REF}");
    git(
        dir,
        &["fetch", "--quiet", path_str(bundle)?, &refspec],
        "fetch the repository bundle",
    )
    .await?;
    git(
        dir,
        &["checkout", "--quiet", "--force", "--detach", commit],
        "checkout",
    )
    .await?;
    Ok(())
}

/// Commits everything the job changed in `checkout` on `branch` (based on `base`) and
/// bundles that branch into `out`; `None` (and no file) when nothing changed. Returns the
/// commit.
pub async fn result_bundle(
    checkout: &Path,
    base: &str,
    branch: &str,
    out: &Path,
) -> Result<Option<String>, RemoteError> {
    git(checkout, &["add", "-A"], "add").await?;
    let staged = !git_ok(checkout, &["diff", "--cached", "--quiet", "HEAD"]).await?;
    if staged {
        let message = format!("fleet remote job on {branch}");
        git_as_fleet(
            checkout,
            &["commit", "--quiet", "--no-verify", "-m", &message],
        )
        .await?;
    }
    let head = git(checkout, &["rev-parse", "HEAD"], "rev-parse").await?;
    let head = head.trim().to_string();
    if head == base {
        return Ok(None);
    }
    git(checkout, &["branch", "--force", branch, &head], "branch").await?;
    let full = format!("refs/heads/{branch}");
    git(
        checkout,
        &["bundle", "create", "--quiet", path_str(out)?, &full],
        "bundle create",
    )
    .await?;
    Ok(Some(head))
}

/// Fetches `branch` from `bundle` into `repo` as the same branch name. A branch of that name
/// already there is moved (it is fleet's own `fleet/remote-…` name), unless it is checked out.
pub async fn fetch_into(repo: &Path, bundle: &Path, branch: &str) -> Result<(), RemoteError> {
    let refspec = format!("+refs/heads/{branch}:refs/heads/{branch}");
    git(
        repo,
        &["fetch", "--quiet", path_str(bundle)?, &refspec],
        "fetch the result bundle",
    )
    .await?;
    Ok(())
}

async fn same_tree(dir: &Path, a: &str, b: &str) -> Result<bool, RemoteError> {
    let tree_a = git(dir, &["rev-parse", &format!("{a}^{{tree}}")], "rev-parse").await?;
    let tree_b = git(dir, &["rev-parse", &format!("{b}^{{tree}}")], "rev-parse").await?;
    Ok(tree_a.trim() == tree_b.trim())
}

fn path_str(path: &Path) -> Result<&str, RemoteError> {
    path.to_str().ok_or_else(|| RemoteError::Git {
        step: "name a file".into(),
        dir: path.display().to_string(),
        reason: "the path is not valid UTF-8".into(),
    })
}

/// Runs git in `dir`; its stdout, or an error naming `step`, the folder and git's words.
async fn git(dir: &Path, args: &[&str], step: &str) -> Result<String, RemoteError> {
    run(command(dir, args), dir, step).await
}

/// Whether git exits 0 (for `diff --quiet`).
async fn git_ok(dir: &Path, args: &[&str]) -> Result<bool, RemoteError> {
    let status = command(dir, args)
        .status()
        .await
        .map_err(|e| cannot_run(dir, "diff", e))?;
    Ok(status.success())
}

/// Commits as `fleet <fleet@localhost>`: a worker may have no git identity at all.
async fn git_as_fleet(dir: &Path, args: &[&str]) -> Result<String, RemoteError> {
    let mut cmd = command(dir, args);
    for (name, value) in [
        ("GIT_AUTHOR_NAME", "fleet"),
        ("GIT_AUTHOR_EMAIL", "fleet@localhost"),
        ("GIT_COMMITTER_NAME", "fleet"),
        ("GIT_COMMITTER_EMAIL", "fleet@localhost"),
    ] {
        cmd.env(name, value);
    }
    run(cmd, dir, "commit").await
}

async fn run(mut cmd: Command, dir: &Path, step: &str) -> Result<String, RemoteError> {
    let out = cmd.output().await.map_err(|e| cannot_run(dir, step, e))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(RemoteError::Git {
        step: step.into(),
        dir: dir.display().to_string(),
        reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

fn cannot_run(dir: &Path, step: &str, e: std::io::Error) -> RemoteError {
    RemoteError::Git {
        step: step.into(),
        dir: dir.display().to_string(),
        reason: format!("cannot run git: {e}"),
    }
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    // The worker's or caller's own repository settings must not leak into these runs.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.stdin(std::process::Stdio::null());
    cmd.kill_on_drop(true);
    cmd
}
