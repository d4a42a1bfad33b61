//! Whether git tracks a file: a settings file the repository committed is the repository's
//! words, not the user's.
//!
//! `.claude/settings.local.json` is meant to be the user's own (git-ignored) file, so what it
//! approves counts as the user's decision. A repository can commit one, though, and then it
//! approves the repository's own servers and skills for everyone who clones it. Asking git
//! tells the two apart. git runs here with every configuration-driven program turned off, so
//! asking cannot run anything the repository configured.

use std::path::Path;
use std::process::{Command, Stdio};

/// The hash recorded with an approval in the user's store (`$FLEET_HOME/trust.json`), of the
/// approved content as text: `sha256:<hex>`. A different text is a different approval.
pub fn approval_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The repository a session in `cwd` belongs to, the key of the user's approvals
/// (`$FLEET_HOME/trust.json`): the nearest folder holding `.git`, else `cwd`, canonical.
pub fn repository_root(cwd: &Path) -> std::path::PathBuf {
    let root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd);
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// Whether `file` is tracked by the git repository around it.
///
/// git is asked from the repository's top folder (the nearest one holding `.git`), never from
/// the file's own folder: a repository can commit a bare-repository layout (`HEAD`, `config`,
/// `objects/`, `refs/`) into `.claude/`, and git started there would find that instead — or,
/// with bare repositories refused, fail, and a failure must not read as "the user's file". So
/// only git's own "not tracked" (exit code 1) says untracked; any other failure counts as
/// tracked. Outside a repository nothing is tracked.
pub fn tracked_by_git(file: &Path) -> bool {
    if !file.exists() {
        return false;
    }
    let Some(root) = file
        .ancestors()
        .skip(1)
        .find(|dir| dir.join(".git").exists())
    else {
        return false;
    };
    let Ok(relative) = file.strip_prefix(root) else {
        return false;
    };
    let mut git = Command::new("git");
    // The configuration that keeps git from running programs a repository configured (an
    // embedded repository's `config`, most of all): the same as for looking Bash commands.
    for (key, value) in fleet_tools::HARDENED_GIT_CONFIG {
        git.arg("-c").arg(format!("{key}={value}"));
    }
    git.arg("-C")
        .arg(root)
        .args(["ls-files", "--error-unmatch", "--"])
        .arg(relative)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match git.status() {
        Ok(status) => status.code() != Some(1),
        // No git to ask: nothing could have been cloned with it either.
        Err(_) => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
            .arg("-C")
            .arg(dir)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn committed_files_are_tracked_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q"]);
        std::fs::create_dir_all(repo.join(".claude")).unwrap();
        let local = repo.join(".claude/settings.local.json");
        std::fs::write(&local, "{}").unwrap();
        assert!(!tracked_by_git(&local));
        git(repo, &["add", "-f", ".claude/settings.local.json"]);
        git(repo, &["commit", "-q", "-m", "x"]);
        assert!(tracked_by_git(&local));
        assert!(!tracked_by_git(&repo.join(".claude/missing.json")));
        let outside = tempfile::tempdir().unwrap();
        let loose = outside.path().join("settings.local.json");
        std::fs::write(&loose, "{}").unwrap();
        assert!(!tracked_by_git(&loose));
    }

    #[test]
    fn a_bare_repository_layout_inside_claude_does_not_hide_a_committed_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q"]);
        let claude = repo.join(".claude");
        std::fs::create_dir_all(claude.join("objects")).unwrap();
        std::fs::create_dir_all(claude.join("refs")).unwrap();
        std::fs::write(claude.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(claude.join("config"), "[core]\n\tbare = true\n").unwrap();
        let local = claude.join("settings.local.json");
        std::fs::write(&local, "{}").unwrap();
        git(repo, &["add", "-f", "."]);
        git(repo, &["commit", "-q", "-m", "x"]);
        assert!(tracked_by_git(&local));
    }
}
