//! What a running session may change about its permissions: the mode, and rules and folders
//! granted for the rest of the session (Claude Agent SDK `set_permission_mode`, and the
//! `updatedPermissions` a `can_use_tool` answer carries).
//!
//! Both live behind an `Arc`, shared by every clone of a [`super::Permissions`]: the agent's
//! dispatcher holds the permissions it checks with for a whole reply, skills lend the agent a
//! copy with extra allow rules, and a subagent without a mode of its own is built from a copy
//! of its parent's. Each of those sees a change at its next check, as Claude Code's do. A copy
//! that must not follow (a subagent given a narrower mode, a teammate leaving plan mode) takes
//! a mode of its own with [`super::Permissions::set_own_mode`].

use super::mode::PermissionMode;
use super::rule::{Rule, RuleError, RuleKind, RuleSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

/// A permission mode that can change while it is read, one byte wide.
#[derive(Debug)]
pub(crate) struct ModeCell(AtomicU8);

impl ModeCell {
    pub(crate) fn new(mode: PermissionMode) -> Arc<Self> {
        Arc::new(Self(AtomicU8::new(index(mode))))
    }

    pub(crate) fn get(&self) -> PermissionMode {
        let at = usize::from(self.0.load(Ordering::Acquire));
        PermissionMode::ALL
            .get(at)
            .copied()
            .unwrap_or(PermissionMode::Default)
    }

    pub(crate) fn set(&self, mode: PermissionMode) {
        self.0.store(index(mode), Ordering::Release);
    }
}

fn index(mode: PermissionMode) -> u8 {
    PermissionMode::ALL
        .iter()
        .position(|m| *m == mode)
        .and_then(|at| u8::try_from(at).ok())
        .unwrap_or(0)
}

/// Rules and folders granted while the session runs, on top of those it started with.
#[derive(Debug, Default)]
pub(crate) struct SessionGrants {
    rules: RwLock<RuleSet>,
    dirs: RwLock<Vec<PathBuf>>,
}

impl SessionGrants {
    /// The rules granted so far. A poisoned lock (a panic while adding a rule) still holds a
    /// valid list: every change is a single push or retain.
    pub(crate) fn rules(&self) -> RwLockReadGuard<'_, RuleSet> {
        self.rules.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn dirs(&self) -> Vec<PathBuf> {
        self.dirs.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn has_dirs(&self) -> bool {
        !self
            .dirs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Parses every rule first, so that one bad rule adds none.
    pub(crate) fn add_rules(
        &self,
        kind: RuleKind,
        texts: &[String],
        base: &Path,
        source: &str,
    ) -> Result<(), RuleError> {
        let parsed = parse_all(kind, texts, base, source)?;
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        for rule in parsed {
            let list = list_mut(&mut rules, kind);
            if !list.iter().any(|existing| same_rule(existing, &rule)) {
                list.push(rule);
            }
        }
        Ok(())
    }

    /// Removes the granted `kind` rules spelled as one of `texts`; returns how many went.
    pub(crate) fn remove_rules(&self, kind: RuleKind, texts: &[String]) -> usize {
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let list = list_mut(&mut rules, kind);
        let before = list.len();
        list.retain(|rule| !texts.iter().any(|text| spelled(rule, text)));
        before - list.len()
    }

    /// Replaces every granted `kind` rule with `texts` (all parsed first).
    pub(crate) fn replace_rules(
        &self,
        kind: RuleKind,
        texts: &[String],
        base: &Path,
        source: &str,
    ) -> Result<(), RuleError> {
        let parsed = parse_all(kind, texts, base, source)?;
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        *list_mut(&mut rules, kind) = parsed;
        Ok(())
    }

    /// Adds folders, already resolved, once each.
    pub(crate) fn add_dirs(&self, dirs: impl IntoIterator<Item = PathBuf>) {
        let mut held = self.dirs.write().unwrap_or_else(|e| e.into_inner());
        for dir in dirs {
            if !held.contains(&dir) {
                held.push(dir);
            }
        }
    }

    pub(crate) fn remove_dirs(&self, dirs: &[PathBuf]) {
        let mut held = self.dirs.write().unwrap_or_else(|e| e.into_inner());
        held.retain(|dir| !dirs.contains(dir));
    }
}

/// Every one of `texts` as a `kind` rule, or the first error: one bad rule takes none.
fn parse_all(
    kind: RuleKind,
    texts: &[String],
    base: &Path,
    source: &str,
) -> Result<Vec<Arc<Rule>>, RuleError> {
    texts
        .iter()
        .map(|text| Rule::parse(kind, text, base.to_path_buf(), source).map(Arc::new))
        .collect()
}

fn list_mut(rules: &mut RuleSet, kind: RuleKind) -> &mut Vec<Arc<Rule>> {
    match kind {
        RuleKind::Allow => &mut rules.allow,
        RuleKind::Ask => &mut rules.ask,
        RuleKind::Deny => &mut rules.deny,
    }
}

/// Two rules that say the same thing, wherever they came from.
fn same_rule(a: &Rule, b: &Rule) -> bool {
    a.kind() == b.kind() && a.tool() == b.tool() && a.specifier() == b.specifier()
}

/// Whether `rule` is the rule `text` spells (`Bash(npm test)`, `Read`).
fn spelled(rule: &Rule, text: &str) -> bool {
    let text = text.trim();
    let (tool, specifier) = match text.split_once('(') {
        Some((tool, rest)) => (tool.trim(), rest.strip_suffix(')').map(str::trim)),
        None => (text, None),
    };
    let specifier = specifier.filter(|s| !s.is_empty() && *s != "*");
    rule.tool() == tool && rule.specifier() == specifier
}

/// `own` with `granted` appended, for a check that must see both (allow rules may vouch for
/// different parts of one command line, so the lists are searched as one).
pub(crate) fn merged(own: &RuleSet, granted: &RuleSet) -> RuleSet {
    let join = |a: &[Arc<Rule>], b: &[Arc<Rule>]| a.iter().chain(b).cloned().collect();
    RuleSet {
        allow: join(&own.allow, &granted.allow),
        ask: join(&own.ask, &granted.ask),
        deny: join(&own.deny, &granted.deny),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_cell_reads_back_every_mode() {
        let cell = ModeCell::new(PermissionMode::Default);
        for mode in PermissionMode::ALL {
            cell.set(mode);
            assert_eq!(cell.get(), mode);
        }
    }

    #[test]
    fn granted_rules_are_added_once_and_removed_by_their_spelling() {
        let grants = SessionGrants::default();
        let texts = vec!["Bash(npm test)".to_string(), "Read".to_string()];
        grants
            .add_rules(RuleKind::Allow, &texts, Path::new("/p"), "session")
            .expect("valid rules");
        grants
            .add_rules(RuleKind::Allow, &texts, Path::new("/p"), "session")
            .expect("valid rules");
        assert_eq!(grants.rules().allow.len(), 2);
        assert_eq!(
            grants.remove_rules(RuleKind::Allow, &["Bash(npm test)".into()]),
            1
        );
        assert_eq!(grants.rules().allow.len(), 1);
    }

    #[test]
    fn one_bad_rule_adds_none() {
        let grants = SessionGrants::default();
        let texts = vec!["Bash(ls)".to_string(), "bash(ls)".to_string()];
        assert!(grants
            .add_rules(RuleKind::Deny, &texts, Path::new("/p"), "session")
            .is_err());
        assert!(grants.rules().is_empty());
    }
}
