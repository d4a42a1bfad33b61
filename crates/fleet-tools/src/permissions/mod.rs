//! Whether a tool call may run: permission modes, `allow` / `ask` / `deny` rules from settings
//! files and the command line, and the workspace boundary for writes.
//!
//! Evaluation order: a matching deny rule anywhere wins; plan mode then refuses anything not
//! read-only; ask rules ask (in bypassPermissions too); a write that resolves (through `..` and
//! symlinks) outside the workspace is denied unless an allow rule names its path; allow rules
//! allow; the mode decides the rest; dontAsk turns every ask into a deny. See
//! [`Permissions::check`].
//!
//! Rules name a tool, optionally with a specifier: `Bash(npm run *)` for commands,
//! gitignore-style paths for `Read(...)` (which also covers Glob and Grep) and `Edit(...)` /
//! `Write(...)` (which cover every file write). What the shell matching does not do: it does
//! not see through wrappers (`sudo rm` is not `rm`), and it cannot know what a program run by
//! an allowed command writes; only redirects (`> file`) are checked against the workspace and
//! `Edit` deny rules.

mod bash_match;
pub(crate) mod bash_split;
pub(crate) mod call;
mod check;
mod mode;
mod path_match;
mod read_guard;
mod rule;
mod settings;

pub use check::{Behavior, Decision, DecisionReason, Permissions};
pub use mode::PermissionMode;
pub use read_guard::{
    default_credential_stores, ReadDenial, ReadGuard, WalkGuard, CREDENTIAL_STORES,
};
pub use rule::{split_rule_list, Rule, RuleError, RuleKind, RuleSet};
pub use settings::{
    CommandLinePermissions, PermissionSettings, PermissionsBuilder, SettingsSource,
};
