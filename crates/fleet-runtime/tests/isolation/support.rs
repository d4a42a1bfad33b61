//! Temporary repositories and a plain `git` for the tests' own setup.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;
use std::time::SystemTime;

use fleet_runtime::isolation::WorktreeManager;
use fleet_store::FleetHome;

/// Isolates every git the tests run (ours and the manager's) from the machine's configuration.
pub fn quiet_git_config() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::env::set_var("GIT_CONFIG_GLOBAL", "/dev/null");
        std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
    });
}

/// Runs git in `dir` with a test identity; panics with its stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    quiet_git_config();
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether `refs/heads/<branch>` exists in the repository at `dir`.
pub fn branch_exists(dir: &Path, branch: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ])
        .output()
        .expect("git runs")
        .status
        .success()
}

pub fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A temporary fleet home and a repository with one commit: `a.txt`, `src/lib.txt`, and a
/// `.gitignore` ignoring `target/`.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub manager: WorktreeManager,
}

impl Fixture {
    pub fn new() -> Self {
        quiet_git_config();
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        write(&repo.join("a.txt"), "one\n");
        write(&repo.join("src/lib.txt"), "lib\n");
        write(&repo.join(".gitignore"), "target/\n");
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        let manager = WorktreeManager::new(&FleetHome::at(dir.path().join("home")));
        Self { dir, repo, manager }
    }

    pub fn head(&self) -> String {
        git(&self.repo, &["rev-parse", "HEAD"])
    }

    /// Paths git knows as worktrees of the repository (the main checkout first).
    pub fn registered(&self) -> Vec<String> {
        git(&self.repo, &["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(str::to_string)
            .collect()
    }
}

/// Everything observable about a checkout that an isolated agent must not change: every file's
/// bytes (the `.git` folder's index included), `git status`, and the index's modification time.
#[derive(Debug, PartialEq, Eq)]
pub struct CheckoutState {
    files: BTreeMap<PathBuf, Vec<u8>>,
    index: Vec<u8>,
    index_mtime: SystemTime,
    status: String,
}

impl CheckoutState {
    pub fn of(repo: &Path) -> Self {
        let mut files = BTreeMap::new();
        collect(repo, repo, &mut files);
        let index_path = repo.join(".git/index");
        Self {
            files,
            index: std::fs::read(&index_path).unwrap(),
            index_mtime: std::fs::metadata(&index_path).unwrap().modified().unwrap(),
            status: status_of(repo),
        }
    }
}

/// `git status` read without refreshing (and so without rewriting) the index.
fn status_of(repo: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=all",
        ])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}
