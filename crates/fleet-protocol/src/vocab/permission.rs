//! How the permission check of one tool call went, as printers, transcripts and the SDK's
//! `permission_denied` lines report it (`decision`, `reason_type`).

use super::open::open_vocabulary;

open_vocabulary! {
    /// Whether a call ran (`accept`) or was refused (`reject`): the `decision` of a tool
    /// result's permission note.
    pub enum PermissionDecision as "permission decision" {
        /// The call ran.
        Accept = "accept",
        /// The call was refused; the model got the refusal as the call's result.
        Reject = "reject",
    }
}

open_vocabulary! {
    /// What decided a call: the `reason_type` of a permission note and the
    /// `decision_reason_type` of a `permission_denied` line.
    pub enum PermissionReasonType as "permission reason type" {
        /// The permission mode (`default`, `plan`, …) decided.
        Mode = "mode",
        /// An allow, ask or deny rule decided (the note carries the rule's text).
        Rule = "rule",
        /// A write resolved outside the project and its added folders.
        Workspace = "workspace",
        /// A write to a path that decides what runs later (`.git/hooks`, settings files, a
        /// shell rc file).
        Protected = "protected",
        /// The call runs in the OS sandbox and the settings let sandboxed Bash run unasked
        /// (`autoAllowBashIfSandboxed`).
        Sandbox = "sandbox",
        /// A PreToolUse or PermissionRequest hook answered.
        Hook = "hook",
        /// A person (or the SDK host) answered the question.
        User = "user",
        /// The model named a tool the agent does not have.
        UnknownTool = "unknown_tool",
        /// The run was cancelled before the call could start.
        Cancelled = "cancelled",
        /// The check or the tool panicked; the call is refused rather than lost.
        InternalError = "internal_error",
        /// Claude Code's: a Bash command whose subcommands were judged one by one. fleet does
        /// not emit it; it is known so Claude Code's lines read as known values.
        SubcommandResults = "subcommandResults",
    }
}

open_vocabulary! {
    /// A hook's `hookSpecificOutput.permissionDecision` (PreToolUse): what the hook says the
    /// call should do. An unknown answer is kept and ignored, as Claude Code ignores it.
    pub enum HookPermissionDecision as "hook permission decision" {
        /// Run the call without asking (never past a deny rule, plan mode or the workspace).
        Allow = "allow",
        /// Refuse the call.
        Deny = "deny",
        /// Ask the person, as an ask rule would.
        Ask = "ask",
    }
}

open_vocabulary! {
    /// A hook's top-level `decision`: `block` stops what the event was about; `approve` is the
    /// older spelling of a PreToolUse allow.
    pub enum HookDecision as "hook decision" {
        /// Stop the prompt, the call, or the stop the event was about, with the hook's reason.
        Block = "block",
        /// PreToolUse only: the older spelling of `permissionDecision: "allow"`.
        Approve = "approve",
    }
}
