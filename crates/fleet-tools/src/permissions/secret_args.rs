//! Without the OS sandbox, the files a command line names, checked against what no tool may
//! read: `Read(...)` deny rules and the credential stores.
//!
//! Where Landlock confines Bash, a command the classifier accepts runs read-only with the
//! credential stores and `Read` deny rules out of reach, so `cat ~/.ssh/id_rsa` fails in the
//! kernel. Where it cannot (an old kernel, `FLEET_SANDBOX_UNAVAILABLE=1`), this is the only
//! check: every word of the line that may name a file — operands, `--opt=PATH` and `REV:PATH`
//! values, `< file` sources, words inside `sh -c` strings and loop lists, `~/…`, `~user/…`
//! and `$HOME/…` spelled out, globs matched against what exists — is looked up with the read guard ([`super::ReadGuard`], the same rules and stores the Read tool
//! obeys). A named file that is denied denies the call, naming the rule or the store; a word
//! naming a folder that holds a credential store (`grep -r x ~`) or a private entry of the
//! home folder (`~/.npmrc`, as the Read tool asks), or a word only known when
//! the line runs that spells a store's name (`$h/.ssh/id_rsa`), asks. Other words only known
//! when the line runs (`"$f"`) cannot be looked up: that gap is in docs/security.md.

use super::check::Permissions;
use super::private_home;
use super::read_guard::{ReadDenial, ReadGuard};
use super::rule::{Rule, RuleKind};
use crate::shell::Word;
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
    crate::sandbox::availability::launcher(None).is_err()
}

/// Checks the words of `command`, run in `cwd`, against `permissions`' read guard.
pub(crate) fn check(permissions: &Permissions, command: &str, cwd: &Path) -> Option<SecretArg> {
    let guard = ReadGuard::for_agent(permissions, cwd);
    if guard.is_empty() {
        return None;
    }
    let home = permissions.home.as_deref();
    let stores: Vec<PathBuf> = guard.credential_stores().map(Path::to_path_buf).collect();
    // Where each store lies below the home folder (`.ssh`), to spot it in a word whose start
    // is only known when the line runs (`$h/.ssh/id_rsa`).
    let relative: Vec<(String, &PathBuf)> = match home {
        Some(home) => stores
            .iter()
            .filter_map(|s| Some((s.strip_prefix(home).ok()?.to_string_lossy().into_owned(), s)))
            .collect(),
        None => Vec::new(),
    };
    let mut asks = None;
    for token in tokens(command) {
        let Some(paths) = candidates(&token, cwd, home) else {
            if asks.is_none() {
                asks = relative
                    .iter()
                    .find(|(rel, _)| token.contains(&format!("/{rel}")))
                    .and_then(|(_, store)| store_rule(store, RuleKind::Ask));
            }
            continue;
        };
        for path in paths {
            match guard.denial(&path) {
                Some(ReadDenial::Rule(rule)) => return Some(SecretArg::Denied(rule)),
                Some(ReadDenial::CredentialStore(store)) => {
                    if let Some(rule) = store_rule(&store, RuleKind::Deny) {
                        return Some(SecretArg::Denied(rule));
                    }
                }
                _ => {}
            }
            if asks.is_none() {
                let resolved = workspace::resolve(&path, cwd);
                asks = stores
                    .iter()
                    .find(|store| store.starts_with(&resolved) || store.starts_with(&path))
                    .and_then(|store| store_rule(store, RuleKind::Ask))
                    .or_else(|| {
                        private(permissions, home?, &path, &resolved)
                            .and_then(|entry| store_rule(&entry, RuleKind::Ask))
                    });
            }
        }
    }
    asks.map(SecretArg::Asks)
}

/// The home folder's private entry (`~/.npmrc`, `~/.kube`; see [`private_home`]) that `path`
/// lies in, outside the workspace and the toolchain folders, as the Read tool would ask
/// about it.
fn private(
    permissions: &Permissions,
    home: &Path,
    path: &Path,
    resolved: &Path,
) -> Option<PathBuf> {
    if permissions.workspace.contains(resolved) {
        return None;
    }
    let open: Vec<&str> = private_home::TOOLCHAIN_ENTRIES
        .iter()
        .chain(private_home::AGENT_CONTENT)
        .copied()
        .collect();
    let resolved_home = workspace::resolve(home, Path::new("/"));
    private_home::private_entry(path, home, &open)
        .or_else(|| private_home::private_entry(resolved, &resolved_home, &open))
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

/// The words of the line that may name files: the shell parser's words and redirect targets
/// (a word with expansions as written, its quotes dropped), and the raw text split on blanks,
/// quotes and shell operators (which reaches into `sh -c '…'` strings and loop lists); each
/// also split on `=` and `:` (option values, `REV:PATH`).
fn tokens(command: &str) -> Vec<String> {
    let unquoted = |word: &Word| match word {
        Word::Known(text) => text.clone(),
        Word::Unknown(unknown) => unknown.source.replace(['\'', '"'], ""),
    };
    let mut words: Vec<String> = Vec::new();
    let parsed = crate::shell::parse(command);
    for line in parsed.lines() {
        for simple in &line.commands {
            let targets = simple.redirects.iter().map(|r| &r.target);
            words.extend(simple.words.iter().chain(targets).map(unquoted));
        }
        words.extend(line.redirects.iter().map(|r| unquoted(&r.target)));
    }
    let raw = command.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\'' | '"' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`'
            )
    });
    let mut out = Vec::new();
    for word in words.iter().map(String::as_str).chain(raw) {
        if word.is_empty() {
            continue;
        }
        out.push(word.to_string());
        for piece in word.split(['=', ':']).skip(1) {
            if !piece.is_empty() {
                out.push(piece.to_string());
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The paths a token may stand for: `~`, `~user` and `$HOME` spelled out, relative ones from
/// `cwd`, a glob matched against the folders that exist. `None` for a token with any other
/// expansion, which cannot be looked up.
fn candidates(token: &str, cwd: &Path, home: Option<&Path>) -> Option<Vec<PathBuf>> {
    let mut text = token.trim_start_matches('\\').to_string();
    if let Some(home) = home {
        let home = home.to_string_lossy();
        if text == "~" || text.starts_with("~/") {
            text = format!("{home}{}", &text[1..]);
        }
        text = text.replace("${HOME}", &home).replace("$HOME", &home);
    }
    if let Some(rest) = text.strip_prefix('~') {
        let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
        text = format!("{}/{tail}", user_home(user)?.display());
    }
    if text.contains(['$', '`', '~', '{']) {
        return None;
    }
    let path = workspace::absolute(Path::new(&text), cwd);
    if !text.contains(['*', '?', '[']) {
        return Some(vec![path]);
    }
    Some(expand_globs(&path))
}

/// The home folder of `user` (`~user`), from the password file.
fn user_home(user: &str) -> Option<PathBuf> {
    let plain = !user.is_empty()
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !plain {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match (fields.first(), fields.get(5)) {
            (Some(name), Some(home)) if *name == user => Some(PathBuf::from(home)),
            _ => None,
        }
    })
}

/// The existing paths a globbed path matches, each globbed part matched against the entries of
/// the folders before it (bounded by [`GLOB_ENTRIES`] in all).
fn expand_globs(path: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for part in path.components().skip(1) {
        let text = part.as_os_str().to_string_lossy();
        if !text.contains(['*', '?', '[']) {
            found.iter_mut().for_each(|p| p.push(part));
            continue;
        }
        let Ok(glob) = globset::Glob::new(&text) else {
            return found;
        };
        let matcher = glob.compile_matcher();
        let mut next = Vec::new();
        for folder in &found {
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            next.extend(
                entries
                    .take(GLOB_ENTRIES)
                    .filter_map(Result::ok)
                    .filter(|entry| matcher.is_match(entry.file_name()))
                    .map(|entry| entry.path()),
            );
            if next.len() >= GLOB_ENTRIES {
                break;
            }
        }
        found = next;
    }
    found
}
