//! Command policies for agents whose Bash must not change the project: the read-only
//! subagents (Explore, Plan) may run only commands that change nothing, and the verification
//! agent may run builds and tests but change files only under a scratch folder.
//!
//! A command line is read the way the permission rules read it (the same quote-aware
//! splitting into simple commands, see `permissions::bash_split`), after taking out command
//! substitutions so that each `$(…)` is judged as a command line of its own. Every simple
//! command, every output redirection and every substitution must pass.
//!
//! The check reads the command line, not what programs do when they run: under
//! [`CommandPolicy::WritesOnlyUnder`] a build script or a test may still write anywhere. It
//! errs towards refusing: what it cannot read (an unclosed quote, a path built from a
//! variable, a heredoc line that looks like a command) is refused, with a message saying what
//! to write instead.

mod args;
mod downloads;
mod git;
mod read_only;
mod rewriters;
mod scope;
mod sed;
mod substitution;
mod wrappers;
mod writes;

use crate::permissions::bash_split::{self, ParsedCommand, SimpleCommand};
use crate::permissions::call::{is_device, nameable};
use scope::{CwdChange, PathProblem, Scope};
use std::path::{Path, PathBuf};
use thiserror::Error;
use writes::Effect;

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
    let scope = match policy {
        CommandPolicy::ReadOnly => None,
        CommandPolicy::WritesOnlyUnder(dirs) => Some(Scope::new(dirs, &cwd)),
    };
    Checker { scope }.line(command, &[Some(cwd)], 0)
}

/// How deep substitutions, `sh -c` strings and wrappers may nest before the line is refused.
const MAX_NESTING: usize = 16;

/// The longest quotation of a command in a message.
const MAX_QUOTE_CHARS: usize = 160;

struct Checker {
    /// The allowed folders; `None` for the read-only policy.
    scope: Option<Scope>,
}

impl Checker {
    fn line(
        &self,
        command: &str,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let unreadable = |why: String| PolicyRefusal::Unreadable {
            command: quote(command),
            why,
        };
        if depth > MAX_NESTING {
            return Err(unreadable(format!(
                "substitutions, sh -c strings or wrappers nest more than {MAX_NESTING} deep"
            )));
        }
        let masked = substitution::mask(command).map_err(unreadable)?;
        let parsed = bash_split::parse(&masked.line);
        if parsed.unterminated {
            return Err(unreadable("a quote is never closed".into()));
        }
        let cwds = match &self.scope {
            None => {
                self.read_only(&parsed)?;
                cwds.to_vec()
            }
            Some(scope) => {
                let cwds = possible_cwds(&parsed, cwds);
                self.writes(scope, &parsed, &cwds, depth)?;
                cwds
            }
        };
        masked
            .bodies
            .iter()
            .try_for_each(|body| self.line(body, &cwds, depth + 1))
    }

    fn read_only(&self, parsed: &ParsedCommand) -> Result<(), PolicyRefusal> {
        if let Some(target) = parsed.redirects.iter().find(|t| !is_device(t)) {
            return Err(PolicyRefusal::ReadOnly {
                command: quote(&parsed.whole),
                why: format!(
                    "would write into `{target}` (output may go only to /dev/null, or to \
                     another descriptor as in 2>&1)"
                ),
            });
        }
        parsed.parts.iter().try_for_each(read_only_part)
    }

    fn writes(
        &self,
        scope: &Scope,
        parsed: &ParsedCommand,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        for target in &parsed.redirects {
            if is_device(target) {
                continue;
            }
            let command = quote(&parsed.whole);
            if !nameable(target) {
                return Err(PolicyRefusal::Unknowable {
                    command,
                    why: format!("it redirects into `{target}`, which the shell expands"),
                    allowed: scope.describe(),
                });
            }
            scope
                .check(Path::new(target), cwds)
                .map_err(|problem| refusal(scope, problem, command, Path::new(target)))?;
        }
        parsed.parts.iter().try_for_each(|part| {
            if part.risky_env && writes::changes_anything(&part.args) {
                return Err(PolicyRefusal::Unknowable {
                    command: quote(&part.full),
                    why: "a variable such as GIT_DIR set before it changes where it writes".into(),
                    allowed: scope.describe(),
                });
            }
            self.argv(scope, &part.args, &part.text, cwds, depth)
        })
    }

    /// Checks one simple command (or what a wrapper runs); `shown` is what messages quote.
    fn argv(
        &self,
        scope: &Scope,
        args: &[String],
        shown: &str,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let Some(program) = args.first() else {
            return Ok(());
        };
        if depth > MAX_NESTING {
            return Err(PolicyRefusal::Unreadable {
                command: quote(shown),
                why: format!("wrappers nest more than {MAX_NESTING} deep"),
            });
        }
        if program.contains(['$', '`', '*', '?', '[']) {
            return Err(PolicyRefusal::Unknowable {
                command: quote(shown),
                why: format!("the program `{program}` is only known when it runs"),
                allowed: scope.describe(),
            });
        }
        for effect in writes::effects(args) {
            match effect {
                Effect::Paths(paths) => {
                    for path in paths {
                        let path = if path.as_os_str().is_empty() {
                            PathBuf::from(".")
                        } else {
                            path
                        };
                        scope
                            .check(&path, cwds)
                            .map_err(|problem| refusal(scope, problem, quote(shown), &path))?;
                    }
                }
                Effect::Runs(inner) => self.argv(scope, &inner, shown, cwds, depth + 1)?,
                Effect::Line(line) => self.line(&line, cwds, depth + 1)?,
                Effect::Unknowable(why) => {
                    return Err(PolicyRefusal::Unknowable {
                        command: quote(shown),
                        why,
                        allowed: scope.describe(),
                    })
                }
            }
        }
        Ok(())
    }
}

fn read_only_part(part: &SimpleCommand) -> Result<(), PolicyRefusal> {
    let refuse = |command: &str, why: String| {
        Err(PolicyRefusal::ReadOnly {
            command: quote(command),
            why,
        })
    };
    if part.risky_env {
        let why = if part.args.is_empty() {
            "sets shell variables, which can change what later commands run"
        } else {
            "sets a variable such as PATH, LD_PRELOAD or GIT_* that changes what runs"
        };
        return refuse(&part.full, why.into());
    }
    match read_only::check(&part.args) {
        Ok(()) => Ok(()),
        Err(read_only::NotReadOnly::Changes(why)) => {
            refuse(&part.text, format!("would change files ({why})"))
        }
        Err(read_only::NotReadOnly::Unknown(program)) => {
            if program.contains(['$', '`']) {
                refuse(
                    &part.text,
                    format!("runs a program only known when it runs (`{program}`)"),
                )
            } else if writes::changes_anything(&part.args) {
                refuse(
                    &part.text,
                    format!("would change files ({program} changes files or runs other programs)"),
                )
            } else {
                Err(PolicyRefusal::NotListed {
                    command: quote(&part.text),
                    program,
                })
            }
        }
    }
}

/// The folders the shell may be in while the line runs: the cwd it starts in and every
/// folder a `cd` on the line goes to, `None` for one that cannot be known. Order and loops
/// are ignored on purpose: a path must be safe from all of them.
fn possible_cwds(parsed: &ParsedCommand, start: &[Option<PathBuf>]) -> Vec<Option<PathBuf>> {
    let mut cwds = start.to_vec();
    for part in &parsed.parts {
        let next = match scope::cwd_change(&part.args) {
            None => continue,
            Some(CwdChange::To(dir)) => Some(crate::workspace::absolute(&dir, Path::new("/"))),
            Some(CwdChange::Unknown) => None,
        };
        if !cwds.contains(&next) {
            cwds.push(next);
        }
    }
    cwds
}

fn refusal(scope: &Scope, problem: PathProblem, command: String, path: &Path) -> PolicyRefusal {
    match problem {
        PathProblem::Outside(resolved) => PolicyRefusal::Outside {
            command,
            path: resolved.display().to_string(),
            allowed: scope.describe(),
        },
        PathProblem::Unknowable => PolicyRefusal::Unknowable {
            command,
            why: format!(
                "`{}` is expanded by the shell, or is relative after a cd this check cannot \
                 follow",
                path.display()
            ),
            allowed: scope.describe(),
        },
    }
}

/// A command as quoted in a message: one line, cut when long.
fn quote(command: &str) -> String {
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX_QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
