//! The programs a read-only agent may run, and the options that would make them change
//! something after all (`find -delete`, `sort -o`, `sed -i`, `git branch -D`…).
//!
//! An allow-list, not a deny-list: a program nobody has looked at is refused, since there is
//! no telling what it writes. Checks here read a command's arguments as text; an unknown
//! word reaches them only as a placeholder (see [`super::operands`]).
//!
//! Config-driven hooks: a program whose configuration can make it run other programs is
//! read-only only when that configuration cannot be in play. cargo is never read-only (a
//! `.cargo/config.toml` in the project or `$CARGO_HOME` can set `rustc-wrapper`,
//! `build.rustc`, credential providers or `git-fetch-with-cli`, and rustup may install the
//! toolchain a `rust-toolchain.toml` names); rg with `--pre` / `--pre-glob`, or while
//! `RIPGREP_CONFIG_PATH` is set (unless `--no-config`), is not; neither is git with `-c`,
//! `--config-env`, `--exec-path`, `--upload-pack` and the like (see [`super::git`]).

use super::args::{abbreviates, Args, OptSpec};
use super::git::GitCall;
use super::operands::{is_placeholder, MANY};
use super::sed;
use crate::shell::is_risky_variable;
use crate::shell::wrappers::{XARGS_VALUE_LONG, XARGS_VALUE_SHORT};

/// A few of the allowed programs, for messages that must say what *is* allowed.
pub(crate) const EXAMPLES: &str = "ls, cat, head, tail, wc, grep, rg, find (without -exec or \
    -delete), tree, stat, diff, jq, sort, sed (without -i), awk (without system or output \
    redirection), git status/log/diff/show/blame/branch/ls-files";

/// Programs that only read and print, whatever their options and operands.
pub(super) const PLAIN: &[&str] = &[
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
    crate::shell::program_name(&crate::shell::Word::Known(word.to_string()))
        .map_or(word, |name| &word[word.len() - name.len()..])
}

/// Checks one simple command's arguments, program first.
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
        "rg" => check_rg(rest)
            .map_err(|problem| problem.to_string())
            .or_else(changes),
        "sed" => check_sed(rest)
            .map_err(|problem| problem.to_string())
            .or_else(changes),
        "awk" | "gawk" | "mawk" | "nawk" => super::awk::check(rest)
            .map_err(|problem| problem.to_string())
            .or_else(changes),
        "git" => GitCall::parse(rest)
            .read_only()
            .map_err(|problem| problem.to_string())
            .or_else(changes),
        "cargo" => changes(
            "cargo reads .cargo/config.toml from the project and $CARGO_HOME, which can make \
             even `cargo metadata` run programs (rustc-wrapper, build.rustc, credential \
             providers), and rustup may install the toolchain rust-toolchain.toml names; \
             cargo always needs approval"
                .into(),
        ),
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
            let operands = Args::parse(rest, &spec).operands;
            if operands.len() > 1 || operands.contains(&MANY) {
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
            // `read NAME…` sets variables, which must be plain names that change nothing
            // (a subscript is evaluated as arithmetic).
            let args = Args::parse(rest, &OptSpec::short("adinNptu"));
            let mut names = args.operands.iter().copied().chain(args.values(&["-a"]));
            match names.find(|name| {
                is_risky_variable(name)
                    || is_placeholder(name)
                    || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }) {
                Some(name) if is_placeholder(name) => {
                    changes("read sets a variable whose name is only known when it runs".into())
                }
                Some(name) => changes(format!(
                    "read sets `{name}`, which changes what runs or is evaluated as arithmetic"
                )),
                None => Ok(()),
            }
        }
        "env" => {
            // Only printing the environment: a command run by env is checked on its own.
            let spec = OptSpec::short("uCS")
                .long(&["unset", "chdir", "split-string"])
                .stop_at_operand();
            let args = Args::parse(rest, &spec);
            if args.has(&["-S", "--split-string"]) {
                return changes("env -S runs a command given as a string".into());
            }
            let clears = args.has(&["-i", "--ignore-environment"])
                || rest.first().is_some_and(|w| w == "-")
                || args.values(&["-u", "--unset"]).any(is_risky_variable);
            if clears {
                // Would drop the configuration that turns off git's programs.
                return changes("env -i / -u clears variables fleet sets for safety".into());
            }
            if args.has(&["-C", "--chdir"]) {
                // git run there could find a repository committed inside the project, which
                // the check of `cd` targets would not see.
                return changes("env -C runs the command in another folder (use cd)".into());
            }
            Ok(())
        }
        "xargs" => {
            let spec = OptSpec::short(XARGS_VALUE_SHORT)
                .attached("eil")
                .long(XARGS_VALUE_LONG);
            match Args::parse(rest, &spec)
                .values(&["--process-slot-var"])
                .find(|name| is_risky_variable(name))
            {
                Some(name) => changes(format!("xargs sets {name} for what it runs")),
                None => Ok(()),
            }
        }
        "time" => {
            let spec = OptSpec::short("fo").long(&["format", "output", "append"]);
            if Args::parse(rest, &spec).has(&["-o", "--output"]) {
                return changes("time -o writes a file".into());
            }
            Ok(())
        }
        "exec"
            if rest
                .iter()
                .take_while(|w| w.starts_with('-'))
                .any(|w| w.contains('c')) =>
        {
            changes("exec -c clears variables fleet sets for safety".into())
        }
        // Given nothing to run, these only print or do nothing.
        "command" | "builtin" | "exec" | "nice" | "nohup" | "timeout" | "stdbuf" | "setsid"
        | "coproc" => Ok(()),
        other => Err(NotReadOnly::Unknown(other.to_string())),
    }
}

/// Whether `args` (program first, known words) uses a program that otherwise only reads in
/// a way that writes files or runs programs: `find -delete` / `-exec`, `sed -i` or a `w`
/// command, awk's `system()`, `rg --pre`, `sort -o`, `git -c` / `--upload-pack` … A `*` in
/// an allow rule should not stand for such an option: `Bash(find *)` is meant for finding.
pub(crate) fn hidden_action(args: &[String]) -> bool {
    let Some((program, rest)) = args.split_first() else {
        return false;
    };
    match program_name(program) {
        "find" | "fd" | "fdfind" | "rg" | "sed" | "awk" | "gawk" | "mawk" | "nawk" | "sort"
        | "tree" | "file" | "uniq" | "date" => {
            matches!(check(args), Err(NotReadOnly::Changes(_)))
        }
        "git" => GitCall::parse(rest).hidden_action(),
        _ => false,
    }
}

/// find's actions that delete, write files or run programs.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Why an rg command line may run a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RgProblem {
    #[error("rg --pre runs a program on every file")]
    Preprocessor,
    #[error(
        "rg reads options from RIPGREP_CONFIG_PATH, which can name a --pre program (add \
         --no-config)"
    )]
    ConfigFile,
}

/// Why a sed command line may change files or run something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum SedLineProblem {
    #[error("sed -i edits files in place")]
    InPlace,
    #[error("sed -f runs a script file this check cannot see")]
    ScriptFile,
    #[error("sed without a script")]
    NoScript,
    #[error("the sed script is only known when it runs")]
    UnknownScript,
    #[error("sed: {0}")]
    Script(#[source] sed::SedProblem),
}

/// rg runs a preprocessor with `--pre`, and reads more options (`--pre` among them) from
/// `RIPGREP_CONFIG_PATH`, set in fleet's environment or on the line.
fn check_rg(rest: &[String]) -> Result<(), RgProblem> {
    let before_operands = rest.iter().take_while(|a| *a != "--");
    let mut no_config = false;
    for arg in before_operands {
        let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
        if matches!(name, "--pre" | "--pre-glob") {
            return Err(RgProblem::Preprocessor);
        }
        no_config |= name == "--no-config";
    }
    if !no_config && std::env::var_os("RIPGREP_CONFIG_PATH").is_some_and(|v| !v.is_empty()) {
        return Err(RgProblem::ConfigFile);
    }
    Ok(())
}

fn check_sed(rest: &[String]) -> Result<(), SedLineProblem> {
    let spec = OptSpec::short("efl")
        .attached("i")
        .long(&["expression", "file", "line-length"]);
    let args = Args::parse(rest, &spec);
    if args.has(&["-i", "--in-place"]) {
        return Err(SedLineProblem::InPlace);
    }
    if args.has(&["-f", "--file"]) {
        return Err(SedLineProblem::ScriptFile);
    }
    let mut scripts: Vec<&str> = args.values(&["-e", "--expression"]).collect();
    if scripts.is_empty() {
        scripts.extend(args.operands.first());
    }
    if scripts.is_empty() {
        return Err(SedLineProblem::NoScript);
    }
    scripts.into_iter().try_for_each(|script| {
        if script.contains(['\u{1}', '\u{2}']) {
            return Err(SedLineProblem::UnknownScript);
        }
        sed::check_script(script).map_err(SedLineProblem::Script)
    })
}
