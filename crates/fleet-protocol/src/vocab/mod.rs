//! The shared vocabularies: the small sets of names that cross crate boundaries and files
//! (permission modes and decisions, why a run ended, MCP server states, teammate backends).
//!
//! Each is an enum so a misspelling is a compile error rather than a silent mismatch, and
//! each serialises to exactly the string it replaced, so transcripts, team files and
//! stream-json lines keep their bytes. [`PermissionMode`] is closed (an unknown mode is an
//! error wherever it is read); the others are open vocabularies (`open.rs`): data written
//! by a newer fleet or by Claude Code reads back with the unknown name kept as `Other`.
//! `StopReason`, the model's own vocabulary, lives with the response in `crate::response`.

mod backend;
mod mcp_status;
mod open;
mod permission;
mod permission_mode;
mod terminal_reason;

pub use backend::BackendType;
pub use mcp_status::McpServerState;
pub use open::UnknownValue;
pub use permission::{
    HookDecision, HookPermissionDecision, PermissionDecision, PermissionReasonType,
};
pub use permission_mode::PermissionMode;
pub use terminal_reason::TerminalReason;

#[cfg(test)]
mod tests;
