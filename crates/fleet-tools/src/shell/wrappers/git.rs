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
pub(crate) const VALUED: &[&str] = &[
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
    match subcommand_runs(rest.get(i..).unwrap_or_default()) {
        Ok(found) => lines.extend(found),
        Err(()) => return unknown_command(wrapper.into()),
    }
    super::lines_run(wrapper, &lines)
}

/// The lines a subcommand runs: `rebase -x CMD`, `bisect run CMD…`, `submodule foreach CMD`,
/// `filter-branch --tree-filter CMD`, `difftool -x CMD`. `Err` when one is only known when
/// the line runs.
fn subcommand_runs(words: &[Word]) -> Result<Vec<String>, ()> {
    let Some((sub, rest)) = words.split_first() else {
        return Ok(Vec::new());
    };
    let text = |w: &Word| w.known().map(str::to_string).ok_or(());
    let joined = |ws: &[Word]| -> Result<Vec<String>, ()> {
        let ws: Vec<String> = ws.iter().map(text).collect::<Result<_, _>>()?;
        Ok(if ws.is_empty() {
            Vec::new()
        } else {
            vec![ws.join(" ")]
        })
    };
    let values = |short: &[&str], long: &[&str]| -> Result<Vec<String>, ()> {
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(word) = rest.get(i) {
            i += 1;
            let Some(arg) = word.known() else { continue };
            if let Some((name, value)) = arg.split_once('=') {
                if long.contains(&name) {
                    out.push(value.to_string());
                }
                continue;
            }
            if short.contains(&arg) || long.contains(&arg) {
                out.push(rest.get(i).map(text).ok_or(())??);
                i += 1;
            }
        }
        Ok(out)
    };
    match sub.known() {
        Some("rebase") => values(&["-x"], &["--exec"]),
        Some("difftool" | "mergetool") => values(&["-x"], &["--extcmd"]),
        Some("filter-branch") => values(
            &[],
            &[
                "--env-filter",
                "--tree-filter",
                "--index-filter",
                "--parent-filter",
                "--msg-filter",
                "--commit-filter",
                "--tag-name-filter",
                "--setup",
            ],
        ),
        Some("bisect") if rest.first().and_then(Word::known) == Some("run") => joined(&rest[1..]),
        Some("submodule") => match rest.iter().position(|w| w.known() == Some("foreach")) {
            Some(at) => {
                let command: Vec<Word> = rest[at + 1..]
                    .iter()
                    .skip_while(|w| w.known().is_some_and(|t| t.starts_with('-')))
                    .cloned()
                    .collect();
                joined(&command)
            }
            None => Ok(Vec::new()),
        },
        None => Err(()),
        Some(_) => Ok(Vec::new()),
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
