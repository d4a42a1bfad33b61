//! `WorktreeCreate` and `WorktreeRemove`: hooks that own an isolated agent's worktree.
//!
//! As in Claude Code, a `WorktreeCreate` hook *replaces* fleet's own `git worktree add` (for
//! a project on another version control system, or one that prepares worktrees its own way):
//! it gets `name` (the worktree's name, `agent-<id8>`) on stdin and prints the absolute path
//! of the folder it made on stdout (or answers `{"hookSpecificOutput": {"worktreePath": …}}`).
//! Any exit other than 0 fails the creation, and so does a path that is not absolute, does
//! not exist or is not a folder; the Agent call then fails with the reason, and the agent
//! does not start.
//!
//! fleet neither inspects nor deletes a folder a hook made: when the agent ends it runs the
//! `WorktreeRemove` hooks with `worktree_path`, and they decide what to keep. A worktree
//! fleet made itself (no `WorktreeCreate` hook) is settled by fleet, and `WorktreeRemove`
//! hooks are told when it was removed.

use super::{Caller, HookEvent, Hooks};
use crate::isolation::{Worktree, WorktreeKind};
use crate::sink::EventSink;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// Why the `WorktreeCreate` hooks gave the agent no worktree.
#[derive(Debug, Error)]
pub(crate) enum WorktreeHookError {
    /// A hook ended other than with exit 0; `said` is the first line of its stderr.
    #[error("the WorktreeCreate hook {}: {said}", how(ending))]
    Ended { ending: super::Ending, said: String },
    #[error(
        "the WorktreeCreate hook printed no path: it must print the absolute path of the \
         worktree it made on stdout"
    )]
    NoPath,
    #[error("the WorktreeCreate hook printed {printed:?}, which is not an absolute path")]
    NotAbsolute { printed: String },
    #[error("the WorktreeCreate hook printed {printed:?}, which is not a folder")]
    NotAFolder { printed: String },
    #[error("the WorktreeCreate hook printed {printed:?}, which does not exist ({source})")]
    Missing {
        printed: String,
        #[source]
        source: std::io::Error,
    },
}

fn how(ending: &super::Ending) -> String {
    match ending {
        super::Ending::Exited(code) => format!("exited with {code}"),
        super::Ending::TimedOut => "was killed at its timeout".into(),
        super::Ending::Cancelled => "was cancelled".into(),
        super::Ending::Failed(why) => format!("failed ({why})"),
    }
}

/// Whether `hooks` make worktrees themselves.
pub(crate) fn hooks_make_worktrees(hooks: Option<&Arc<Hooks>>) -> bool {
    hooks.is_some_and(|h| h.has(HookEvent::WorktreeCreate))
}

/// Has the `WorktreeCreate` hooks make the worktree of the agent `agent_id`, started from
/// `caller_cwd`. `Err` says why there is none.
pub(crate) async fn create(
    hooks: &Hooks,
    session_id: &str,
    caller_cwd: &Path,
    agent_id: &str,
    sink: &EventSink,
) -> Result<Worktree, WorktreeHookError> {
    let repo_root = checkout_root(caller_cwd).await;
    let caller = Caller::current(session_id, repo_root.clone(), None);
    let name = format!("agent-{}", agent_id.get(..8).unwrap_or(agent_id));
    let mut fields = Map::new();
    fields.insert("name".into(), Value::String(name));
    let runs = hooks
        .run_matching(
            HookEvent::WorktreeCreate,
            None,
            &caller,
            fields,
            sink,
            &CancellationToken::new(),
        )
        .await;
    let mut path = None;
    for run in &runs {
        match &run.ending {
            super::Ending::Exited(0) => {}
            ending => {
                let said = run.stderr.trim().lines().next().unwrap_or("(no output)");
                return Err(WorktreeHookError::Ended {
                    ending: ending.clone(),
                    said: said.to_string(),
                });
            }
        }
        if path.is_none() {
            path = printed_path(&run.stdout);
        }
    }
    let Some(printed) = path else {
        return Err(WorktreeHookError::NoPath);
    };
    let path = checked(&printed)?;
    let cwd = match caller_cwd.strip_prefix(&repo_root) {
        Ok(rel) if path.join(rel).is_dir() => path.join(rel),
        _ => path.clone(),
    };
    Ok(Worktree {
        cwd,
        repo_root,
        branch: None,
        base_commit: String::new(),
        kind: WorktreeKind::Hooked,
        git_dir: PathBuf::new(),
        path,
    })
}

/// Tells the `WorktreeRemove` hooks that the agent of `worktree` ended: for a worktree a hook
/// made, they remove it (or keep it); for one fleet made and removed, they are told.
pub(crate) async fn removed(
    hooks: Option<&Arc<Hooks>>,
    session_id: &str,
    worktree: &Worktree,
    sink: &EventSink,
) {
    let Some(hooks) = hooks.filter(|h| h.has(HookEvent::WorktreeRemove)) else {
        return;
    };
    let caller = Caller::current(session_id, worktree.repo_root.clone(), None);
    let mut details = json!({"worktree_path": worktree.path.display().to_string()});
    if worktree.kind != WorktreeKind::Hooked {
        details["branch"] = json!(worktree.branch);
        details["base_commit"] = json!(worktree.base_commit);
        details["repo_root"] = json!(worktree.repo_root.display().to_string());
    }
    hooks
        .worktree(
            HookEvent::WorktreeRemove,
            &caller,
            details,
            sink,
            &CancellationToken::new(),
        )
        .await;
}

/// The path a hook answered with: `hookSpecificOutput.worktreePath` of a JSON answer, else
/// the last non-empty line of its stdout.
fn printed_path(stdout: &str) -> Option<String> {
    let text = stdout.trim();
    if text.starts_with('{') {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            return value
                .pointer("/hookSpecificOutput/worktreePath")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }
    text.lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(str::to_string)
}

/// The hook's path, if it names a folder that exists: absolute, and canonical so the
/// workspace boundary and the sandbox see the real place.
fn checked(printed: &str) -> Result<PathBuf, WorktreeHookError> {
    let path = Path::new(printed);
    let printed = printed.to_string();
    if !path.is_absolute() {
        return Err(WorktreeHookError::NotAbsolute { printed });
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(path.canonicalize().unwrap_or_else(|_| path.into())),
        Ok(_) => Err(WorktreeHookError::NotAFolder { printed }),
        Err(source) => Err(WorktreeHookError::Missing { printed, source }),
    }
}

/// The root of the checkout holding `cwd` (`git rev-parse --show-toplevel`), or `cwd` itself
/// outside git: a hook-made worktree may serve a project git does not manage.
async fn checkout_root(cwd: &Path) -> PathBuf {
    let out = tokio::process::Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["rev-parse", "--show-toplevel"])
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if text.is_empty() {
                cwd.to_path_buf()
            } else {
                PathBuf::from(text)
            }
        }
        _ => cwd.to_path_buf(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_the_last_line_or_the_json_answer() {
        assert_eq!(
            printed_path("making it\n/tmp/wt\n\n").as_deref(),
            Some("/tmp/wt")
        );
        assert_eq!(
            printed_path(r#"{"hookSpecificOutput": {"worktreePath": "/x/y"}}"#).as_deref(),
            Some("/x/y")
        );
        assert_eq!(printed_path("  \n"), None);
    }

    #[test]
    fn only_an_absolute_existing_folder_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(checked(&dir.path().display().to_string()).is_ok());
        let relative = checked("relative/wt").unwrap_err();
        assert!(
            matches!(relative, WorktreeHookError::NotAbsolute { .. }),
            "{relative}"
        );
        assert!(relative.to_string().contains("not an absolute"));
        let file = checked(&file.display().to_string()).unwrap_err();
        assert!(
            matches!(file, WorktreeHookError::NotAFolder { .. }),
            "{file}"
        );
        assert!(file.to_string().contains("not a folder"));
        let gone = dir.path().join("gone").display().to_string();
        let gone = checked(&gone).unwrap_err();
        assert!(matches!(gone, WorktreeHookError::Missing { .. }), "{gone}");
        assert!(gone.to_string().contains("does not exist"));
    }
}
