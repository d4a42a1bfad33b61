//! What a hook run looks like on the event stream: `hook_started` when a matching hook begins,
//! `hook_response` when it is done. Printers show them only when asked
//! (`--include-hook-events`); the names and fields are Claude Code's.

use serde::{Deserialize, Serialize};

/// One hook's run, as the event stream reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum HookNote {
    /// A hook command started.
    HookStarted {
        hook_id: String,
        /// `Event:matcher-target`, e.g. `PreToolUse:Bash`, or just the event name.
        hook_name: String,
        hook_event: String,
    },
    /// A hook command ended (or was killed at its timeout).
    HookResponse {
        hook_id: String,
        hook_name: String,
        hook_event: String,
        /// What the hook said, stdout then stderr, as one text.
        output: String,
        stdout: String,
        stderr: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// `success`, `blocked` (exit 2), `error` (another exit code or a failure to run),
        /// or `cancelled` (killed at its timeout or when the run was interrupted).
        outcome: String,
    },
}
