//! What a hook run looks like on the event stream: `hook_started` when a matching hook begins,
//! `hook_response` when it is done, and `informational` for what a hook wants the user to read.
//! Printers show the first two only when asked (`--include-hook-events`) and the third always;
//! the names and fields are those of the Agent SDK's `SDKHookStartedMessage`,
//! `SDKHookResponseMessage` and `SDKInformationalMessage` (see docs/hooks.md).

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
        /// `success` (exit 0), `error` (any other exit code, exit 2's block included, or a
        /// failure to run), or `cancelled` (killed at its timeout or when the run was
        /// interrupted): the SDK's three values.
        outcome: String,
    },
    /// A message from a hook for the user: its `systemMessage`, a non-blocking error, a
    /// timeout, or the `stopReason` of a hook that stopped the agent.
    Informational {
        /// The text, starting with the hook's name (`PostToolUse:Bash hook: …`) so a reader
        /// knows where it came from.
        content: String,
        /// `warning`: every hook message is something the user should see.
        level: String,
        /// Set when the hook stopped the agent (`continue: false`): nothing more runs after.
        #[serde(default, skip_serializing_if = "is_false")]
        prevent_continuation: bool,
    },
}

fn is_false(value: &bool) -> bool {
    !*value
}
