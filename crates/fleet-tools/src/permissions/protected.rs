//! Paths whose contents decide what runs later: settings that grant permissions
//! (`.claude/settings.json` with `bypassPermissions`), git's hooks and config (`core.fsmonitor`
//! runs a program on the next `git status`), editor tasks, MCP server lists and shell start-up
//! files. A write there is a way to escalate, not an edit, so it always asks — in every mode,
//! `bypassPermissions` included, and refused when there is no person to ask — unless an allow
//! rule names the path itself. The sandbox denies Bash writes to the same paths.

use super::call::Call;
use super::path_match::Candidate;
use super::rule::{Rule, RuleSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Folders that, at any depth, hold configuration that runs code or grants permissions.
pub const PROTECTED_DIRS: &[&str] = &[".claude", ".fleet", ".git", ".vscode", ".idea"];

/// Files that, at any depth, run code or grant permissions when a tool later reads them: the
/// MCP server list, git's user config, direnv, and the shells' start-up files.
pub const PROTECTED_FILES: &[&str] = &[
    ".mcp.json",
    ".gitconfig",
    // The system-wide git configuration (`/etc/gitconfig`, `git config --system`).
    "gitconfig",
    ".envrc",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".inputrc",
    "config.fish",
];

/// Configuration folders under `~/.config` that run code: git's (`core.fsmonitor`,
/// aliases, hooks paths) and fish's start-up files.
pub const PROTECTED_CONFIG_DIRS: &[&str] = &[".config/git", ".config/fish"];

/// Why `path` is protected, as the protected name it holds (`.git`, `.bashrc`,
/// `.config/git`), or `None`. Every folder of the path counts, so `src/.git/hooks/x` and
/// `.claude/agents/a.md` are protected; for files only the last name counts.
pub fn protected_name(path: &Path) -> Option<&'static str> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    let last = path.file_name().and_then(|n| n.to_str());
    let dir = names
        .iter()
        .find_map(|name| PROTECTED_DIRS.iter().find(|p| *p == name).copied());
    let config = || {
        names.windows(2).find_map(|pair| {
            PROTECTED_CONFIG_DIRS
                .iter()
                .find(|p| **p == format!("{}/{}", pair[0], pair[1]))
                .copied()
        })
    };
    dir.or_else(|| last.and_then(|name| PROTECTED_FILES.iter().find(|p| **p == name).copied()))
        .or_else(config)
}

/// Whether an allow rule's specifier names the protected entry itself, rather than covering it
/// by a wildcard: `Edit(.claude/settings.json)` and `Edit(/.git/hooks/**)` do, `Edit(**)`,
/// `Edit(/**)` and `Edit(src/**)` do not.
pub(crate) fn specifier_names(specifier: &str, name: &str) -> bool {
    specifier
        .split('/')
        .any(|part| part == name || part.strip_prefix('\\') == Some(name))
}

/// The first protected place `call` would write — its file (Write, Edit), a redirect target
/// of its command line, or a path a program on that line visibly changes — that no allow
/// rule names, with the name that protects it. Both the
/// spelled and the resolved path count, so neither a symlink to `.git` nor one inside it hides
/// the target.
pub(crate) fn unnamed_protected_write(call: &Call<'_>, rules: &RuleSet) -> Option<PathBuf> {
    let targets = call
        .write
        .iter()
        .chain(call.redirects.iter())
        .chain(call.protected_change.iter());
    targets.into_iter().find_map(|target| {
        let name = protected_name(&target.spelled).or_else(|| protected_name(&target.resolved))?;
        let named = rules
            .allow
            .iter()
            .any(|rule| names_target(rule, target, call, name));
        (!named).then(|| target.resolved.clone())
    })
}

fn names_target(rule: &Arc<Rule>, target: &Candidate, call: &Call<'_>, name: &str) -> bool {
    rule.specifier()
        .is_some_and(|spec| specifier_names(spec, name))
        && rule.allows_write_to(target, call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_folders_count_at_any_depth_and_files_by_their_name() {
        let cases = [
            ("/p/.claude/settings.json", Some(".claude")),
            ("/p/.git/hooks/pre-commit", Some(".git")),
            ("/p/vendor/lib/.git/config", Some(".git")),
            ("/p/.vscode/tasks.json", Some(".vscode")),
            ("/p/.mcp.json", Some(".mcp.json")),
            ("/home/u/.bashrc", Some(".bashrc")),
            ("/home/u/.config/fish/config.fish", Some("config.fish")),
            ("/p/src/main.rs", None),
            ("/p/.github/workflows/ci.yml", None),
            ("/p/.gitignore", None),
            ("/p/docs/.bashrc.md", None),
            ("relative/.fleet/agents/a.md", Some(".fleet")),
            ("/home/u/.config/git/config", Some(".config/git")),
            ("/home/u/.config/gitx/config", None),
        ];
        for (path, want) in cases {
            assert_eq!(protected_name(Path::new(path)), want, "{path}");
        }
    }

    #[test]
    fn only_a_specifier_that_spells_the_name_names_it() {
        assert!(specifier_names(".claude/settings.json", ".claude"));
        assert!(specifier_names("/.git/hooks/**", ".git"));
        assert!(specifier_names("~/.bashrc", ".bashrc"));
        assert!(!specifier_names("**", ".git"));
        assert!(!specifier_names("/**", ".claude"));
        assert!(!specifier_names("src/**", ".git"));
        assert!(!specifier_names(".git*/**", ".git"));
    }
}
