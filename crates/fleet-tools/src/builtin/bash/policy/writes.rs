//! What known programs change, for an agent that may write only under some folders: the
//! paths `rm`, `cp`, `sed -i`, `git commit`, `curl -o`, `tar x`… would touch.
//!
//! What wrappers (`sudo`, `xargs`, `sh -c`…) run is in [`super::wrappers`]; formatters, fixers
//! and package managers are in [`super::rewriters`]. Any other program runs freely: builds,
//! tests and interpreters may write anything, and no policy on a command line can see that.
//! This catches the direct ways an agent changes files from the shell, which is what a
//! verification agent is told not to do.

use super::args::{Args, OptSpec};
use super::git::GitCall;
use super::sed;
use std::path::{Path, PathBuf};

/// One thing a command does that the policy must look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Effect {
    /// Changes these paths, as written (relative ones from the shell's cwd).
    Paths(Vec<PathBuf>),
    /// Runs this argument vector (what a wrapper wraps, what `find -exec` runs).
    Runs(Vec<String>),
    /// Runs this command line (`sh -c`, `eval`, `trap`, an alias).
    Line(String),
    /// Changes files it cannot name before it runs.
    Unknowable(String),
}

/// An [`Effect::Paths`] from words as written.
pub(super) fn paths<'a>(items: impl IntoIterator<Item = &'a str>) -> Effect {
    Effect::Paths(items.into_iter().map(PathBuf::from).collect())
}

/// Programs whose every operand is a path they change.
const ALL_OPERANDS: &[(&str, OptSpec)] = &[
    ("rm", OptSpec::short("")),
    ("rmdir", OptSpec::short("")),
    ("unlink", OptSpec::short("")),
    ("tee", OptSpec::short("")),
    ("sponge", OptSpec::short("")),
    ("mkdir", OptSpec::short("m").long(&["mode"])),
    (
        "touch",
        OptSpec::short("drt").long(&["date", "reference", "time"]),
    ),
    (
        "truncate",
        OptSpec::short("sr").long(&["size", "reference"]),
    ),
    (
        "shred",
        OptSpec::short("ns").long(&["iterations", "size", "random-source"]),
    ),
    (
        "mv",
        OptSpec::short("tS").long(&["target-directory", "suffix"]),
    ),
];

/// What `args` (one simple command, program first) does that the policy must check.
pub(super) fn effects(args: &[String]) -> Vec<Effect> {
    let Some((program, rest)) = args.split_first() else {
        return Vec::new();
    };
    let program = super::read_only::program_name(program);
    if let Some(found) = super::rewriters::effects(program, rest) {
        return found;
    }
    if let Some((_, spec)) = ALL_OPERANDS.iter().find(|(name, _)| *name == program) {
        let args = Args::parse(rest, spec);
        let mut changed: Vec<&str> = args.operands.clone();
        changed.extend(args.values(&["-t", "--target-directory"]));
        return vec![paths(changed)];
    }
    if let Some(found) = super::wrappers::effects(program, rest) {
        return found;
    }
    match program {
        "cp" | "install" => copy(program, rest),
        "ln" => link(rest),
        "chmod" | "chown" | "chgrp" => modes(program, rest),
        "dd" => vec![paths(rest.iter().filter_map(|a| a.strip_prefix("of=")))],
        "sed" => sed_in_place(rest),
        "perl" => perl_in_place(rest),
        "patch" => patch(rest),
        "rsync" => rsync(rest),
        "mktemp" => mktemp(rest),
        "git" => git(rest),
        "curl" => super::downloads::curl(rest),
        "wget" => super::downloads::wget(rest),
        "tar" => tar(rest),
        "unzip" => {
            let args = Args::parse(rest, &OptSpec::short("dx"));
            if args.has(&["-l", "-t", "-p", "-Z", "-v"]) {
                Vec::new()
            } else {
                vec![paths([args.values(&["-d"]).last().unwrap_or(".")])]
            }
        }
        "sort" => {
            let spec = OptSpec::short("kotST").long(&["key", "output", "field-separator"]);
            let args = Args::parse(rest, &spec);
            vec![paths(args.values(&["-o", "--output"]))]
        }
        "uniq" => {
            let spec = OptSpec::short("fsw").long(&["skip-fields", "skip-chars", "check-chars"]);
            vec![paths(Args::parse(rest, &spec).operands.get(1).copied())]
        }
        // Listed as read-only, but with options that write files or run programs in ways
        // whose paths cannot be checked here.
        "awk" | "gawk" | "mawk" | "nawk" | "tree" | "fd" | "fdfind" | "rg" | "file" => {
            match super::read_only::check(args) {
                Err(super::read_only::NotReadOnly::Changes(why)) => vec![Effect::Unknowable(why)],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Whether `args` does anything the policy looks at, following wrappers.
pub(super) fn changes_anything(args: &[String]) -> bool {
    effects(args).into_iter().any(|effect| match effect {
        Effect::Runs(inner) => changes_anything(&inner),
        _ => true,
    })
}

/// `cp` and `install` change only their destination: `-t DIR` or the last operand (every
/// operand for `install -d`).
fn copy(program: &str, rest: &[String]) -> Vec<Effect> {
    let spec = if program == "cp" {
        OptSpec::short("tS").long(&["target-directory", "suffix", "no-preserve"])
    } else {
        OptSpec::short("gmoSt").long(&[
            "group",
            "mode",
            "owner",
            "suffix",
            "target-directory",
            "strip-program",
        ])
    };
    let args = Args::parse(rest, &spec);
    let targets: Vec<&str> = args.values(&["-t", "--target-directory"]).collect();
    if !targets.is_empty() {
        return vec![paths(targets)];
    }
    if program == "install" && args.has(&["-d", "--directory"]) {
        return vec![paths(args.operands.iter().copied())];
    }
    vec![paths(args.operands.last().copied())]
}

/// `ln` changes the link it makes: `-t DIR`, the last operand, or (with one operand) a link
/// of the same name in the cwd.
fn link(rest: &[String]) -> Vec<Effect> {
    let args = Args::parse(
        rest,
        &OptSpec::short("tS").long(&["target-directory", "suffix"]),
    );
    let targets: Vec<&str> = args.values(&["-t", "--target-directory"]).collect();
    if !targets.is_empty() {
        return vec![paths(targets)];
    }
    match args.operands.as_slice() {
        [] => Vec::new(),
        [one] => {
            let name = Path::new(one).file_name().map(PathBuf::from);
            vec![Effect::Paths(name.into_iter().collect())]
        }
        [.., last] => vec![paths([*last])],
    }
}

/// `chmod MODE FILE…`, `chown OWNER FILE…`: every operand but the first, or all of them with
/// `--reference`. A chmod mode may look like an option (`chmod -w f`); then there is no mode
/// operand.
fn modes(program: &str, rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short("").long(&["reference", "from"]);
    let args = Args::parse(rest, &spec);
    let mode_as_option = program == "chmod"
        && args.options.iter().any(|o| {
            !o.name.starts_with("--") && !matches!(o.name.as_str(), "-c" | "-f" | "-v" | "-R")
        });
    let skip = usize::from(!args.has(&["--reference"]) && !mode_as_option);
    vec![paths(args.operands.iter().skip(skip).copied())]
}

/// sed changes files only with `-i`: then every operand after the script. A script that
/// writes with `w` is refused outright, since its file names are inside the script.
fn sed_in_place(rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short("efl")
        .attached("i")
        .long(&["expression", "file", "line-length"]);
    let args = Args::parse(rest, &spec);
    if args.has(&["-f", "--file"]) {
        return vec![Effect::Unknowable(
            "sed -f runs a script file whose writes cannot be seen".into(),
        )];
    }
    let mut scripts: Vec<&str> = args.values(&["-e", "--expression"]).collect();
    let files = if scripts.is_empty() {
        scripts.extend(args.operands.first());
        args.operands.get(1..).unwrap_or_default()
    } else {
        &args.operands[..]
    };
    if let Some(why) = scripts.iter().find_map(|s| sed::check_script(s).err()) {
        return vec![Effect::Unknowable(format!("sed: {why}"))];
    }
    if args.has(&["-i", "--in-place"]) {
        vec![paths(files.iter().copied())]
    } else {
        Vec::new()
    }
}

/// `perl -i` edits every file operand (after the script file, when no `-e` gives the code).
fn perl_in_place(rest: &[String]) -> Vec<Effect> {
    let args = Args::parse(rest, &OptSpec::short("eEIMm").attached("il0xCdDV"));
    if !args.has(&["-i"]) {
        return Vec::new();
    }
    let skip = usize::from(!args.has(&["-e", "-E"]));
    vec![paths(args.operands.iter().skip(skip).copied())]
}

/// `patch` changes files named inside the patch, relative to `-d DIR` (else the cwd), plus
/// its `-o` output, `-r` rejects and an explicit file operand.
fn patch(rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short("BDdFgioprVYz").long(&[
        "prefix",
        "ifdef",
        "directory",
        "fuzz",
        "get",
        "input",
        "output",
        "strip",
        "reject-file",
        "version-control",
        "basename-prefix",
        "suffix",
        "quoting-style",
    ]);
    let args = Args::parse(rest, &spec);
    let mut changed: Vec<&str> = args.values(&["-d", "--directory"]).collect();
    if changed.is_empty() {
        changed.push(".");
    }
    changed.extend(
        args.values(&["-o", "--output", "-r", "--reject-file"])
            .filter(|p| *p != "-"),
    );
    changed.extend(args.operands.first());
    vec![paths(changed)]
}

/// `rsync … DEST`: the destination, unless it is on another host.
fn rsync(rest: &[String]) -> Vec<Effect> {
    if rest.iter().any(|a| a == "--remove-source-files") {
        return vec![Effect::Unknowable(
            "rsync --remove-source-files deletes its sources".into(),
        )];
    }
    match rest.last() {
        None => Vec::new(),
        Some(dest) if dest.starts_with('-') => vec![Effect::Unknowable(
            "rsync without a destination operand last".into(),
        )],
        Some(dest) => {
            let remote = dest
                .split_once(':')
                .is_some_and(|(host, _)| !host.contains('/'));
            if remote {
                Vec::new()
            } else {
                vec![paths([dest.as_str()])]
            }
        }
    }
}

/// `mktemp` writes in the temp folder unless given a folder or a template with a path.
fn mktemp(rest: &[String]) -> Vec<Effect> {
    let args = Args::parse(rest, &OptSpec::short("p").long(&["suffix"]));
    let mut changed: Vec<&str> = args.values(&["-p", "--tmpdir"]).collect();
    if changed.is_empty() && !args.has(&["-t"]) {
        changed.extend(args.operands.iter().filter(|t| t.contains('/')));
    }
    vec![paths(changed)]
}

/// git that only looks changes nothing; any other git changes the repository it runs in
/// (or, for `clone` and `init`, the folder it creates).
fn git(rest: &[String]) -> Vec<Effect> {
    let call = GitCall::parse(rest);
    if call.read_only().is_ok() {
        return Vec::new();
    }
    let mut changed = match call.creates() {
        Some(created) => vec![created],
        None => call.places.clone(),
    };
    // Configuration decides what git runs later: its file is a protected path.
    changed.extend(super::git_config::written(&call));
    let mut found = vec![Effect::Paths(changed)];
    // `-c alias.x='!cmd'`, `-c core.pager=…`: what configuration on the line may run.
    found.extend(super::launchers::runs("git", rest));
    found
}

/// `tar` writes the archive it creates (`-f FILE`) or the folder it extracts into (`-C DIR`,
/// else the cwd). The old spelling `tar xzf a.tgz` bundles the flags in the first word, and
/// `f` then takes the next word.
fn tar(rest: &[String]) -> Vec<Effect> {
    let spec = OptSpec::short("fCTXbHKLgVN").long(&["file", "directory", "exclude"]);
    let args = Args::parse(rest, &spec);
    let bundle = rest
        .first()
        .filter(|w| !w.starts_with('-'))
        .map_or("", String::as_str);
    let mode =
        |short: &str, long: &str, letter: char| args.has(&[short, long]) || bundle.contains(letter);
    if mode("-x", "--extract", 'x') && !args.has(&["-O", "--to-stdout"]) {
        let dir = args.values(&["-C", "--directory"]).last().unwrap_or(".");
        return vec![paths([dir])];
    }
    let writes =
        mode("-c", "--create", 'c') || mode("-r", "--append", 'r') || mode("-u", "--update", 'u');
    if !writes {
        return Vec::new();
    }
    let mut archives: Vec<&str> = args.values(&["-f", "--file"]).collect();
    if bundle.contains('f') {
        archives.extend(rest.get(1).map(String::as_str));
    }
    vec![paths(archives.into_iter().filter(|a| *a != "-"))]
}
