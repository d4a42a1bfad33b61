//! Finding the checkout an agent was called from: its root, where the caller stands in it, the
//! repository's shared git folder, its index, and its current HEAD.

use std::path::{Path, PathBuf};

use super::error::IsolationError;
use super::git::{Arg, Git};

/// The caller's checkout, as git sees it.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    /// The top of the caller's working tree (the main checkout or a linked worktree).
    pub root: PathBuf,
    /// The caller's folder relative to `root`; empty at the top.
    pub prefix: PathBuf,
    /// The repository's common git folder, shared by all its worktrees (canonical).
    pub git_dir: PathBuf,
    /// This checkout's own index file.
    pub index: PathBuf,
    /// The commit HEAD resolves to; `None` in a repository without commits. A detached HEAD
    /// resolves like any other.
    pub head: Option<String>,
}

impl Checkout {
    /// The folder that names the repository in `$FLEET_HOME/worktrees/<slug>`: the main
    /// checkout (the parent of a `.git` folder), so that worktrees made from inside other
    /// worktrees (nested isolated agents) are grouped with their repository.
    pub(crate) fn main_root(&self) -> PathBuf {
        main_root_of(&self.git_dir)
    }

    /// HEAD, or the error an agent worktree gets in a repository without commits.
    pub(crate) fn head_commit(&self) -> Result<&str, IsolationError> {
        self.head
            .as_deref()
            .ok_or_else(|| IsolationError::NoCommits {
                repo: self.root.clone(),
            })
    }
}

/// The main checkout of a repository whose common git folder is `git_dir`.
pub(crate) fn main_root_of(git_dir: &Path) -> PathBuf {
    match (git_dir.file_name(), git_dir.parent()) {
        (Some(name), Some(parent)) if name == ".git" => parent.to_path_buf(),
        _ => git_dir.to_path_buf(),
    }
}

/// Looks up the checkout holding `cwd`. Refuses, with errors that say so, a folder outside any
/// repository, a bare repository, and the inside of a `.git` folder.
pub(crate) async fn resolve(cwd: &Path) -> Result<Checkout, IsolationError> {
    tokio::fs::metadata(cwd)
        .await
        .map_err(|e| IsolationError::io("read the working folder", cwd, e))?;
    let git = Git::at(cwd);
    let args: [Arg<'_>; 3] = [
        &"rev-parse",
        &"--is-bare-repository",
        &"--is-inside-work-tree",
    ];
    let probe = git.output(&args).await?;
    if !probe.success {
        if probe.stderr.contains("not a git repository") {
            return Err(IsolationError::NotARepo {
                path: cwd.to_path_buf(),
            });
        }
        return Err(git.failure(&args, probe));
    }
    let mut answers = probe.stdout.lines();
    if answers.next() == Some("true") {
        return Err(IsolationError::BareRepo {
            path: cwd.to_path_buf(),
        });
    }
    if answers.next() != Some("true") {
        return Err(IsolationError::InsideGitDir {
            path: cwd.to_path_buf(),
        });
    }

    let out = git
        .run(&[
            &"rev-parse",
            &"--show-toplevel",
            &"--show-prefix",
            &"--path-format=absolute",
            &"--git-common-dir",
            &"--git-path",
            &"index",
        ])
        .await?;
    let lines: Vec<&str> = out.split('\n').collect();
    let [root, prefix, git_dir, index, ..] = lines.as_slice() else {
        return Err(IsolationError::Git {
            command: "git rev-parse --show-toplevel …".into(),
            dir: cwd.to_path_buf(),
            status: "0".into(),
            stderr: format!("unexpected output: {out:?}"),
        });
    };
    let git_dir = PathBuf::from(git_dir);
    let git_dir = std::fs::canonicalize(&git_dir).unwrap_or(git_dir);

    let verify = git
        .output(&[&"rev-parse", &"--verify", &"-q", &"HEAD^{commit}"])
        .await?;
    let head = verify
        .success
        .then(|| verify.stdout.trim().to_string())
        .filter(|h| !h.is_empty());

    Ok(Checkout {
        root: PathBuf::from(root),
        prefix: PathBuf::from(prefix.trim_end_matches('/')),
        git_dir,
        index: PathBuf::from(index),
        head,
    })
}
