//! The programs a read-only agent may run, and the options that would make them change
//! something after all (`find -delete`, `sort -o`, `sed -i`, `git branch -D`…).
//!
//! An allow-list, not a deny-list: a program nobody has looked at is refused, since there is
//! no telling what it writes.

use super::args::{abbreviates, command_starts, Args, OptSpec};
use super::git::GitCall;
use super::sed;
use crate::permissions::bash_split::is_risky_variable;

/// A few of the allowed programs, for messages that must say what *is* allowed.
pub(crate) const EXAMPLES: &str = "ls, cat, head, tail, wc, grep, rg, find (without -exec or \
    -delete), tree, stat, diff, jq, sort, sed (without -i), awk (without system or output \
    redirection), git status/log/diff/show/blame/branch/ls-files, cargo tree/metadata";

/// Programs that only read and print, whatever their options.
const PLAIN: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "stat",
    "du",
    "df",
    "pwd",
    "echo",
    "which",
    "type",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "uname",
    "jq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "nl",
    "tac",
    "rev",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "column",
    "paste",
    "join",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "seq",
    "true",
    "false",
    "test",
    "[",
    "[[",
    ":",
    "cd",
    "pushd",
    "popd",
    "sleep",
    "id",
    "whoami",
    "groups",
    "nproc",
    "uptime",
    "printenv",
    "ps",
    "getconf",
    "free",
    "tty",
    "locale",
];

/// Why a command is not read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NotReadOnly {
    /// The program is not on the list.
    Unknown(String),
    /// The program is on the list, but these options or operands change something.
    Changes(String),
}

/// The name a program word stands for: `/usr/bin/ls` is `ls`; any other path stays itself
/// (and so is not on the list: `./ls` may be anything).
pub(super) fn program_name(word: &str) -> &str {
    ["/usr/bin/", "/bin/"]
        .iter()
        .find_map(|dir| word.strip_prefix(dir).filter(|name| !name.contains('/')))
        .unwrap_or(word)
}

/// Checks one simple command's argument vector.
pub(super) fn check(args: &[String]) -> Result<(), NotReadOnly> {
    let Some((program, rest)) = args.split_first() else {
        return Ok(());
    };
    let program = program_name(program);
    let changes = |why: String| Err(NotReadOnly::Changes(why));
    if PLAIN.contains(&program) {
        return Ok(());
    }
    match program {
        "find" => match rest.iter().find(|a| FIND_ACTIONS.contains(&a.as_str())) {
            Some(action) => changes(format!("find {action} deletes, writes or runs something")),
            None => Ok(()),
        },
        "fd" | "fdfind" => {
            let spec = OptSpec::short("etEdScjoxX").long(&[
                "extension",
                "type",
                "exclude",
                "max-depth",
                "min-depth",
                "exact-depth",
                "size",
                "color",
                "threads",
                "owner",
                "exec",
                "exec-batch",
                "changed-within",
                "changed-before",
                "base-directory",
                "search-path",
                "ignore-file",
                "max-results",
                "path-separator",
                "batch-size",
                "format",
            ]);
            if Args::parse(rest, &spec).has(&["-x", "-X", "--exec", "--exec-batch"]) {
                return changes("fd --exec runs a program on every match".into());
            }
            Ok(())
        }
        "rg" => match rest
            .iter()
            .find(|a| *a == "--pre" || a.starts_with("--pre="))
        {
            Some(_) => changes("rg --pre runs a program on every file".into()),
            None => Ok(()),
        },
        "sed" => check_sed(rest).or_else(changes),
        "awk" | "gawk" | "mawk" | "nawk" => check_awk(rest).or_else(changes),
        "git" => GitCall::parse(rest).read_only().or_else(changes),
        "cargo" => check_cargo(rest).or_else(changes),
        "sort" => {
            let spec = OptSpec::short("kotST").long(&[
                "key",
                "output",
                "field-separator",
                "buffer-size",
                "temporary-directory",
                "files0-from",
                "batch-size",
                "compress-program",
                "parallel",
                "random-source",
            ]);
            let args = Args::parse(rest, &spec);
            if args.has(&["-o", "--output", "--compress-program"]) {
                return changes("sort -o writes a file (and --compress-program runs one)".into());
            }
            Ok(())
        }
        "uniq" => {
            let spec = OptSpec::short("fsw").long(&["skip-fields", "skip-chars", "check-chars"]);
            if Args::parse(rest, &spec).operands.len() > 1 {
                return changes("uniq writes its second operand".into());
            }
            Ok(())
        }
        "tree" => match rest.iter().find(|a| a.starts_with("-o") || *a == "-R") {
            Some(option) => changes(format!("tree {option} writes files")),
            None => Ok(()),
        },
        "date" => {
            let spec =
                OptSpec::short("dfrs")
                    .attached("I")
                    .long(&["date", "file", "reference", "set"]);
            let args = Args::parse(rest, &spec);
            if args.has(&["-s", "--set"]) || args.operands.iter().any(|o| !o.starts_with('+')) {
                return changes("date with -s or a date operand sets the clock".into());
            }
            Ok(())
        }
        "file" => match rest
            .iter()
            .find(|a| *a == "-C" || abbreviates(a, "--compile"))
        {
            Some(_) => changes("file -C writes a compiled magic file".into()),
            None => Ok(()),
        },
        "printf" => match rest.first() {
            Some(flag) if flag == "-v" => changes("printf -v sets a shell variable".into()),
            _ => Ok(()),
        },
        "read" => {
            // `read NAME…` sets variables, which must not be ones that change what runs.
            let args = Args::parse(rest, &OptSpec::short("adinNptu"));
            let mut names = args.operands.iter().copied().chain(args.values(&["-a"]));
            match names.find(|name| is_risky_variable(name)) {
                Some(name) => changes(format!("read sets {name}, which changes what runs")),
                None => Ok(()),
            }
        }
        "for" => match rest.first() {
            // `for NAME in WORDS`: only sets the loop variable, which must not be one that
            // changes what the loop body runs.
            Some(name) if is_risky_variable(name) => changes(format!(
                "the loop sets {name}, which changes what the commands in it run"
            )),
            _ => Ok(()),
        },
        "env" => check_env(rest),
        "xargs" => {
            let spec = OptSpec::short("adEILnPs").attached("eil").long(&[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ]);
            // With no command xargs runs echo.
            check_wrapped(rest, &spec.stop_at_operand())
        }
        "command" => {
            let spec = OptSpec::default().stop_at_operand();
            if Args::parse(rest, &spec).has(&["-v", "-V"]) {
                Ok(())
            } else {
                check_wrapped(rest, &spec)
            }
        }
        other => Err(NotReadOnly::Unknown(other.to_string())),
    }
}

/// Checks every reading of what a wrapper runs (see [`command_starts`]).
fn check_wrapped(rest: &[String], spec: &OptSpec) -> Result<(), NotReadOnly> {
    command_starts(rest, spec)
        .into_iter()
        .try_for_each(|start| check(&rest[start..]))
}

/// find's actions that delete, write files or run programs.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

fn check_sed(rest: &[String]) -> Result<(), String> {
    let spec = OptSpec::short("efl")
        .attached("i")
        .long(&["expression", "file", "line-length"]);
    let args = Args::parse(rest, &spec);
    if args.has(&["-i", "--in-place"]) {
        return Err("sed -i edits files in place".into());
    }
    if args.has(&["-f", "--file"]) {
        return Err("sed -f runs a script file this check cannot see".into());
    }
    let mut scripts: Vec<&str> = args.values(&["-e", "--expression"]).collect();
    if scripts.is_empty() {
        scripts.extend(args.operands.first());
    }
    scripts
        .into_iter()
        .try_for_each(|script| sed::check_script(script).map_err(|why| format!("sed: {why}")))
}

fn check_awk(rest: &[String]) -> Result<(), String> {
    let spec = OptSpec::short("FfveilE").attached("opd").long(&[
        "field-separator",
        "assign",
        "file",
        "source",
        "include",
        "load",
        "exec",
    ]);
    let args = Args::parse(rest, &spec);
    const UNSEEN: &[&str] = &[
        "-f",
        "--file",
        "-i",
        "--include",
        "-l",
        "--load",
        "-E",
        "--exec",
    ];
    if args.has(UNSEEN) {
        return Err("awk with a program file or extension runs code this check cannot see".into());
    }
    const WRITES: &[&str] = &[
        "-o",
        "--pretty-print",
        "-p",
        "--profile",
        "-d",
        "--dump-variables",
    ];
    if args.has(WRITES) {
        return Err("gawk -o / -p / -d write files".into());
    }
    let mut programs: Vec<&str> = args.values(&["-e", "--source"]).collect();
    if programs.is_empty() {
        programs.extend(args.operands.first());
    }
    programs.into_iter().try_for_each(awk_program)
}

/// An awk program that neither runs commands nor writes files: no `system`, no pipes, no
/// `print … > file`, no extensions. A `>` anywhere in a print statement counts, so
/// `print (a > b)` is refused too; write `print (a > b ? 1 : 0)` elsewhere if needed.
fn awk_program(program: &str) -> Result<(), String> {
    if program.contains("system") {
        return Err("awk system() runs a shell command".into());
    }
    if program.replace("||", "").contains('|') {
        return Err("awk `|` pipes to or from a shell command".into());
    }
    if program.contains("@load") || program.contains("@include") {
        return Err("awk @load / @include run code this check cannot see".into());
    }
    let prints_to_file = program.match_indices("print").any(|(at, _)| {
        program[at..]
            .split([';', '}', '\n'])
            .next()
            .is_some_and(|statement| statement.contains('>'))
    });
    if prints_to_file {
        return Err("awk print > writes a file".into());
    }
    Ok(())
}

fn check_cargo(rest: &[String]) -> Result<(), String> {
    const LOOKING: &[&str] = &[
        "tree",
        "metadata",
        "locate-project",
        "pkgid",
        "version",
        "verify-project",
        "help",
    ];
    let rest = match rest.first() {
        Some(toolchain) if toolchain.starts_with('+') => &rest[1..],
        _ => rest,
    };
    let spec = OptSpec::short("CZ")
        .long(&["color", "config", "explain"])
        .stop_at_operand();
    let args = Args::parse(rest, &spec);
    if args.has(&["--config"]) {
        return Err("cargo --config can make cargo run other programs".into());
    }
    match rest.get(args.rest).map(String::as_str) {
        None => Ok(()),
        Some(sub) if LOOKING.contains(&sub) => Ok(()),
        Some(sub) => Err(format!(
            "cargo {sub} may build, write or fetch (allowed: cargo {})",
            LOOKING.join(", ")
        )),
    }
}

/// `env` only prints the environment here; with a command it would run it, which the agent
/// should do directly (and have checked).
fn check_env(rest: &[String]) -> Result<(), NotReadOnly> {
    let spec = OptSpec::short("uCS")
        .long(&["unset", "chdir", "split-string"])
        .stop_at_operand();
    let args = Args::parse(rest, &spec);
    if args.has(&["-S", "--split-string"]) {
        return Err(NotReadOnly::Changes("env -S runs a command".into()));
    }
    match rest[args.rest..].iter().find(|w| !w.contains('=')) {
        Some(command) => Err(NotReadOnly::Changes(format!(
            "env runs {command}; run it without env so it is checked"
        ))),
        None => Ok(()),
    }
}
