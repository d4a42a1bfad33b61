//! The paths one agent's sandbox protects and opens, from its settings and permission rules.
//!
//! A rule without wildcards names one path. A rule with wildcards (`Edit(**/*.pem)`,
//! `Read(.env)`, which matches at any depth) is matched against the files that exist under its
//! literal folder, in a bounded walk done once per agent: a file created later, or one beyond
//! the walk's bounds, is not covered by the sandbox (the permission check still covers the
//! Read, Edit and Write tools).

use crate::permissions::path_match::Anchors;
use crate::permissions::{
    Permissions, Rule, COMMAND_ENTRIES, PROTECTED_CONFIG_DIRS, PROTECTED_DIRS, PROTECTED_FILES,
    TOOLCHAIN_ENTRIES,
};
use crate::workspace::{self, Workspace};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Entries a wildcard rule's walk looks at before it stops.
const WALK_ENTRIES: usize = 50_000;
/// How deep a wildcard rule's walk goes below its folder.
const WALK_DEPTH: usize = 24;

pub use crate::permissions::CREDENTIAL_STORES;

/// The credential stores (see [`CREDENTIAL_STORES`]) under `home` that no `allowRead` entry of
/// `config` lifts: denied to Bash by the sandbox and to Read, Grep and Glob by the read guard
/// alike, so one setting frees a store for every tool.
pub fn credential_stores(
    config: &super::SandboxConfig,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let Some(home) = home.map(|h| workspace::resolve(h, Path::new("/"))) else {
        return Vec::new();
    };
    let lifted: Vec<PathBuf> = config
        .allow_read
        .iter()
        .flat_map(|r| rule_paths(r, cwd, Some(&home)))
        .collect();
    // fleet's own keys (the remote-job signing key) where `FLEET_HOME` moved them.
    let fleet_keys = std::env::var_os("FLEET_HOME")
        .filter(|v| !v.is_empty())
        .map(|dir| workspace::resolve(Path::new(&dir), cwd).join("keys"));
    CREDENTIAL_STORES
        .iter()
        .map(|store| home.join(store))
        .chain(fleet_keys)
        .filter(|store| !lifted.iter().any(|l| store.starts_with(l)))
        .collect()
}

/// The `allowRead` paths of `config`, resolved.
pub fn lifted_reads(
    config: &super::SandboxConfig,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let home = home.map(|h| workspace::resolve(h, Path::new("/")));
    config
        .allow_read
        .iter()
        .flat_map(|r| rule_paths(r, cwd, home.as_deref()))
        .collect()
}

/// How deep [`private_home`] looks into a dot-folder that holds a readable path.
const PRIVATE_DEPTH: usize = 4;

/// The home folder's dot-entries the read-only sandbox denies to commands: all of them but
/// the toolchain folders and git's configuration ([`TOOLCHAIN_ENTRIES`], [`COMMAND_ENTRIES`])
/// and what holds or lies in one of `open` (the workspace, the agent's folders, `allowRead`
/// paths; resolved). A dot-folder holding a readable path is denied entry by entry around it
/// (`~/.config` but `~/.config/git`). A dot-entry that is a symbolic link is denied where it
/// leads when that is inside the home folder; one leading elsewhere is left as it is.
pub fn private_home(home: &Path, open: &[PathBuf]) -> Vec<PathBuf> {
    let home = workspace::resolve(home, Path::new("/"));
    let readable: Vec<PathBuf> = TOOLCHAIN_ENTRIES
        .iter()
        .chain(COMMAND_ENTRIES)
        .map(|entry| home.join(entry))
        .chain(open.iter().cloned())
        .collect();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&home) else {
        return out;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with('.') {
            deny_around(&home, entry.path(), &readable, 0, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn deny_around(
    home: &Path,
    path: PathBuf,
    readable: &[PathBuf],
    depth: usize,
    out: &mut Vec<PathBuf>,
) {
    let Ok(meta) = path.symlink_metadata() else {
        return;
    };
    let path = if meta.file_type().is_symlink() {
        match std::fs::canonicalize(&path) {
            Ok(target) if target.starts_with(home) && target != home => target,
            _ => return,
        }
    } else {
        path
    };
    if readable.iter().any(|r| path.starts_with(r)) {
        return;
    }
    let holds = readable.iter().any(|r| r.starts_with(&path));
    if holds && depth < PRIVATE_DEPTH && path.is_dir() {
        if let Ok(entries) = std::fs::read_dir(&path) {
            for entry in entries.flatten() {
                deny_around(home, entry.path(), readable, depth + 1, out);
            }
        }
    } else if !holds {
        out.push(path);
    }
}

/// What [`agent_paths`] found for one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentPaths {
    /// The workspace folders and `allowWrite` paths; empty of the workspace when a bare
    /// `Edit` or `Write` deny rule takes every write away.
    pub writable: Vec<PathBuf>,
    pub deny_write: Vec<PathBuf>,
    pub deny_read: Vec<PathBuf>,
}

/// Everything needed to find one agent's paths.
pub struct Sources<'a> {
    pub config: &'a super::SandboxConfig,
    pub permissions: Option<&'a Arc<Permissions>>,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

/// The agent's writable folders and denied paths, all resolved.
pub fn agent_paths(src: &Sources<'_>) -> AgentPaths {
    let home = src.home.map(|h| workspace::resolve(h, Path::new("/")));
    let expand = |rule: &Rule| rule_paths(rule, src.cwd, home.as_deref());
    let mut paths = AgentPaths::default();
    let deny_rules: Vec<&Arc<Rule>> = src
        .permissions
        .map(|p| p.rules.deny.iter().collect())
        .unwrap_or_default();
    let no_writes = deny_rules
        .iter()
        .any(|r| matches!(r.tool(), "Edit" | "Write") && r.specifier().is_none());
    let workspace = src.permissions.map(|p| p.workspace.as_ref());
    if !no_writes {
        if let Some(workspace) = workspace {
            paths
                .writable
                .extend(workspace.dirs().map(Path::to_path_buf));
        }
    }
    paths
        .writable
        .extend(src.config.allow_write.iter().flat_map(|r| expand(r)));

    for rule in &deny_rules {
        let list = match rule.tool() {
            "Edit" | "Write" => &mut paths.deny_write,
            "Read" => &mut paths.deny_read,
            _ => continue,
        };
        list.extend(expand(rule));
    }
    paths
        .deny_write
        .extend(src.config.deny_write.iter().flat_map(|r| expand(r)));
    paths
        .deny_read
        .extend(src.config.deny_read.iter().flat_map(|r| expand(r)));
    paths
        .deny_write
        .extend(protected(workspace, src.cwd, home.as_deref()));
    paths
        .deny_read
        .extend(credential_stores(src.config, src.cwd, home.as_deref()));
    for list in [
        &mut paths.writable,
        &mut paths.deny_write,
        &mut paths.deny_read,
    ] {
        list.sort();
        list.dedup();
    }
    paths
}

/// The protected names in each workspace folder and the cwd, the home folder's startup files,
/// and the fleet home.
fn protected(workspace: Option<&Workspace>, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let cwd = workspace::resolve(cwd, Path::new("/"));
    // The permission check's protected names (see `permissions::protected_name`) as paths.
    let names = || {
        PROTECTED_DIRS
            .iter()
            .chain(PROTECTED_FILES)
            .chain(PROTECTED_CONFIG_DIRS)
    };
    // In the project root and the working directory — where fleet and other tools look for
    // settings, hooks and MCP servers — and in the home folder, where the shell start-up
    // files live, a missing one is denied too, so that it cannot be created. In an added
    // folder (or the coordinator scratchpad) only the ones that exist: denying a missing one
    // would leave that folder unable to take new entries, for no tool reads it from there.
    let everywhere: Vec<&Path> = workspace
        .map(|w| w.root.as_path())
        .into_iter()
        .chain([cwd.as_path()])
        .chain(home)
        .collect();
    let mut out: Vec<PathBuf> = everywhere
        .iter()
        .flat_map(|dir| names().map(move |name| dir.join(name)))
        .collect();
    let added = workspace.into_iter().flat_map(|w| w.additional.iter());
    out.extend(added.flat_map(|dir| {
        names()
            .map(move |name| dir.join(name))
            .filter(|path| path.symlink_metadata().is_ok())
    }));
    if let Some(fleet_home) = std::env::var_os("FLEET_HOME").filter(|v| !v.is_empty()) {
        out.push(workspace::resolve(Path::new(&fleet_home), &cwd));
    }
    out
}

/// The existing paths `rule` names (its folder when it has no wildcard, whether or not that
/// exists).
pub fn rule_paths(rule: &Rule, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(pattern) = rule.path_pattern() else {
        return Vec::new();
    };
    let anchors = Anchors {
        base: rule.base(),
        cwd,
        home,
    };
    let Some((folder, _)) = pattern.folder(anchors) else {
        return Vec::new();
    };
    if pattern.is_literal() {
        return vec![folder];
    }
    let mut found = Vec::new();
    let mut budget = WALK_ENTRIES;
    let mut stack = vec![(folder.clone(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                tracing::warn!(rule = %rule, "the sandbox stopped looking for paths matching \
                               the rule after {WALK_ENTRIES} entries");
                return found;
            }
            budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if pattern.matches_under(&folder, &path, kind.is_dir()) {
                found.push(path);
            } else if kind.is_dir() && depth < WALK_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::permissions::RuleKind;

    fn rule(text: &str, base: &Path) -> Rule {
        Rule::parse(RuleKind::Deny, text, base.to_path_buf(), "test").unwrap()
    }

    #[test]
    fn wildcard_rules_become_the_files_that_match() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in ["a/.env", "b/c/.env", "b/keep.txt", "k/x.pem", "k/y.pem.txt"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let mut env = rule_paths(&rule("Read(.env)", &root), &root, None);
        env.sort();
        assert_eq!(env, [root.join("a/.env"), root.join("b/c/.env")]);
        let pem = rule_paths(&rule("Edit(/k/*.pem)", &root), &root, None);
        assert_eq!(pem, [root.join("k/x.pem")]);
        let literal = rule_paths(&rule("Edit(./missing/x)", &root), &root, None);
        assert_eq!(literal, [root.join("missing/x")]);
        assert!(rule_paths(&rule("Bash(rm *)", &root), &root, None).is_empty());
    }
}
