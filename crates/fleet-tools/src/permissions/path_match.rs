//! Path specifiers of `Read(...)`, `Edit(...)` and friends, gitignore-style.
//!
//! A specifier is split in three: where it is anchored (`//` the filesystem root, `~/` the home
//! folder, `/` the rule's base, `./` or nothing the cwd), the leading folders that hold no
//! wildcard, and the rest, a gitignore line. The literal folders are joined to the anchor and
//! resolved at check time, so a rule that names a symlink covers what the link points to and a
//! rule written against `/tmp` still matches on systems where `/tmp` is itself a link. The rest
//! is matched with [`ignore::gitignore`] against the path relative to that folder, parents
//! included, so a rule for a folder covers everything under it.

use super::rule_error::RuleProblem;
use crate::workspace;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::{Path, PathBuf};

/// Where a path specifier is rooted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `//path`: the filesystem root.
    Root,
    /// `~/path`: the user's home folder.
    Home,
    /// `/path`: the folder the rule's settings file belongs to.
    Base,
    /// `./path` or `path`: the calling agent's working directory.
    Cwd,
}

#[derive(Debug, Clone)]
pub(crate) struct PathPattern {
    anchor: Anchor,
    /// Leading components without wildcards, relative to the anchor.
    prefix: PathBuf,
    /// The remaining gitignore line, compiled; None when the specifier is all literal and so
    /// names one file or folder (and everything under it).
    glob: Option<Gitignore>,
}

/// The folders anchors stand for in one call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchors<'a> {
    pub base: &'a Path,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

/// A path to test, in the forms the check knows it by.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// `..` and symlinks resolved: where the access really lands.
    pub resolved: PathBuf,
    /// Made absolute with `..` removed textually, symlinks kept: how it was spelled.
    pub spelled: PathBuf,
    pub is_dir: bool,
}

impl Candidate {
    pub fn new(path: &Path, cwd: &Path) -> Self {
        let resolved = workspace::resolve(path, cwd);
        let is_dir = resolved.is_dir();
        Self {
            spelled: workspace::absolute(path, cwd),
            resolved,
            is_dir,
        }
    }
}

const WILDCARDS: &[char] = &['*', '?', '[', '{', '\\'];

impl PathPattern {
    pub fn parse(spec: &str) -> Result<Self, RuleProblem> {
        let (anchor, body, anchored) = if let Some(rest) = spec.strip_prefix("//") {
            (Anchor::Root, rest, true)
        } else if spec == "~" {
            (Anchor::Home, "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (Anchor::Home, rest, true)
        } else if spec.starts_with('~') {
            return Err(RuleProblem::OtherUsersHome);
        } else if let Some(rest) = spec.strip_prefix('/') {
            (Anchor::Base, rest, true)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (Anchor::Cwd, rest, true)
        } else {
            // gitignore: a pattern with a slash before its end is anchored; one without
            // matches a name at any depth.
            (Anchor::Cwd, spec, spec.trim_end_matches('/').contains('/'))
        };
        let (prefix, rest) = if anchored {
            split_literal(body)
        } else {
            (PathBuf::new(), body.to_string())
        };
        let glob = if rest.is_empty() {
            None
        } else {
            Some(compile(&rest, anchored)?)
        };
        Ok(Self {
            anchor,
            prefix,
            glob,
        })
    }

    /// The folder the rest of the pattern is relative to, in both forms; None when the anchor
    /// is the home folder and there is none.
    pub(crate) fn folder(&self, anchors: Anchors<'_>) -> Option<(PathBuf, PathBuf)> {
        let anchor = match self.anchor {
            Anchor::Root => Path::new("/"),
            Anchor::Home => anchors.home?,
            Anchor::Base => anchors.base,
            Anchor::Cwd => anchors.cwd,
        };
        let joined = anchor.join(&self.prefix);
        Some((
            workspace::resolve(&joined, anchors.cwd),
            workspace::absolute(&joined, anchors.cwd),
        ))
    }

    /// Matches the resolved path against the resolved folder: what an allow rule needs, so it
    /// only ever vouches for where a write really lands.
    pub fn matches_resolved(&self, candidate: &Candidate, anchors: Anchors<'_>) -> bool {
        self.folder(anchors).is_some_and(|(folder, _)| {
            self.matches_under(&folder, &candidate.resolved, candidate.is_dir)
        })
    }

    /// Matches any spelling against any form of the folder: what a deny or ask rule needs, so
    /// neither a symlink in the path nor one in the rule gets around it.
    pub fn matches_any_form(&self, candidate: &Candidate, anchors: Anchors<'_>) -> bool {
        let Some((resolved, spelled)) = self.folder(anchors) else {
            return false;
        };
        let folders = [resolved.as_path(), spelled.as_path()];
        let paths = [candidate.resolved.as_path(), candidate.spelled.as_path()];
        folders.iter().any(|folder| {
            paths
                .iter()
                .any(|path| self.matches_under(folder, path, candidate.is_dir))
        })
    }

    /// Whether the pattern names one file or folder (no wildcard), which [`Self::folder`] is.
    pub(crate) fn is_literal(&self) -> bool {
        self.glob.is_none()
    }

    pub(crate) fn matches_under(&self, folder: &Path, path: &Path, is_dir: bool) -> bool {
        let Ok(relative) = path.strip_prefix(folder) else {
            return false;
        };
        match &self.glob {
            None => true,
            Some(_) if relative.as_os_str().is_empty() => false,
            Some(glob) => glob
                .matched_path_or_any_parents(relative, is_dir)
                .is_ignore(),
        }
    }
}

impl PathPattern {
    /// As `matches_under`, but for `path` alone, not its parents: what a walk needs, which has
    /// already checked (and pruned) every folder above the entry.
    pub(crate) fn matches_entry(&self, folder: &Path, path: &Path, is_dir: bool) -> bool {
        let Ok(relative) = path.strip_prefix(folder) else {
            return false;
        };
        match &self.glob {
            None => true,
            Some(_) if relative.as_os_str().is_empty() => false,
            Some(glob) => glob.matched(relative, is_dir).is_ignore(),
        }
    }
}

/// Splits an anchored body into its leading wildcard-free folders and the rest. A component
/// whose special characters are all escaped (`a\*b`) is literal: that is how a path holding
/// `*`, `[` or `{` is written into a rule (see [`escape`]).
fn split_literal(body: &str) -> (PathBuf, String) {
    let components: Vec<&str> = body.split('/').collect();
    let literal: Vec<String> = components
        .iter()
        .map_while(|c| unescape_literal(c))
        .collect();
    let prefix: PathBuf = literal.iter().filter(|c| !c.is_empty()).collect();
    (prefix, components[literal.len()..].join("/"))
}

/// The literal name a component spells, or `None` when it holds an unescaped wildcard.
fn unescape_literal(component: &str) -> Option<String> {
    let mut name = String::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next()?),
            c if WILDCARDS.contains(&c) => return None,
            c => name.push(c),
        }
    }
    Some(name)
}

/// `path` written so that a path specifier matches exactly it: every character a pattern
/// would read as a wildcard or escape (`* ? [ ] { } \\`) gets a backslash. Folders chosen by
/// users or the system (`$FLEET_HOME`, a temp dir) can hold any of them, and a rule built by
/// pasting such a path would otherwise cover more than it names.
pub fn escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A rule for `tool` covering the absolute folder `dir` and everything under it, whatever
/// characters its path holds: `Read(//tmp/a\*b/**)`.
pub fn folder_rule(tool: &str, dir: &Path) -> String {
    let path = escape(&dir.to_string_lossy());
    format!("{tool}(//{}/**)", path.trim_start_matches('/'))
}

/// One gitignore line matched relative to a folder. An anchored rest gets a leading `/` so
/// `src/*.rs` after a literal prefix does not also match deeper down.
fn compile(rest: &str, anchored: bool) -> Result<Gitignore, RuleProblem> {
    // `!` and `#` mean something else at the start of a gitignore line.
    let escaped = if rest.starts_with(['!', '#']) {
        format!("\\{rest}")
    } else {
        rest.to_string()
    };
    let line = if anchored && !escaped.starts_with("**/") {
        format!("/{escaped}")
    } else {
        escaped
    };
    let mut builder = GitignoreBuilder::new(".");
    builder.add_line(None, &line)?;
    builder.build().map_err(RuleProblem::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_components_stay_literal() {
        assert_eq!(
            split_literal("tmp/a\\*b/**"),
            (PathBuf::from("tmp/a*b"), "**".into())
        );
        assert_eq!(
            split_literal("x/\\[1\\]/y/*.rs"),
            (PathBuf::from("x/[1]/y"), "*.rs".into())
        );
        assert_eq!(escape("/h/[x]{a,b}*?\\"), "/h/\\[x\\]\\{a,b\\}\\*\\?\\\\");
    }

    #[test]
    fn literal_prefix_stops_at_the_first_wildcard() {
        assert_eq!(
            split_literal("src/a/*.rs"),
            (PathBuf::from("src/a"), "*.rs".into())
        );
        assert_eq!(
            split_literal("src/**/x"),
            (PathBuf::from("src"), "**/x".into())
        );
        assert_eq!(split_literal("a/b"), (PathBuf::from("a/b"), String::new()));
        assert_eq!(split_literal(""), (PathBuf::new(), String::new()));
    }
}
