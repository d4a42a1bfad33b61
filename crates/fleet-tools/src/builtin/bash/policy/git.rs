//! Which git invocations only look. Both policies use this: a read-only agent may run only
//! these, and an agent that may write only under some folders may run anything else only in
//! a repository that lies there.

use super::args::{abbreviates, Args, OptSpec};
use std::path::PathBuf;

/// Why a git command line may change something or run a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GitProblem {
    #[error("git `-c` / `--config-env` / `--exec-path` can make git run other programs")]
    ConfigOption,
    #[error("the git subcommand is only known when it runs")]
    UnknownSubcommand,
    /// An option of the subcommand that writes or runs something; the text names it.
    #[error("{0}")]
    Option(String),
    #[error(
        "`git ls-remote {remote}` may run a program (a transport helper or an upload-pack \
         command)"
    )]
    LsRemote { remote: String },
    #[error("`git remote {sub}` changes the remotes")]
    ChangesRemotes { sub: String },
    /// `stash`, `worktree`, `reflog`, `notes`, `submodule` with a changing subcommand.
    #[error("`git {sub}` here changes the repository")]
    ChangesHere { sub: String },
    #[error("`git {sub}` may change the repository")]
    MayChange { sub: String },
    /// `git branch -d x`, `git tag -d x`.
    #[error("`git {what} {arg}` changes {plural}")]
    ListingChanges {
        what: &'static str,
        arg: String,
        plural: &'static str,
    },
    #[error("`git {what} {names}` creates a {what} (list with `git {what} --list PATTERN`)")]
    Creates { what: &'static str, names: String },
    #[error("`git config` with a value changes the configuration (read with --get or --list)")]
    ConfigWrites,
}
/// Options git takes before its subcommand, with a value.
const GLOBAL: OptSpec = OptSpec::short("Cc")
    .long(&[
        "git-dir",
        "work-tree",
        "namespace",
        "config-env",
        "super-prefix",
    ])
    .stop_at_operand();

/// Subcommands that read the repository and never change it (beyond git's own index
/// refresh), whatever their options, except those [`refused_option`] names.
const LOOKING: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "blame",
    "annotate",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "rev-parse",
    "rev-list",
    "describe",
    "grep",
    "shortlog",
    "cat-file",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "show-ref",
    "show-branch",
    "count-objects",
    "check-ignore",
    "check-attr",
    "diff-tree",
    "diff-files",
    "diff-index",
    "whatchanged",
    "cherry",
    "range-diff",
    "verify-commit",
    "verify-tag",
    "var",
    "version",
];

/// A git command line: where it works and what it runs.
#[derive(Debug)]
pub(super) struct GitCall<'a> {
    /// Folders given with `-C` (each relative to the one before), `--git-dir` and
    /// `--work-tree`, as written.
    pub places: Vec<PathBuf>,
    /// The repository folder the command works in, relative to the shell's cwd.
    pub location: PathBuf,
    pub global: Args<'a>,
    /// The subcommand and its arguments; empty for `git --version` and the like.
    pub sub: &'a [String],
}

impl<'a> GitCall<'a> {
    /// Reads `args`, the words after `git`.
    pub fn parse(args: &'a [String]) -> Self {
        let global = Args::parse(args, &GLOBAL);
        let location = global
            .values(&["-C"])
            .fold(PathBuf::new(), |at, dir| at.join(dir));
        let mut places = vec![location.clone()];
        places.extend(
            global
                .values(&["--git-dir", "--work-tree"])
                .map(|p| location.join(p)),
        );
        let sub = &args[global.rest..];
        Self {
            places,
            location,
            global,
            sub,
        }
    }

    /// `Ok` when the command only looks; otherwise why it may change something.
    pub fn read_only(&self) -> Result<(), GitProblem> {
        if self.global.has(&["-c", "--config-env", "--exec-path"]) {
            return Err(GitProblem::ConfigOption);
        }
        let Some((sub, rest)) = self.sub.split_first() else {
            return Ok(());
        };
        let sub = sub.as_str();
        if super::operands::is_placeholder(sub) {
            return Err(GitProblem::UnknownSubcommand);
        }
        if let Some(option) = rest.iter().find_map(|a| refused_option(sub, a)) {
            return Err(GitProblem::Option(option));
        }
        if sub == "ls-remote" {
            if let Some(remote) = rest
                .iter()
                .find(|a| a.contains("::") || a.starts_with("-u"))
            {
                return Err(GitProblem::LsRemote {
                    remote: remote.clone(),
                });
            }
        }
        if LOOKING.contains(&sub) {
            return Ok(());
        }
        match sub {
            "branch" => listing(rest, "dDmMcCfut", BRANCH_CHANGES, ("branch", "branches")),
            "tag" => listing(rest, "dasufmFe", TAG_CHANGES, ("tag", "tags")),
            "remote" => {
                // `-v` may come before a subcommand (`git remote -v add …`).
                let mut words = rest.iter().skip_while(|w| *w == "-v" || *w == "--verbose");
                match words.next().map(String::as_str) {
                    None | Some("show" | "get-url") => Ok(()),
                    Some(other) => Err(GitProblem::ChangesRemotes {
                        sub: other.to_string(),
                    }),
                }
            }
            "config" => config(rest),
            "stash" | "worktree" | "reflog" | "notes" | "submodule" => {
                let first = rest.first().map(String::as_str);
                let looks = match sub {
                    // Without a subcommand, reflog shows and notes lists; stash would push.
                    "reflog" => !matches!(first, Some("expire" | "delete" | "drop" | "write")),
                    "notes" => matches!(first, None | Some("list" | "show")),
                    "stash" => matches!(first, Some("list" | "show")),
                    "worktree" => first == Some("list"),
                    _ => matches!(first, None | Some("status" | "summary")),
                };
                looks.then_some(()).ok_or_else(|| GitProblem::ChangesHere {
                    sub: sub.to_string(),
                })
            }
            other => Err(GitProblem::MayChange {
                sub: other.to_string(),
            }),
        }
    }

    /// Whether an option makes git run a program or write a file beside what its
    /// subcommand does (`-c`, `--upload-pack`, `--output`, `ext::` …).
    pub fn hidden_action(&self) -> bool {
        if self.global.has(&["-c", "--config-env", "--exec-path"]) {
            return true;
        }
        if !super::git_config::written(self).is_empty() {
            return true;
        }
        let Some((sub, rest)) = self.sub.split_first() else {
            return false;
        };
        rest.iter().any(|a| refused_option(sub, a).is_some())
            || (sub == "ls-remote" && rest.iter().any(|a| a.contains("::") || a.starts_with("-u")))
    }

    /// The folder `git clone` or `git init` creates, relative to the cwd, when that is the
    /// subcommand.
    pub fn creates(&self) -> Option<PathBuf> {
        let (sub, rest) = self.sub.split_first()?;
        match sub.as_str() {
            "clone" => {
                let spec = OptSpec::short("obcju").long(&[
                    "origin",
                    "branch",
                    "config",
                    "depth",
                    "jobs",
                    "upload-pack",
                    "template",
                    "reference",
                    "reference-if-able",
                    "separate-git-dir",
                    "shallow-since",
                    "shallow-exclude",
                    "filter",
                    "server-option",
                    "bundle-uri",
                ]);
                let args = Args::parse(rest, &spec);
                let dir = match args.operands.as_slice() {
                    [_, dir, ..] => PathBuf::from(dir),
                    [url] => PathBuf::from(clone_name(url)),
                    [] => PathBuf::new(),
                };
                Some(self.location.join(dir))
            }
            "init" => {
                let spec = OptSpec::short("b").long(&[
                    "template",
                    "separate-git-dir",
                    "object-format",
                    "ref-format",
                    "initial-branch",
                    "shared",
                ]);
                let args = Args::parse(rest, &spec);
                let dir = args.operands.first().map(PathBuf::from).unwrap_or_default();
                Some(self.location.join(dir))
            }
            _ => None,
        }
    }
}

/// The folder `git clone URL` creates: the URL's last part without `.git`.
fn clone_name(url: &str) -> String {
    let last = url
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or(url);
    last.strip_suffix(".git").unwrap_or(last).to_string()
}

/// Options that make a looking subcommand write a file or run a program.
fn refused_option(sub: &str, arg: &str) -> Option<String> {
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    if abbreviates(name, "--output") {
        return Some(format!("`git {sub} --output` writes a file"));
    }
    if abbreviates(name, "--ext-diff") {
        return Some(format!(
            "`git {sub} --ext-diff` runs an external diff program"
        ));
    }
    if sub == "grep" && (abbreviates(name, "--open-files-in-pager") || arg.starts_with("-O")) {
        return Some("`git grep -O` runs a pager program".into());
    }
    // `--text` and `--textconv` differ, so those two count only in full.
    for runs in [
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--textconv",
        "--filters",
    ] {
        let given = if matches!(runs, "--textconv" | "--filters") {
            name == runs
        } else {
            abbreviates(name, runs) && name.len() > 4
        };
        if given {
            return Some(format!(
                "`git {sub} {runs}` runs a program (given, or configured for the repository)"
            ));
        }
    }
    None
}

const BRANCH_CHANGES: &[&str] = &[
    "--delete",
    "--move",
    "--copy",
    "--force",
    "--set-upstream-to",
    "--unset-upstream",
    "--edit-description",
    "--track",
    "--no-track",
    "--create-reflog",
    "--recurse-submodules",
];

const TAG_CHANGES: &[&str] = &[
    "--delete",
    "--annotate",
    "--sign",
    "--local-user",
    "--force",
    "--message",
    "--file",
    "--edit",
    "--cleanup",
    "--create-reflog",
    "--trailer",
];

/// `git branch` / `git tag` that only list: no changing option, and names only as patterns
/// after `--list`.
fn listing(
    rest: &[String],
    short_changes: &str,
    long_changes: &[&str],
    (what, plural): (&'static str, &'static str),
) -> Result<(), GitProblem> {
    for arg in rest {
        let changes = match arg.strip_prefix("--") {
            Some(long) => {
                let name = format!("--{}", long.split_once('=').map_or(long, |(name, _)| name));
                long_changes.iter().any(|option| abbreviates(&name, option))
            }
            None => arg
                .strip_prefix('-')
                .is_some_and(|cluster| cluster.chars().any(|c| short_changes.contains(c))),
        };
        if changes {
            return Err(GitProblem::ListingChanges {
                what,
                arg: arg.clone(),
                plural,
            });
        }
    }
    let spec = OptSpec::default().long(&[
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
        "sort",
        "format",
    ]);
    let args = Args::parse(rest, &spec);
    if args.operands.is_empty() || args.has(&["-l", "--list"]) {
        Ok(())
    } else {
        Err(GitProblem::Creates {
            what,
            names: args.operands.join(" "),
        })
    }
}

/// `git config` that reads: `--get*` / `--list` / `get` / `list`, or a single key.
fn config(rest: &[String]) -> Result<(), GitProblem> {
    if config_reads(rest) {
        Ok(())
    } else {
        Err(GitProblem::ConfigWrites)
    }
}

/// Whether `git config REST` only reads.
pub(super) fn config_reads(rest: &[String]) -> bool {
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    ];
    let spec = OptSpec::short("f").long(&["file", "blob", "type", "default"]);
    let args = Args::parse(rest, &spec);
    if args.has(WRITES) {
        return false;
    }
    args.has(READS)
        || matches!(args.operands.first(), Some(&("get" | "list")))
        || (args.operands.len() == 1 && !matches!(args.operands[0], "set" | "unset" | "edit"))
}
