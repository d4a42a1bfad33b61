//! Whether a tool call may run: permission modes, `allow` / `ask` / `deny` rules from settings
//! files and the command line, and the workspace boundary for writes.
//!
//! Evaluation order: a matching deny rule anywhere wins; plan mode then refuses anything not
//! read-only; a write to a protected path (see [`protected_name`]) asks unless an allow rule
//! names that path; ask rules ask (in bypassPermissions too); a write that resolves (through `..` and
//! symlinks) outside the workspace is denied unless an allow rule names its path; allow rules
//! allow; the mode decides the rest; dontAsk turns every ask into a deny. See
//! [`Permissions::check`].
//!
//! Rules name a tool, optionally with a specifier: `Bash(npm run *)` for commands,
//! gitignore-style paths for `Read(...)` (which also covers Glob and Grep) and `Edit(...)` /
//! `Write(...)` (which cover every file write). Bash lines are read with the shell parser
//! ([`crate::shell`]): allow rules must vouch for every simple command, with known words
//! only; deny and ask rules see every simple command, wrappers (`env`, `sudo`, `xargs`,
//! `sh -c` …) unwrapped (see `bash_split`). What the matching cannot know is what a program
//! run by an allowed command writes; only redirects (`> file`) are checked against the
//! workspace and `Edit` deny rules, and a specifier allows a redirect into a file only in a
//! mode that accepts edits.

mod bash_match;
pub(crate) mod bash_split;
pub(crate) mod call;
mod check;
mod git_reads;
mod live;
mod mode;
pub(crate) mod path_match;
mod private_home;
mod protected;
mod read_guard;
mod rule;
mod rule_error;
mod secret_args;
mod settings;

pub use check::{Behavior, Decision, DecisionReason, Permissions};
pub use mode::PermissionMode;
pub use path_match::{escape as escape_path, folder_rule};
pub use private_home::{private_entry, COMMAND_ENTRIES, TOOLCHAIN_ENTRIES};
pub use protected::{protected_name, PROTECTED_CONFIG_DIRS, PROTECTED_DIRS, PROTECTED_FILES};
pub use read_guard::{
    default_credential_stores, ReadDenial, ReadGuard, WalkGuard, CREDENTIAL_STORES,
};
pub use rule::{split_rule_list, Rule, RuleError, RuleKind, RuleProblem, RuleSet};
pub use rule_error::PatternSyntax;
pub use settings::{
    CommandLinePermissions, PermissionSettings, PermissionsBuilder, SettingsSource,
};
