//! Whether a tool call may run: permission modes, `allow` / `ask` / `deny` rules from settings
//! files and the command line, and the workspace boundary for writes.
//!
//! Evaluation order: a matching deny rule anywhere wins, then ask rules, then allow rules, then
//! the mode's default. Writes that resolve (through `..` and symlinks) outside the workspace
//! are denied unless an allow rule names them.

mod check;
mod mode;
mod rule;
mod settings;

pub use check::{Decision, DecisionReason, Permissions};
pub use mode::PermissionMode;
pub use rule::{Rule, RuleError, RuleKind, RuleSet};
pub use settings::PermissionSettings;
