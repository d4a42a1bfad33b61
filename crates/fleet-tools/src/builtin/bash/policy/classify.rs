//! The read-only classifier: whether a command line changes nothing, judged on the shell
//! parser's model of it ([`crate::shell`]).
//!
//! Every line (nested ones too) must be readable and evaluate no arithmetic on variables;
//! every output redirection must go to a device; every simple command must run a program on
//! the list, used in a way that changes nothing. Programs that run programs are unwrapped
//! and what they run is judged in turn (`xargs` gives it extra unknown arguments, `sh -c`
//! and `eval` strings are parsed as lines); `sudo` and friends are never read-only.
//!
//! An unknown word is never a program, and reaches a program with options that act only
//! where it cannot be an option (see [`super::operands`]). A program on the [`PLAIN`] list
//! has no options that change anything, so it takes unknown words freely.
//!
//! A `cd` on the line or `git -C DIR` can point git at a repository committed inside the
//! project (a bare repository's `config` is an ordinary file), whose configuration runs
//! programs (`core.fsmonitor`, `core.pager`…); git there is read-only only when no folder
//! between the agent's folder and the target holds a repository of its own, both compared
//! with symlinks followed (a committed link into the embedded repository counts as the
//! repository). Whatever passes also runs with git's program-running configuration turned
//! off (see `builtin::bash::git_env`).

use super::conditions;
use super::git::GitCall;
use super::operands::{self, is_placeholder, MANY};
use super::read_only::{self, NotReadOnly, PLAIN};
use super::{quote, writes, PolicyRefusal, MAX_NESTING};
use crate::permissions::call::is_device;
use crate::shell::wrappers::{self, Runs};
use crate::shell::{self, is_risky_variable, Line, Redirect, RedirectOp, SimpleCommand, Word};
use std::path::{Path, PathBuf};

/// Why a shell's options or git's place make a read-only line unsafe; the text becomes the
/// refusal's `why`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ShellProblem {
    #[error(
        "git --git-dir / --work-tree / --bare can point git at a repository whose configuration \
         runs programs"
    )]
    GitRepositoryOption,
    #[error(
        "git run after a cd or with -C may use a repository kept inside the project, whose \
         configuration can run programs; run git from the agent's folder"
    )]
    GitElsewhere,
    /// `bash -o NAME` with a name not known to change only error handling or tracing.
    #[error("the shell option `-o {name}` is not one this check knows")]
    UnknownOption { name: String },
    /// `-l`, `-i`, `--rcfile` and the like.
    #[error("the shell option `{option}` may read startup files")]
    StartupOption { option: String },
}

/// Programs whose arguments end at a program they run; what they run is judged instead.
const WRAPPERS: &[&str] = &[
    "command", "builtin", "exec", "nice", "nohup", "timeout", "time", "stdbuf", "setsid", "coproc",
    "xargs", "env", "eval", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
];

/// Programs that run a command as another user.
const PRIVILEGED: &[&str] = &["sudo", "doas", "su", "pkexec", "runuser", "sudoedit"];

pub(super) struct ReadOnly<'a> {
    cwd: &'a Path,
    /// Where each `cd` / `pushd` / `popd` on the line goes; `None` where that is unknown.
    cd_targets: Vec<Option<PathBuf>>,
}

impl<'a> ReadOnly<'a> {
    pub fn new(cwd: &'a Path, line: &Line) -> Self {
        let mut cd_targets = Vec::new();
        collect_cd_targets(line, cwd, &mut cd_targets, 0);
        Self { cwd, cd_targets }
    }

    pub fn line(&self, line: &Line, depth: usize) -> Result<(), PolicyRefusal> {
        let refuse = |why: String| {
            Err(PolicyRefusal::ReadOnly {
                command: quote(&line.source),
                why,
            })
        };
        if depth > MAX_NESTING {
            return Err(PolicyRefusal::Unreadable {
                command: quote(&line.source),
                why: format!(
                    "substitutions, sh -c strings or wrappers nest more than {MAX_NESTING} deep"
                ),
            });
        }
        if let Some(why) = &line.unreadable {
            return Err(PolicyRefusal::Unreadable {
                command: quote(&line.source),
                why: why.clone(),
            });
        }
        if let Some(expression) = line.arithmetic.first() {
            return refuse(format!(
                "evaluates `{}` as arithmetic, where a variable holding a[$(cmd)] would run cmd \
                 (only plain numbers are read-only)",
                shell::quote::visible(expression)
            ));
        }
        if let Some(name) = line.sets.iter().find(|name| is_risky_variable(name)) {
            return refuse(format!(
                "sets {name}, which changes what the commands after it run"
            ));
        }
        for command in &line.commands {
            for redirect in &command.redirects {
                output(redirect, &command.source)?;
            }
            self.command(command, depth)?;
        }
        for redirect in &line.redirects {
            output(redirect, &line.source)?;
        }
        line.nested
            .iter()
            .try_for_each(|nested| self.line(nested, depth + 1))
    }

    fn command(&self, command: &SimpleCommand, depth: usize) -> Result<(), PolicyRefusal> {
        let refuse = |why: String| {
            Err(PolicyRefusal::ReadOnly {
                command: quote(&command.source),
                why,
            })
        };
        if depth > MAX_NESTING {
            return Err(PolicyRefusal::Unreadable {
                command: quote(&command.source),
                why: format!("wrappers nest more than {MAX_NESTING} deep"),
            });
        }
        // `IFS=` before a command only changes how that command splits (`IFS= read -r l`):
        // the command's own words were split before it takes effect.
        let sets_risky = command
            .assignments
            .iter()
            .any(|a| (a.name != "IFS" || command.words.is_empty()) && is_risky_variable(&a.name));
        if sets_risky {
            return refuse(
                "sets a variable such as PATH, LD_PRELOAD or GIT_* that changes what runs".into(),
            );
        }
        let Some(program) = command.words.first() else {
            // Variables that change nothing by themselves: a later `$a` is an unknown word,
            // and arithmetic on it is refused where it happens.
            return Ok(());
        };
        let Some(name) = shell::program_name(program) else {
            return match program {
                Word::Unknown(unknown) => refuse(format!(
                    "runs a program only known when it runs (`{}`)",
                    unknown.source
                )),
                Word::Known(path) => Err(PolicyRefusal::NotListed {
                    command: quote(&command.source),
                    program: shell::quote::visible(path),
                }),
            };
        };
        if PRIVILEGED.contains(&name) {
            return refuse(format!("runs a command as another user through {name}"));
        }
        if PLAIN.contains(&name) {
            return Ok(());
        }
        if matches!(name, "[[" | "[" | "test" | "((") {
            return conditions::check(&command.words)
                .map_err(|problem| problem.to_string())
                .or_else(refuse);
        }
        if WRAPPERS.contains(&name) {
            return self.wrapper(command, name, depth);
        }
        if name == "printf" {
            // Only a first word of `-v` is an option; after the format come its arguments.
            let format = command.words.get(1).and_then(Word::known);
            if format.is_some_and(|f| !f.starts_with('-') || f == "--") {
                return Ok(());
            }
        }
        let args = operands::view(&command.words[1..], name != "find").map_err(|unknown| {
            PolicyRefusal::ReadOnly {
                command: quote(&command.source),
                why: format!(
                    "gives {name} `{}`, which is only known when it runs and may be an option \
                     that writes files or runs programs; write the word out (or put operands \
                     after --)",
                    shell::quote::visible(&unknown.word)
                ),
            }
        })?;
        let mut argv = Vec::with_capacity(args.len() + 1);
        argv.push(name.to_string());
        argv.extend(args);
        judge(&argv, &command.source)?;
        if name == "git" {
            self.git_place(&argv[1..])
                .map_err(|problem| problem.to_string())
                .or_else(refuse)?;
        }
        Ok(())
    }

    /// A program that runs a program: its own options, then what it runs.
    fn wrapper(
        &self,
        command: &SimpleCommand,
        name: &str,
        depth: usize,
    ) -> Result<(), PolicyRefusal> {
        let refuse = |why: String| {
            Err(PolicyRefusal::ReadOnly {
                command: quote(&command.source),
                why,
            })
        };
        let mut own = vec![name.to_string()];
        own.extend(command.words[1..].iter().map(|w| match w {
            Word::Known(text) => text.clone(),
            Word::Unknown(_) => MANY.to_string(),
        }));
        if matches!(
            name,
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash"
        ) {
            shell_options(&command.words[1..])
                .map_err(|problem| problem.to_string())
                .or_else(refuse)?;
        }
        match wrappers::runs(command) {
            Runs::Nothing => judge(&own, &command.source),
            Runs::Commands { readings, .. } => {
                judge(&own, &command.source)?;
                readings
                    .iter()
                    .try_for_each(|reading| self.command(reading, depth + 1))
            }
            Runs::Line { line, .. } => {
                // A shell's options were checked above; eval has none. env -S is judged.
                if name == "env" {
                    judge(&own, &command.source)?;
                }
                self.line(&shell::parse(&line), depth + 1)
            }
            Runs::Unknown { why, .. } => {
                refuse(format!("runs a command only known when it runs: {why}"))
            }
        }
    }

    /// git run in another folder than the agent's (`-C`, `--git-dir`, a `cd` before it).
    fn git_place(&self, args: &[String]) -> Result<(), ShellProblem> {
        let call = GitCall::parse(args);
        if call.global.has(&["--git-dir", "--work-tree", "--bare"]) {
            return Err(ShellProblem::GitRepositoryOption);
        }
        for place in self.git_places(&call) {
            let safe = place
                .as_deref()
                .is_some_and(|dir| own_repository(dir, self.cwd));
            if !safe {
                return Err(ShellProblem::GitElsewhere);
            }
        }
        Ok(())
    }

    /// The folders git may start in: each `cd` target on the line and its `-C` folder
    /// (`None` where that is only known when the line runs).
    fn git_places(&self, call: &GitCall<'_>) -> Vec<Option<PathBuf>> {
        let mut places: Vec<Option<PathBuf>> = self.cd_targets.clone();
        if call.global.has(&["-C"]) {
            let dirs: Vec<&str> = call.global.values(&["-C"]).collect();
            let known = !dirs.iter().any(|d| is_placeholder(d));
            let base = self.cwd.join(&call.location);
            places.push(known.then(|| crate::workspace::absolute(&base, Path::new("/"))));
        }
        places
    }
}

/// Whether some git on `line` (nested lines and what wrappers run included) would start in a
/// folder inside the agent's that holds a repository of its own, or in one only known when it
/// runs, or is pointed at a repository with `--git-dir` / `--work-tree` / `--bare`: a place a
/// cloned project can prepare, for allow rules (see
/// [`crate::builtin::bash::enters_embedded_repository`]).
pub(super) fn enters_other_repository(cwd: &Path, line: &Line) -> bool {
    let judge = ReadOnly::new(cwd, line);
    let mut commands: Vec<SimpleCommand> = line
        .lines()
        .iter()
        .flat_map(|inner| inner.commands.iter().cloned())
        .collect();
    let mut seen = 0;
    while let Some(command) = commands.pop() {
        seen += 1;
        if seen > 256 {
            return true;
        }
        match wrappers::runs(&command) {
            Runs::Commands { readings, .. } => commands.extend(readings),
            Runs::Line { line, .. } => {
                let nested = shell::parse(&line);
                if enters_other_repository(cwd, &nested) {
                    return true;
                }
            }
            Runs::Unknown { .. } | Runs::Nothing => {}
        }
        if command.words.first().and_then(shell::program_name) != Some("git") {
            continue;
        }
        let args: Vec<String> = command.words[1..]
            .iter()
            .map(|w| w.known().map_or_else(|| MANY.to_string(), str::to_string))
            .collect();
        let call = GitCall::parse(&args);
        if call.global.has(&["--git-dir", "--work-tree", "--bare"]) {
            return true;
        }
        let nested = judge.git_places(&call).iter().any(|place| match place {
            Some(dir) => nested_repository(dir, cwd),
            None => true,
        });
        if nested {
            return true;
        }
    }
    false
}

/// Judges one argument vector with the per-program checks.
fn judge(argv: &[String], source: &str) -> Result<(), PolicyRefusal> {
    let refuse = |why: String| {
        Err(PolicyRefusal::ReadOnly {
            command: quote(source),
            why,
        })
    };
    match read_only::check(argv) {
        Ok(()) => Ok(()),
        Err(NotReadOnly::Changes(why)) => {
            refuse(format!("may change files or run programs ({why})"))
        }
        Err(NotReadOnly::Unknown(program)) => {
            if writes::changes_anything(argv) {
                refuse(format!(
                    "would change files ({program} changes files or runs other programs)"
                ))
            } else {
                Err(PolicyRefusal::NotListed {
                    command: quote(source),
                    program: shell::quote::visible(&program),
                })
            }
        }
    }
}

/// A redirection a read-only command may have: input, descriptor copies, and output to a
/// device.
fn output(redirect: &Redirect, source: &str) -> Result<(), PolicyRefusal> {
    let network = redirect
        .target
        .known()
        .is_some_and(|t| t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"));
    if network && redirect.op != RedirectOp::HereDoc && redirect.op != RedirectOp::HereString {
        return Err(PolicyRefusal::ReadOnly {
            command: quote(source),
            why: "opens a network connection through /dev/tcp or /dev/udp".into(),
        });
    }
    let Some(target) = redirect.written_target() else {
        return Ok(());
    };
    if target.known().is_some_and(is_device) {
        return Ok(());
    }
    Err(PolicyRefusal::ReadOnly {
        command: quote(source),
        why: format!(
            "would write into `{}` (output may go only to /dev/null, or to another descriptor \
             as in 2>&1)",
            shell::quote::visible(target.shown())
        ),
    })
}

/// Shell options allowed before `-c` in a read-only line: ones that only change how errors
/// and tracing work. `-l`, `-i`, `--rcfile` and the like read startup files.
fn shell_options(words: &[Word]) -> Result<(), ShellProblem> {
    let mut expect_option_name = false;
    for word in words {
        let Some(text) = word.known() else {
            break;
        };
        if std::mem::take(&mut expect_option_name) {
            if !matches!(
                text,
                "pipefail" | "errexit" | "nounset" | "xtrace" | "noglob"
            ) {
                return Err(ShellProblem::UnknownOption {
                    name: text.to_string(),
                });
            }
            continue;
        }
        match text {
            "--norc" | "--noprofile" | "--posix" => continue,
            "--" | "-" => break,
            _ => {}
        }
        let Some(cluster) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break;
        };
        if cluster.starts_with('-') {
            return Err(ShellProblem::StartupOption {
                option: text.to_string(),
            });
        }
        for c in cluster.chars() {
            match c {
                'c' | 'e' | 'u' | 'x' | 'v' | 'f' | 'C' | 'n' => {}
                'o' => expect_option_name = true,
                _ => {
                    return Err(ShellProblem::StartupOption {
                        option: format!("-{c}"),
                    })
                }
            }
        }
    }
    Ok(())
}

/// Every `cd`, `pushd` and `popd` on `line`: in its nested lines, behind `builtin` /
/// `command`, and inside the lines `eval` and `sh -c` run (an `eval "cd x"` moves the shell
/// the later commands run in; a `sh -c` one only its own, but counting it errs safe).
fn collect_cd_targets(line: &Line, cwd: &Path, out: &mut Vec<Option<PathBuf>>, depth: usize) {
    if depth > MAX_NESTING {
        out.push(None);
        return;
    }
    for inner in line.lines() {
        for command in &inner.commands {
            collect_command_cd(command, cwd, out, depth);
        }
    }
}

fn collect_command_cd(
    command: &SimpleCommand,
    cwd: &Path,
    out: &mut Vec<Option<PathBuf>>,
    depth: usize,
) {
    if depth > MAX_NESTING {
        out.push(None);
        return;
    }
    if let Some(target) = cd_target(command, cwd) {
        out.push(target);
        return;
    }
    match wrappers::runs(command) {
        Runs::Commands { readings, .. } => {
            for reading in &readings {
                collect_command_cd(reading, cwd, out, depth + 1);
            }
        }
        Runs::Line { line, .. } => collect_cd_targets(&shell::parse(&line), cwd, out, depth + 1),
        Runs::Unknown { .. } | Runs::Nothing => {}
    }
}

/// Where a `cd`, `pushd` or `popd` goes: `Some(None)` when that is unknown.
fn cd_target(command: &SimpleCommand, cwd: &Path) -> Option<Option<PathBuf>> {
    let name = command.words.first().and_then(shell::program_name)?;
    match name {
        "cd" | "pushd" => {}
        "popd" => return Some(None),
        _ => return None,
    }
    let target = command.words[1..]
        .iter()
        .find(|w| !w.known().is_some_and(|t| t.starts_with('-') && t != "-"));
    Some(match target.map(Word::known) {
        Some(Some(dir)) if dir != "-" => {
            Some(crate::workspace::absolute(&cwd.join(dir), Path::new("/")))
        }
        _ => None,
    })
}

/// Whether git in `dir` uses the repository of the agent's folder: `dir` is inside it and no
/// folder from `dir` up to it holds a repository (`.git`, or a bare repository's `HEAD` beside
/// `config`, `objects`, `refs` or `commondir`) of its own.
///
/// Both folders are compared with the symlinks that exist now followed, as git will follow
/// them: a committed link `docs -> vendor/embedded/sub` is inside the project as written, but
/// git started there finds the embedded repository around `vendor/embedded/sub`, whose
/// `config` may name an fsmonitor program.
fn own_repository(dir: &Path, cwd: &Path) -> bool {
    folders_between(dir, cwd).is_some_and(|folders| !folders.iter().any(|f| holds_repository(f)))
}

/// Whether `dir` lies inside `cwd` (symlinks followed) with a bare-layout repository on the
/// way: the kind a cloned project can have committed (git refuses to commit a `.git`, so a
/// nested checkout with one was made on this machine, by git).
fn nested_repository(dir: &Path, cwd: &Path) -> bool {
    folders_between(dir, cwd).is_some_and(|folders| folders.iter().any(|f| bare_layout(f)))
}

/// The folders from `dir` up to `cwd` (not included), both with the symlinks that exist now
/// followed; `None` when `dir` is not inside `cwd`.
fn folders_between(dir: &Path, cwd: &Path) -> Option<Vec<std::path::PathBuf>> {
    let root = Path::new("/");
    let cwd = crate::workspace::resolve(cwd, root);
    let dir = crate::workspace::resolve(dir, root);
    if !dir.starts_with(&cwd) {
        return None;
    }
    Some(
        dir.ancestors()
            .take_while(|folder| *folder != cwd)
            .map(Path::to_path_buf)
            .collect(),
    )
}

/// Whether git would take `folder` for a repository (or its `.git` for one).
fn holds_repository(folder: &Path) -> bool {
    bare_layout(folder) || folder.join(".git").symlink_metadata().is_ok()
}

/// `HEAD` beside `config`, `objects`, `refs` or `commondir`: a repository without a work tree.
fn bare_layout(folder: &Path) -> bool {
    folder.join("HEAD").is_file()
        && ["config", "objects", "refs", "commondir"]
            .iter()
            .any(|part| folder.join(part).exists())
}
