//! Reading shell command lines with a real parser (tree-sitter-bash): the simple commands a
//! line runs, with each word either known statically or marked unknown.
//!
//! Both the read-only classifier (`builtin::bash::policy`) and `Bash(...)` permission rules
//! stand on this. A check that judges words as written cannot see what the shell does to
//! them (`$'-i'` is `-i`, `-${HOME:0:0}exec` is `-exec`, `{-i,}` is `-i`, `r\m` is `rm`), so
//! every word here is either [`Word::Known`] — its exact runtime value — or [`Word::Unknown`],
//! and a caller that needs to know a word refuses an unknown one. What runs in `$(…)`,
//! backquotes, `<(…)`, `>(…)` and expanded here-documents is reported as nested lines
//! ([`Line::nested`]); what programs run other programs (`env`, `xargs`, `sh -c`, `eval` …)
//! is in [`wrappers`].
//!
//! A line the parser cannot read as bash would (a syntax error, or a construct where
//! tree-sitter-bash and bash disagree) is marked [`Line::unreadable`]; callers refuse it.
//!
//! Parsing is cheap enough to run on every Bash call: one parser per thread is reused, and
//! the tree is walked once into the owned model, which holds no parser types.

mod ansi_c;
mod model;
mod parse;
pub mod quote;
mod redirect;
mod scan;
mod simple;
mod word;
pub mod wrappers;

pub use model::{Assignment, Line, Redirect, RedirectOp, SimpleCommand, Unknown, Word};

/// Parses one command line as `bash -c` would read it.
pub fn parse(line: &str) -> Line {
    parse::parse(line)
}

/// The name a program word stands for when it can be known: the word itself, or the last
/// part of an absolute path in a system program folder (`/usr/bin/rm` is `rm`). Any other
/// path (`./rm`, `/tmp/rm`) may be anything, so it is `None`, as is an unknown word.
pub fn program_name(word: &Word) -> Option<&str> {
    let text = word.known()?;
    if !text.contains('/') {
        return (!text.is_empty()).then_some(text);
    }
    const SYSTEM: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
    ];
    SYSTEM
        .iter()
        .find_map(|dir| text.strip_prefix(dir))
        .filter(|name| !name.is_empty() && !name.contains('/'))
}

/// Variables that make a shell, a dynamic loader or a common tool run other code, or change
/// how the shell reads what follows.
pub fn is_risky_variable(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "HOME",
        "CDPATH",
        "GLOBIGNORE",
        "TMPDIR",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RIPGREP_CONFIG_PATH",
        "AWKPATH",
        "AWKLIBPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "JQ_LIBRARY_PATH",
        "POSIXLY_CORRECT",
        "BASH_XTRACEFD",
        "FUNCNEST",
        "HISTFILE",
    ];
    const PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_", "CARGO_", "RUSTUP_", "BASH_FUNC_"];
    const SUFFIXES: &[&str] = &["_COMMAND", "_EDITOR", "_PAGER", "_OPTIONS"];
    let base = name.split('[').next().unwrap_or(name);
    NAMES.contains(&base)
        || PREFIXES.iter().any(|p| base.starts_with(p))
        || SUFFIXES.iter().any(|s| base.ends_with(s))
}

#[cfg(test)]
mod tests;
