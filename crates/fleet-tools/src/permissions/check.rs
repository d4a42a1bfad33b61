//! Deciding one call. (Stub: evaluation to be written.)

use super::mode::PermissionMode;
use super::rule::{Rule, RuleSet};
use crate::tool::Access;
use crate::workspace::Workspace;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a decision was made, for the model's error text, `permission_denials` and the
/// `permission_decision` metadata printers show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionReason {
    /// A rule matched.
    Rule(Rule),
    /// The mode decided (e.g. read-only tool in default mode, anything in bypassPermissions).
    Mode(PermissionMode),
    /// A write resolved outside the project and its added folders.
    OutsideWorkspace(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow(DecisionReason),
    Ask(DecisionReason),
    Deny(DecisionReason),
}

/// Everything needed to decide a call: the mode, the rules, the workspace and the home folder
/// (for `~/` specifiers).
#[derive(Debug, Clone)]
pub struct Permissions {
    pub mode: PermissionMode,
    pub rules: RuleSet,
    pub workspace: Arc<Workspace>,
    pub home: Option<PathBuf>,
}

impl Permissions {
    pub fn new(mode: PermissionMode, rules: RuleSet, workspace: Arc<Workspace>) -> Self {
        Self {
            mode,
            rules,
            workspace,
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// Decides one call of `tool` (read-only or not) that would touch `access`; `cwd` is the
    /// calling agent's working directory.
    pub fn check(
        &self,
        _tool: &str,
        _read_only: bool,
        _access: &Access,
        _cwd: &std::path::Path,
    ) -> Decision {
        Decision::Allow(DecisionReason::Mode(self.mode))
    }
}
