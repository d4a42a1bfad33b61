//! git commands that write git's configuration, and the file each writes.
//!
//! Configuration decides what git runs later (`core.fsmonitor`, `core.pager`, aliases,
//! `core.hooksPath`), so a write there is a write of a protected file (`.git/config`,
//! `~/.gitconfig`): the permission check asks before it, whatever `Bash(git *)` says, and no
//! wildcard allow rule vouches for it (see [`super::hidden_action`]).

use super::args::{abbreviates, Args, OptSpec};
use super::git::GitCall;
use std::path::PathBuf;

/// The configuration files `call` writes, as written (relative ones from the shell's cwd;
/// `~/.gitconfig` for the user's), or none.
pub(super) fn written(call: &GitCall<'_>) -> Vec<PathBuf> {
    let Some((sub, rest)) = call.sub.split_first() else {
        return Vec::new();
    };
    let repo = || call.location.join(".git/config");
    let user = || PathBuf::from("~/.gitconfig");
    match sub.as_str() {
        "config" => config(call, rest),
        "remote" => {
            let mut words = rest.iter().skip_while(|w| *w == "-v" || *w == "--verbose");
            match words.next().map(String::as_str) {
                Some(
                    "add" | "rename" | "remove" | "rm" | "set-branches" | "set-url" | "set-head",
                ) => vec![repo()],
                _ => Vec::new(),
            }
        }
        "submodule" => {
            let first = rest
                .iter()
                .find(|w| !w.starts_with('-'))
                .map(String::as_str);
            match first {
                None | Some("status" | "summary" | "foreach" | "absorbgitdirs") => Vec::new(),
                Some(_) => vec![repo(), call.location.join(".gitmodules")],
            }
        }
        "branch" => {
            let changes = rest.iter().any(|arg| {
                matches!(arg.as_str(), "-u" | "-t" | "-m" | "-M" | "-c" | "-C")
                    || arg.starts_with("-u")
                    || [
                        "--set-upstream-to",
                        "--unset-upstream",
                        "--track",
                        "--move",
                        "--copy",
                        "--edit-description",
                    ]
                    .iter()
                    .any(|option| {
                        abbreviates(arg.split('=').next().unwrap_or(arg), option) && arg.len() > 3
                    })
            });
            if changes {
                vec![repo()]
            } else {
                Vec::new()
            }
        }
        "push" | "pull" | "fetch" => {
            let upstream = rest.iter().any(|arg| {
                (sub == "push"
                    && arg.starts_with('-')
                    && !arg.starts_with("--")
                    && arg.contains('u'))
                    || (arg.len() > 6 && abbreviates(arg, "--set-upstream"))
            });
            if upstream {
                vec![repo()]
            } else {
                Vec::new()
            }
        }
        "sparse-checkout" => match rest.first().map(String::as_str) {
            None | Some("list" | "check-rules") => Vec::new(),
            Some(_) => vec![repo()],
        },
        "maintenance" => match rest.first().map(String::as_str) {
            Some("register" | "unregister" | "start" | "stop") => vec![user()],
            _ => Vec::new(),
        },
        "lfs" => match rest.first().map(String::as_str) {
            Some("install" | "uninstall" | "update") => {
                vec![user(), repo(), call.location.join(".git/hooks")]
            }
            _ => Vec::new(),
        },
        "flow" => vec![repo()],
        _ => Vec::new(),
    }
}

/// `git config` that writes: the file it writes (`--global`, `--system`, `--file`, the
/// repository's by default).
fn config(call: &GitCall<'_>, rest: &[String]) -> Vec<PathBuf> {
    if super::git::config_reads(rest) {
        return Vec::new();
    }
    let spec = OptSpec::short("f").long(&["file", "blob", "type", "default", "comment"]);
    let args = Args::parse(rest, &spec);
    let mut files: Vec<PathBuf> = args
        .values(&["-f", "--file"])
        .map(|f| call.location.join(f))
        .collect();
    if args.has(&["--global"]) {
        files.push(PathBuf::from("~/.gitconfig"));
    }
    if args.has(&["--system"]) {
        files.push(PathBuf::from("/etc/gitconfig"));
    }
    if args.has(&["--worktree"]) {
        files.push(call.location.join(".git/config.worktree"));
    }
    if files.is_empty() {
        files.push(call.location.join(".git/config"));
    }
    files
}
