//! [`super::CommandPolicy::WritesOnlyUnder`]: any program may run, but what the command line
//! visibly changes (redirections, `rm`, `cp`, `sed -i`, `git commit` …, see [`super::writes`])
//! must lie under the allowed folders.
//!
//! The per-program knowledge reads arguments as text: a known word as its value, an unknown
//! one as written (`$HOME/x`, `*.o`), which the path checks then refuse as something the
//! shell expands.

use super::scope::{self, CwdChange, PathProblem, Scope};
use super::writes::{self, Effect};
use super::{quote, PolicyRefusal, MAX_NESTING};
use crate::permissions::call::{is_device, nameable};
use crate::shell::{self, is_risky_variable, Line, SimpleCommand, Word};
use std::path::{Path, PathBuf};

pub(super) struct Scoped<'a> {
    pub scope: &'a Scope,
}

impl Scoped<'_> {
    pub fn line(
        &self,
        line: &Line,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let unreadable = |why: String| PolicyRefusal::Unreadable {
            command: quote(&line.source),
            why,
        };
        if depth > MAX_NESTING {
            return Err(unreadable(format!(
                "substitutions, sh -c strings or wrappers nest more than {MAX_NESTING} deep"
            )));
        }
        if let Some(why) = &line.unreadable {
            return Err(unreadable(why.clone()));
        }
        if let Some(expression) = line.arithmetic.first() {
            return Err(unreadable(format!(
                "it evaluates `{}` as arithmetic, which can run a command hidden in a variable",
                shell::quote::visible(expression)
            )));
        }
        let cwds = possible_cwds(line, cwds);
        for redirect in line.all_redirects() {
            let Some(target) = redirect.written_target() else {
                continue;
            };
            let shown = target.shown();
            if target.known().is_some_and(is_device) {
                continue;
            }
            if target.is_unknown() || !nameable(shown) {
                return Err(PolicyRefusal::Unknowable {
                    command: quote(&line.source),
                    why: format!(
                        "it redirects into `{}`, which the shell expands",
                        shell::quote::visible(shown)
                    ),
                    allowed: self.scope.describe(),
                });
            }
            self.scope
                .check(Path::new(shown), &cwds)
                .map_err(|problem| {
                    refusal(self.scope, problem, quote(&line.source), Path::new(shown))
                })?;
        }
        for command in &line.commands {
            self.command(command, &cwds, depth)?;
        }
        line.nested
            .iter()
            .try_for_each(|nested| self.line(nested, &cwds, depth + 1))
    }

    fn command(
        &self,
        command: &SimpleCommand,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let args = text_args(command);
        let risky = command
            .assignments
            .iter()
            .any(|a| is_risky_variable(&a.name));
        if risky && writes::changes_anything(&args) {
            return Err(PolicyRefusal::Unknowable {
                command: quote(&command.source),
                why: "a variable such as GIT_DIR set before it changes where it writes".into(),
                allowed: self.scope.describe(),
            });
        }
        self.argv(&args, &command.source, cwds, depth)
    }

    /// Checks one argument vector (a simple command, or what a wrapper runs); `shown` is what
    /// messages quote.
    fn argv(
        &self,
        args: &[String],
        shown: &str,
        cwds: &[Option<PathBuf>],
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let scope = self.scope;
        let Some(program) = args.first() else {
            return Ok(());
        };
        if depth > MAX_NESTING {
            return Err(PolicyRefusal::Unreadable {
                command: quote(shown),
                why: format!("wrappers nest more than {MAX_NESTING} deep"),
            });
        }
        if program.contains(['$', '`', '*', '?', '[', '{', '~']) {
            return Err(PolicyRefusal::Unknowable {
                command: quote(shown),
                why: format!(
                    "the program `{}` is only known when it runs",
                    shell::quote::visible(program)
                ),
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
                Effect::Runs(inner) => self.argv(&inner, shown, cwds, depth + 1)?,
                Effect::Line(line) => self.line(&shell::parse(&line), cwds, depth + 1)?,
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

/// A command's words as text: known ones as their value, unknown ones as written, marked
/// with `$` when nothing in them says the shell expands them, so no path check takes one
/// literally.
fn text_args(command: &SimpleCommand) -> Vec<String> {
    command
        .words
        .iter()
        .map(|word| match word {
            Word::Known(text) => text.clone(),
            Word::Unknown(unknown) => {
                let source = &unknown.source;
                if source.contains(['$', '`', '*', '?', '[', '{', '~']) {
                    source.clone()
                } else {
                    format!("${{{source}}}")
                }
            }
        })
        .collect()
}

/// The folders the shell may be in while the line runs: the cwd it starts in and every
/// folder a `cd` on the line goes to, `None` for one that cannot be known. Order and loops
/// are ignored on purpose: a path must be safe from all of them.
fn possible_cwds(line: &Line, start: &[Option<PathBuf>]) -> Vec<Option<PathBuf>> {
    let mut cwds = start.to_vec();
    for command in &line.commands {
        let next = match scope::cwd_change(&text_args(command)) {
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
                shell::quote::visible(&path.display().to_string())
            ),
            allowed: scope.describe(),
        },
    }
}
