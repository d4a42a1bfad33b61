//! git as a program that runs programs: configuration given on its command line can make any
//! subcommand run a shell line (`git -c alias.x='!rm -rf y' x`, `-c core.pager=…`,
//! `-c core.fsmonitor=…`, `-c diff.external=…`), and `--exec-path` / `--config-env` take
//! what runs from a folder or a variable.
//!
//! Every `-c` value is read as a line git may run (an alias's leading `!` removed), so deny
//! rules see inside it; `--config-env` and `--exec-path=DIR` run what is only known when the
//! line runs.

use super::{unknown_command, Runs};
use crate::shell::model::Word;

/// Global options of git that take the next word as their value.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
];

/// What `git REST` runs because of its global options.
pub(super) fn runs(wrapper: &str, rest: &[Word]) -> Runs {
    let mut lines = Vec::new();
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        let Some(text) = word.known() else {
            // An unknown word where an option could be: it may be `-c` or the subcommand.
            return if lines.is_empty() && !word.may_be_option() {
                Runs::Nothing
            } else {
                unknown_command(wrapper.into())
            };
        };
        if !text.starts_with('-') || text == "--" {
            break;
        }
        i += 1;
        let (name, attached) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (text, None),
        };
        if name == "--config-env" || (name == "--exec-path" && attached.is_some()) {
            return unknown_command(wrapper.into());
        }
        if !VALUED.contains(&name) || attached.is_some() {
            continue;
        }
        let value = rest.get(i);
        i += 1;
        if name != "-c" {
            continue;
        }
        match value {
            Some(Word::Known(setting)) => lines.push(runnable(setting)),
            Some(Word::Unknown(_)) => return unknown_command(wrapper.into()),
            None => {}
        }
    }
    if lines.is_empty() {
        return Runs::Nothing;
    }
    Runs::Line {
        wrapper: wrapper.into(),
        line: lines.join("\n"),
        transparent: false,
    }
}

/// The line a `key=value` setting may make git run: a shell alias's command, another alias as
/// the git command it stands for, any other value as written (pagers, editors, fsmonitor and
/// ssh commands are command lines).
fn runnable(setting: &str) -> String {
    let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
    let is_alias = key
        .get(..6)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("alias."));
    match value.strip_prefix('!') {
        Some(shell) => shell.to_string(),
        None if is_alias => format!("git {value}"),
        None => value.to_string(),
    }
}
