//! git commands that print file contents, from the work tree or from history, judged against
//! `Read(...)` deny rules.
//!
//! `Read(./.env)` keeps the Read tool and the sandbox away from `.env`, but `git show
//! HEAD~1:.env`, `git log -p`, `git diff`, `git cat-file -p`, `git archive`, `git grep`,
//! `git blame` and `git stash show -p` print what `.env` holds or held. While any `Read` deny
//! rule exists, such a command is denied (naming the rule) when one of its arguments names a
//! denied path, and otherwise asks — in every mode, since no rule or mode can tell whether the
//! history it prints holds a denied file. What remains is in docs/security.md.

use super::bash_split::SimpleCommand;
use super::call::Call;
use super::rule::{Rule, RuleSet};
use crate::tool::Access;
use std::path::Path;
use std::sync::Arc;

/// What a git command that prints contents meets.
pub(crate) enum HistoryRead {
    /// An argument names a path this `Read` deny rule denies.
    Denied(Arc<Rule>),
    /// It may print a denied file; this is the first `Read` deny rule.
    Asks(Arc<Rule>),
}

// Git's global options that take the next word (shared with the wrapper reader).
use crate::shell::wrappers::git::VALUED as GLOBAL_VALUED;

/// Subcommands that print file contents whatever their options.
const PRINTS: &[&str] = &[
    "show",
    "diff",
    "diff-tree",
    "diff-index",
    "diff-files",
    "cat-file",
    "archive",
    "grep",
    "blame",
    "annotate",
    "format-patch",
    "range-diff",
    "whatchanged",
    "bundle",
    "fast-export",
    "pack-objects",
    "unpack-file",
    "show-index",
    "difftool",
];

/// Whether `call`, a command line, runs git in a way that prints file contents while a `Read`
/// deny rule exists; see the module docs.
pub(crate) fn check(rules: &RuleSet, call: &Call<'_>) -> Option<HistoryRead> {
    let command = call.command.as_ref()?;
    let first_read_deny = rules.deny.iter().find(|rule| rule.tool() == "Read")?;
    let mut asks = false;
    for part in &command.parts {
        let Some(args) = printing_git(part) else {
            continue;
        };
        asks = true;
        for path in named_paths(args) {
            let access = Access::Read(Path::new(path).to_path_buf());
            let read = Call::new("Read", &access, call.cwd, call.home, call.workspace);
            if let Some(rule) = rules.denying(&read).filter(|r| r.tool() == "Read") {
                return Some(HistoryRead::Denied(rule.clone()));
            }
        }
    }
    asks.then(|| HistoryRead::Asks(first_read_deny.clone()))
}

/// The arguments after the subcommand, when `part` is git printing contents.
fn printing_git(part: &SimpleCommand) -> Option<&[String]> {
    let (program, rest) = part.words.split_first()?;
    if program.rsplit('/').next() != Some("git") {
        return None;
    }
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        if !word.starts_with('-') {
            break;
        }
        i += if GLOBAL_VALUED.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    let (sub, args) = rest.get(i..)?.split_first()?;
    let prints = PRINTS.contains(&sub.as_str())
        || match sub.as_str() {
            // log and stash show print contents with a patch option.
            "log" | "stash" | "reflog" | "shortlog" => args.iter().any(|a| patch_option(a)),
            _ => false,
        };
    prints.then_some(args)
}

/// `-p`, `-u`, `--patch`, `-L…`, `--cc`, `-c`, `--word-diff`, `--full-diff` and clusters
/// holding `p` or `u`.
fn patch_option(arg: &str) -> bool {
    if let Some(long) = arg.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        return matches!(
            name,
            "patch"
                | "patch-with-stat"
                | "patch-with-raw"
                | "cc"
                | "word-diff"
                | "full-diff"
                | "color-words"
                | "unified"
                | "function-context"
                | "text"
                | "binary"
        );
    }
    arg.strip_prefix('-').is_some_and(|cluster| {
        cluster.starts_with('L')
            || cluster.starts_with('U')
            || cluster == "c"
            || cluster.chars().all(|c| c.is_ascii_alphabetic()) && cluster.contains(['p', 'u'])
    })
}

/// Every argument that may name a file: operands as they are, the path part of `REV:PATH`,
/// and option values after `=`.
fn named_paths(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter().flat_map(|arg| {
        let mut out = Vec::new();
        if !arg.starts_with('-') {
            out.push(arg.as_str());
        }
        if let Some((_, value)) = arg.split_once('=') {
            out.push(value);
        }
        if let Some((_, path)) = arg.rsplit_once(':') {
            out.push(path.trim_start_matches("./"));
        }
        out.into_iter().filter(|p| !p.is_empty())
    })
}
