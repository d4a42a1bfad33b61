//! The home folder's private files: its dot-files and dot-folders (`~/.npmrc`, `~/.config`,
//! `~/.kube`, …), where programs keep tokens, passwords and keys in places no fixed list of
//! credential stores can keep up with.
//!
//! Outside the workspace, reading one goes through a person:
//! - the Read, Grep and Glob tools ask ([`unnamed_private_read`], decided in the permission
//!   check as a protected write is), unless an allow rule names the entry (`Read(~/.npmrc)`,
//!   `Read(~/.config/**)`); Grep and Glob walking the home folder leave these entries out
//!   (see [`super::ReadGuard`]);
//! - the read-only sandbox denies them to commands outright (see `sandbox::paths`).
//!
//! Toolchain folders stay readable everywhere ([`TOOLCHAIN_ENTRIES`]): compilers, package
//! managers and their libraries live there, and commands cannot run without them. Their
//! credential files (`~/.cargo/credentials.toml`) are credential stores, denied anyway.

use super::call::Call;
use super::protected::specifier_names;
use super::rule::RuleSet;
use crate::workspace;
use std::path::{Component, Path, PathBuf};

/// Dot-entries of the home folder (or parts of them) that hold toolchains and the libraries
/// they load: readable by every tool and by the read-only sandbox.
pub const TOOLCHAIN_ENTRIES: &[&str] = &[
    ".cargo",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".nvm",
    ".pyenv",
    ".rbenv",
    ".volta",
    ".bun",
    ".deno",
    ".sdkman",
    ".asdf",
    ".ghcup",
    ".elan",
];

/// Folders of the fleet home (`$FLEET_HOME`, by default `~/.fleet`) the Read tool reads
/// without asking: the session data fleet itself points agents to (transcripts and task output
/// files under `projects/`, task lists under `tasks/`). Its settings, approvals and keys are
/// asked about (the keys are a credential store). `skills/` holds the user's skills.
pub const FLEET_SESSION_DATA: &[&str] = &["projects", "tasks", "skills"];

/// Dot-entries of the home folder holding what the user installed for agents to read (user
/// skills and their supporting files, agent memory): the Read tool reads them unasked.
pub const AGENT_CONTENT: &[&str] = &[".claude/skills", ".claude/agent-memory"];

/// The folders of [`FLEET_SESSION_DATA`] for the fleet home of this process.
pub fn fleet_session_data(home: &Path) -> Vec<PathBuf> {
    let fleet_home = std::env::var_os("FLEET_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".fleet"));
    let fleet_home = workspace::resolve(&fleet_home, Path::new("/"));
    FLEET_SESSION_DATA
        .iter()
        .map(|dir| fleet_home.join(dir))
        .collect()
}

/// Dot-entries commands need to work but the Read tool still asks about: git's own
/// configuration (git refuses to run when it cannot read it).
pub const COMMAND_ENTRIES: &[&str] = &[".gitconfig", ".config/git"];

/// The dot-entry of `home` that `path` lies in or is (`home/.npmrc`, `home/.config`), unless
/// it lies in one of `except` (paths relative to the home folder). `home` and `path` must be
/// spelled alike (both resolved, or both as written).
pub fn private_entry(path: &Path, home: &Path, except: &[&str]) -> Option<PathBuf> {
    let rest = path.strip_prefix(home).ok()?;
    let Some(Component::Normal(first)) = rest.components().next() else {
        return None;
    };
    let name = first.to_str()?;
    if !name.starts_with('.') || except.iter().any(|e| rest.starts_with(e)) {
        return None;
    }
    Some(home.join(first))
}

/// The private home entry a read of `call` lands in, when the read needs a person's approval:
/// it lies (as spelled or where it resolves) in a dot-entry of the home folder other than a
/// toolchain folder, outside the workspace, and no allow rule names that entry.
pub(crate) fn unnamed_private_read(call: &Call<'_>, rules: &RuleSet) -> Option<PathBuf> {
    let read = call.read.as_ref()?;
    let home = call.home?;
    if call.workspace.contains(&read.resolved)
        || fleet_session_data(home)
            .iter()
            .any(|dir| read.resolved.starts_with(dir))
    {
        return None;
    }
    let resolved_home = workspace::resolve(home, Path::new("/"));
    let forms = [
        (&read.resolved, resolved_home.as_path()),
        (&read.spelled, home),
        (&read.spelled, resolved_home.as_path()),
    ];
    let open: Vec<&str> = TOOLCHAIN_ENTRIES
        .iter()
        .chain(AGENT_CONTENT)
        .copied()
        .collect();
    let entry = forms
        .iter()
        .find_map(|(path, home)| private_entry(path, home, &open))?;
    let name = entry.file_name()?.to_str()?;
    let named = rules.allow.iter().any(|rule| {
        rule.names_paths()
            && rule
                .specifier()
                .is_some_and(|spec| specifier_names(spec, name))
            && rule.allows(call)
    });
    (!named).then(|| read.resolved.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_entry_is_the_first_dot_name_below_home() {
        let home = Path::new("/h");
        let entry = |p: &str| private_entry(Path::new(p), home, TOOLCHAIN_ENTRIES);
        assert_eq!(entry("/h/.npmrc"), Some(PathBuf::from("/h/.npmrc")));
        assert_eq!(
            entry("/h/.config/gh/hosts.yml"),
            Some(PathBuf::from("/h/.config"))
        );
        assert_eq!(entry("/h/.local/share/x"), Some(PathBuf::from("/h/.local")));
        assert_eq!(entry("/h/.local/bin/tool"), None);
        assert_eq!(entry("/h/.cargo/registry/src/x.rs"), None);
        assert_eq!(
            entry("/h/src/.env"),
            None,
            "only entries of the home folder"
        );
        assert_eq!(entry("/h"), None);
        assert_eq!(entry("/elsewhere/.npmrc"), None);
    }
}
