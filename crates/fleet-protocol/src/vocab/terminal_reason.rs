//! Why an agent's loop stopped, in one word a script can switch on: the `terminal_reason` of
//! a result line.

use super::open::open_vocabulary;

open_vocabulary! {
    /// The `terminal_reason` of a result. Most follow from the result's subtype; the ones that
    /// do not (`hook_stopped`, `crashed`) are set by whoever ended the run.
    pub enum TerminalReason as "terminal reason" {
        /// The model finished its turn (subtype `success`).
        Completed = "completed",
        /// The run used every turn `--max-turns` allowed.
        MaxTurns = "max_turns",
        /// The run spent the `--max-budget-usd` budget.
        MaxBudgetUsd = "max_budget_usd",
        /// `--json-schema`: the model gave no valid structured output within the retries.
        StructuredOutputRetryExhausted = "structured_output_retry_exhausted",
        /// fleet's earlier name for an API error that ended the run; still read, no longer
        /// written by the printers (they write `api_error`).
        ModelError = "model_error",
        /// An API error ended the run (the result carries `api_error_status`; its subtype is
        /// `success` with `is_error: true`, as in Claude Code).
        ApiError = "api_error",
        /// Anything else that ended the run with an error.
        Error = "error",
        /// A hook's `continue: false` ended the run (a success, as in Claude Code).
        HookStopped = "hook_stopped",
        /// The process died while the run was going; written on resume for the lost run.
        Crashed = "crashed",
    }
}
