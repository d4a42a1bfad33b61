//! Programs that rewrite a project in place: formatters told to write (`cargo fmt`,
//! `prettier --write`), fixers (`cargo fix`, `eslint --fix`) and package managers that
//! install or change dependencies (`npm install`, `cargo add`). A verification agent may run
//! their checking forms (`cargo fmt --check`, `black --check`) anywhere, and their writing
//! forms only in a folder it may write to.
//!
//! Builds and tests also write (`target/`, caches), and stay allowed: that output is theirs,
//! not a change to the project's sources.

use super::args::{abbreviates, Args, OptSpec};
use super::writes::Effect;
use std::path::{Path, PathBuf};

/// The paths `program` would rewrite, or `None` when it is not one of these programs.
pub(super) fn effects(program: &str, rest: &[String]) -> Option<Vec<Effect>> {
    let found = match program {
        "cargo" => cargo(rest),
        "rustfmt" => unless_checking(rest, &["--check"], &["-"]),
        "gofmt" => when_given(rest, &["-w"]),
        "go" => match rest.first().map(String::as_str) {
            Some("fmt" | "fix" | "generate" | "get" | "mod" | "work") => Some(vec![".".into()]),
            _ => None,
        },
        "prettier" => when_given(rest, &["--write", "-w"]),
        "eslint" => when_given(rest, &["--fix"]),
        "black" | "isort" => unless_checking(rest, &["--check", "--diff"], &["."]),
        "ruff" => ruff(rest),
        "npm" | "pnpm" | "yarn" | "bun" => package_manager(program, rest),
        _ => return None,
    };
    Some(
        found
            .map(|changed| vec![Effect::Paths(changed)])
            .unwrap_or_default(),
    )
}

/// The operands, or `default` when there are none, unless one of `checking` was given.
fn unless_checking(rest: &[String], checking: &[&str], default: &[&str]) -> Option<Vec<PathBuf>> {
    let args = Args::parse(rest, &OptSpec::default());
    if args.has(checking) {
        return None;
    }
    Some(operands_or(&args, default))
}

/// The operands (else the current folder) when one of `writing` was given.
fn when_given(rest: &[String], writing: &[&str]) -> Option<Vec<PathBuf>> {
    let args = Args::parse(rest, &OptSpec::default());
    args.has(writing).then(|| operands_or(&args, &["."]))
}

fn operands_or(args: &Args<'_>, default: &[&str]) -> Vec<PathBuf> {
    let operands: &[&str] = if args.operands.is_empty() {
        default
    } else {
        &args.operands
    };
    operands.iter().map(PathBuf::from).collect()
}

/// cargo's rewriting subcommands change the package: the folder of `--manifest-path`, of
/// `-C DIR`, else the current one (`cargo new` / `init` the folder they create).
fn cargo(rest: &[String]) -> Option<Vec<PathBuf>> {
    let rest = match rest.first() {
        Some(toolchain) if toolchain.starts_with('+') => &rest[1..],
        _ => rest,
    };
    let global = OptSpec::short("CZ")
        .long(&["color", "config", "explain"])
        .stop_at_operand();
    let globals = Args::parse(rest, &global);
    let (sub, args) = rest[globals.rest..].split_first()?;
    let args = Args::parse(
        args,
        &OptSpec::short("p").long(&["manifest-path", "package"]),
    );
    let base = globals
        .values(&["-C"])
        .last()
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let package = match args.values(&["--manifest-path"]).last() {
        Some(manifest) => base.join(Path::new(manifest).parent().unwrap_or(Path::new("."))),
        None => base.clone(),
    };
    let rewrites = match sub.as_str() {
        "fmt" => !args.has(&["--check"]) && !rest.iter().any(|a| a == "--check"),
        "fix" | "add" | "remove" | "rm" | "update" | "generate-lockfile" | "vendor" => true,
        "clippy" => rest.iter().any(|a| abbreviates(a, "--fix")),
        "new" | "init" => {
            let dir = args
                .operands
                .first()
                .map_or_else(PathBuf::new, PathBuf::from);
            return Some(vec![base.join(dir)]);
        }
        _ => false,
    };
    rewrites.then(|| vec![package])
}

fn ruff(rest: &[String]) -> Option<Vec<PathBuf>> {
    let args = Args::parse(rest, &OptSpec::default());
    let formats = args.operands.first() == Some(&"format") && !args.has(&["--check", "--diff"]);
    if !(formats || args.has(&["--fix"])) {
        return None;
    }
    // The subcommand is the first operand; paths follow it.
    let paths: Vec<PathBuf> = args.operands.iter().skip(1).map(PathBuf::from).collect();
    Some(if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths
    })
}

/// Installing, adding, removing or updating dependencies rewrites the manifest, the lock file
/// and the dependency folder of the project (`--prefix` / `-C` / `--cwd` name another one).
fn package_manager(program: &str, rest: &[String]) -> Option<Vec<PathBuf>> {
    const CHANGING: &[&str] = &[
        "install",
        "i",
        "ci",
        "add",
        "remove",
        "rm",
        "uninstall",
        "un",
        "update",
        "up",
        "upgrade",
        "link",
        "init",
        "dedupe",
        "prune",
    ];
    let spec = OptSpec::short("C").long(&["prefix", "cwd", "dir"]);
    let args = Args::parse(rest, &spec);
    let changes = match args.operands.first() {
        Some(sub) => CHANGING.contains(sub),
        // A bare `yarn` installs.
        None => program == "yarn",
    };
    let dir = args
        .values(&["--prefix", "-C", "--cwd", "--dir"])
        .last()
        .unwrap_or(".");
    changes.then(|| vec![PathBuf::from(dir)])
}
