//! Command policies for agents whose Bash must not change the project: the read-only
//! subagents (Explore, Plan) may run only commands that change nothing, and the verification
//! agent may run builds and tests but change files only under a scratch folder.
//!
//! A command line is read with the shell parser ([`crate::shell`]), the same reading Bash
//! permission rules use: every simple command, every output redirection and every nested
//! line (`$(…)`, `<(…)`, `sh -c '…'`) must pass. The read-only classifier is in
//! [`classify`]; the scratch-folder policy in [`scoped`].
//!
//! The check reads the command line, not what programs do when they run: under
//! [`CommandPolicy::WritesOnlyUnder`] a build script or a test may still write anywhere, and
//! the OS sandbox, not this check, is the guarantee for both policies. It is the friendly
//! first refusal, and it decides which Bash calls run without a prompt, so it errs towards
//! refusing: what it cannot read (a syntax error, a word only known at run time where an
//! option could be, arithmetic on variables) is refused, with a message saying what to write
//! instead.

mod args;
mod awk;
mod classify;
mod conditions;
mod downloads;
mod git;
mod git_config;
mod launchers;
mod operands;
mod read_only;
mod rewriters;
mod scope;
mod scoped;
mod sed;
mod wrappers;
mod writes;

pub(crate) use read_only::hidden_action;
use scope::Scope;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What a restricted Bash lets a command do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPolicy {
    /// Only programs on a list of ones that change nothing, used in ways that change nothing;
    /// output redirected only to `/dev/null` or another descriptor.
    ReadOnly,
    /// Any program, but the files the command line visibly changes (redirections, `rm`, `cp`,
    /// `sed -i`, `git commit`, …) must lie under one of these folders.
    WritesOnlyUnder(Vec<PathBuf>),
}

impl CommandPolicy {
    /// The verification agent's policy: changes only under the system temp folder.
    pub fn temp_dir_only() -> Self {
        Self::WritesOnlyUnder(vec![std::env::temp_dir()])
    }

    /// What the policy allows, in a sentence or two: for a tool description and for the
    /// model after a refusal.
    pub fn summary(&self) -> String {
        match self {
            Self::ReadOnly => format!(
                "This agent is read-only: Bash runs only commands that change nothing, such as \
                 {}. Output may be redirected only to /dev/null (2>&1 is fine); no tee, no \
                 sudo, no other programs.",
                read_only::EXAMPLES
            ),
            Self::WritesOnlyUnder(dirs) => format!(
                "This agent may not change the project: Bash may run builds and tests, but may \
                 change files only under {}. Redirections (> >> &>), rm, mv, cp, touch, mkdir, \
                 ln, chmod, tee, sed -i, git add/commit/checkout/reset/stash and the like are \
                 refused anywhere else. Use absolute paths there (e.g. cargo test \
                 --target-dir <dir>, output > <dir>/out.txt).",
                Scope::new(dirs, Path::new("/")).describe()
            ),
        }
    }
}

/// Why a command may not run under a [`CommandPolicy`]. Each message quotes the offending
/// part of the command line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PolicyRefusal {
    /// Read-only: the program is not on the list of programs that change nothing.
    #[error(
        "`{command}` runs {program}, which is not on the list of programs this read-only agent \
         may run (those that change nothing, such as {examples})",
        examples = read_only::EXAMPLES
    )]
    NotListed { command: String, program: String },
    /// Read-only: the command would change something; `why` says what, as a phrase that
    /// follows the command ("would change files (sed -i edits files in place)").
    #[error("`{command}` {why}; this agent is read-only")]
    ReadOnly { command: String, why: String },
    /// A path the command would change lies outside the allowed folders.
    #[error("`{command}` would change {path}, which is outside {allowed}; this agent may change files only there")]
    Outside {
        command: String,
        path: String,
        allowed: String,
    },
    /// What the command would change is known only when it runs.
    #[error("`{command}` may change files that cannot be named before it runs ({why}); this agent may change files only under {allowed}, so use literal absolute paths there")]
    Unknowable {
        command: String,
        why: String,
        allowed: String,
    },
    /// The command line cannot be read with confidence.
    #[error("`{command}` cannot be checked: {why}; write it more plainly")]
    Unreadable { command: String, why: String },
}

/// Checks `command` (a whole `bash -c` line) against `policy`, relative paths taken from
/// `cwd`. `Ok` means every part passed; nothing is run.
pub fn check_command(
    command: &str,
    policy: &CommandPolicy,
    cwd: &Path,
) -> Result<(), PolicyRefusal> {
    let cwd = crate::workspace::absolute(cwd, Path::new("/"));
    let line = crate::shell::parse(command);
    match policy {
        CommandPolicy::ReadOnly => classify::ReadOnly::new(&cwd, &line).line(&line, 0),
        CommandPolicy::WritesOnlyUnder(dirs) => {
            let scope = Scope::new(dirs, &cwd);
            scoped::Scoped { scope: &scope }.line(&line, &[Some(cwd.clone())], 0)
        }
    }
}

/// The first protected path (`.git/hooks/x`, `.claude/settings.json`, a shell rc file; see
/// [`crate::permissions::protected_name`]) that `command` visibly changes — through a
/// redirect, `cp`, `mv`, `tee`, `sed -i`, `ln` and the rest of what the scratch-only policy
/// knows, wrappers and `sh -c` strings included — resolved against `cwd`. The permission check
/// asks before such a line runs, whatever rule or mode would allow it.
pub(crate) fn protected_target(command: &str, cwd: &Path) -> Option<PathBuf> {
    let cwd = crate::workspace::absolute(cwd, Path::new("/"));
    let line = crate::shell::parse(command);
    let scope = Scope::protected_paths();
    match (scoped::Scoped { scope: &scope }).line(&line, &[Some(cwd)], 0) {
        Err(PolicyRefusal::Outside { path, .. }) => Some(PathBuf::from(path)),
        _ => None,
    }
}

/// Whether git on `command`, run in `cwd`, would start in a folder holding a repository other
/// than the agent's (a committed bare-layout repository reached through a `cd`, `-C` or a
/// symlink), whose configuration can run programs. No wildcard allow rule vouches for such a
/// line (`Bash(git *)` does not allow `git -C vendor/emb status && npm test`).
pub(crate) fn enters_embedded_repository(command: &str, cwd: &Path) -> bool {
    if !command.contains("git") {
        return false;
    }
    let cwd = crate::workspace::absolute(cwd, Path::new("/"));
    classify::enters_other_repository(&cwd, &crate::shell::parse(command))
}

/// Whether `command` runs nothing but git subcommands that only look (and `cd`), whatever
/// folder they look in: such a line runs with git's program-running configuration turned off
/// even when the classifier refuses it (`git -C vendor/embedded status` allowed by a
/// `Bash(git *)` rule), so an embedded repository's configuration never runs.
pub(crate) fn only_looking_git(command: &str) -> bool {
    let line = crate::shell::parse(command);
    if line.unreadable.is_some() {
        return false;
    }
    let mut any = false;
    for inner in line.lines() {
        for simple in &inner.commands {
            if !simple.assignments.is_empty() {
                return false;
            }
            let words: Option<Vec<String>> = simple
                .words
                .iter()
                .map(|w| w.known().map(str::to_string))
                .collect();
            let Some(words) = words else {
                return false;
            };
            match words.split_first() {
                Some((program, args)) if read_only::program_name(program) == "git" => {
                    if git::GitCall::parse(args).read_only().is_err() {
                        return false;
                    }
                    any = true;
                }
                Some((program, _)) if matches!(program.as_str(), "cd" | "pushd" | "popd") => {}
                None => {}
                Some(_) => return false,
            }
        }
    }
    any
}

/// How deep substitutions, `sh -c` strings and wrappers may nest before the line is refused.
const MAX_NESTING: usize = 16;

/// The longest quotation of a command in a message.
const MAX_QUOTE_CHARS: usize = 160;

/// A command as quoted in a message: one line, control characters made visible, cut when
/// long.
fn quote(command: &str) -> String {
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = crate::shell::quote::visible(&flat);
    match flat.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
