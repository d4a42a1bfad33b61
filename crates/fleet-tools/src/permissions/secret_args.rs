//! Without the OS sandbox, the files a command line names, checked against what no tool may
//! read: `Read(...)` deny rules and the credential stores.
//!
//! Where Landlock confines Bash, a command the classifier accepts runs read-only with the
//! credential stores and `Read` deny rules out of reach, so `cat ~/.ssh/id_rsa` fails in the
//! kernel. Where it cannot (an old kernel, `FLEET_SANDBOX_UNAVAILABLE=1`), this is the only
//! check: every word of the line that may name a file — operands, `--opt=PATH` and `REV:PATH`
//! values, `< file` sources, `~/…` and `$HOME/…` spelled out, one level of a glob — is looked
//! up with the read guard ([`super::ReadGuard`], the same rules and stores the Read tool
//! obeys). A named file that is denied denies the call, naming the rule or the store; a word
//! naming a folder that holds a credential store (`grep -r x ~`) asks. Words only known when
//! the line runs (`"$f"`) cannot be looked up: that gap is in docs/security.md.

use super::check::Permissions;
use super::read_guard::{ReadDenial, ReadGuard};
use super::rule::{Rule, RuleKind};
use crate::workspace;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many entries of one globbed folder are looked at.
const GLOB_ENTRIES: usize = 2_000;

/// What the line meets.
pub(crate) enum SecretArg {
    /// A named file is denied: by this rule (a `Read` deny rule, or one standing for a
    /// credential store).
    Denied(Arc<Rule>),
    /// A named folder holds a credential store; the rule says which.
    Asks(Arc<Rule>),
}

/// Whether Bash runs unconfined here because no sandbox can be had.
pub(crate) fn sandbox_unavailable() -> bool {
    crate::sandbox::launcher(None).is_err()
}

/// Checks the words of `command`, run in `cwd`, against `permissions`' read guard.
pub(crate) fn check(permissions: &Permissions, command: &str, cwd: &Path) -> Option<SecretArg> {
    let guard = ReadGuard::for_agent(permissions, cwd);
    if guard.is_empty() {
        return None;
    }
    let home = permissions.home.as_deref();
    let stores: Vec<PathBuf> = guard.credential_stores().map(Path::to_path_buf).collect();
    let mut asks = None;
    for token in tokens(command) {
        for path in candidates(&token, cwd, home) {
            match guard.denial(&path) {
                Some(ReadDenial::Rule(rule)) => return Some(SecretArg::Denied(rule)),
                Some(ReadDenial::CredentialStore(store)) => {
                    if let Some(rule) = store_rule(&store, RuleKind::Deny) {
                        return Some(SecretArg::Denied(rule));
                    }
                }
                None => {}
            }
            if asks.is_none() {
                let resolved = workspace::resolve(&path, cwd);
                asks = stores
                    .iter()
                    .find(|store| store.starts_with(&resolved) || store.starts_with(&path))
                    .and_then(|store| store_rule(store, RuleKind::Ask));
            }
        }
    }
    asks.map(SecretArg::Asks)
}

/// A rule standing for the credential store `store`, so the decision names it.
fn store_rule(store: &Path, kind: RuleKind) -> Option<Arc<Rule>> {
    let text = format!(
        "Read(/{}/**)",
        super::path_match::escape(&store.to_string_lossy())
    );
    let source = "fleet's credential-store protection (the sandbox is unavailable, so Bash \
                  arguments are checked instead)";
    Rule::parse(kind, &text, PathBuf::from("/"), source)
        .or_else(|_| Rule::parse(kind, "Read", PathBuf::from("/"), source))
        .ok()
        .map(Arc::new)
}

/// The line split into words that may name files: on blanks, quotes, and shell operators,
/// then on `=` and `:` (option values, `REV:PATH`).
fn tokens(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in command.split(|c: char| {
        c.is_whitespace() || matches!(c, '\'' | '"' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`')
    }) {
        if raw.is_empty() {
            continue;
        }
        out.push(raw.to_string());
        for piece in raw.split(['=', ':']).skip(1) {
            if !piece.is_empty() {
                out.push(piece.to_string());
            }
        }
    }
    out
}

/// The paths a token may stand for: `~` and `$HOME` spelled out, relative ones from `cwd`, a
/// glob in its last part matched against its folder. A token with any other expansion gives
/// none.
fn candidates(token: &str, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let token = token.trim_start_matches('\\');
    let expanded = match home {
        Some(home) => {
            let home = home.to_string_lossy();
            let mut text = token.to_string();
            if text == "~" || text.starts_with("~/") {
                text = format!("{home}{}", &text[1..]);
            }
            text.replace("${HOME}", &home).replace("$HOME", &home)
        }
        None => token.to_string(),
    };
    if expanded.contains(['$', '`', '~', '{']) {
        return Vec::new();
    }
    let path = workspace::absolute(Path::new(&expanded), cwd);
    if !expanded.contains(['*', '?', '[']) {
        return vec![path];
    }
    let (Some(folder), Some(pattern)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    if folder.to_string_lossy().contains(['*', '?', '[']) {
        // A glob in a folder part: the folder before it is what is named.
        let literal: PathBuf = path
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
            .collect();
        return vec![literal];
    }
    let Ok(glob) = globset::Glob::new(&pattern.to_string_lossy()) else {
        return vec![folder.to_path_buf()];
    };
    let matcher = glob.compile_matcher();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .take(GLOB_ENTRIES)
        .filter_map(Result::ok)
        .filter(|entry| matcher.is_match(entry.file_name()))
        .map(|entry| entry.path())
        .collect()
}
