//! The Bash tool under a [`CommandPolicy`], for agents that must not change the project.
//!
//! It is still "Bash" to the model (same name, same input), so agent definitions that list
//! `Bash` get it unchanged; the description says what it refuses. A refused command is
//! answered with an error result before any process starts. Under the read-only policy the
//! tool also reports itself read-only, so plan mode lets it through and its calls may run
//! beside other read-only calls.
//!
//! The classifier is a courtesy — a refusal the model can read before anything runs — and the
//! OS sandbox is the guarantee. [`SANDBOX_ONLY_ENV`] turns the courtesy off where the sandbox
//! confines the command, so tests (and anyone checking the claim) can see the sandbox hold on
//! its own; where it would not confine, the classifier stays on whatever the variable says.

use super::policy::{check_command, CommandPolicy};
use crate::{Access, Tool, ToolContext, ToolError, ToolFuture};
use serde_json::Value;
use std::sync::Arc;

/// Set to `1` to skip the classifier for commands the OS sandbox confines.
pub const SANDBOX_ONLY_ENV: &str = "FLEET_TEST_SANDBOX_ONLY";

/// A Bash tool that runs only commands its policy allows.
pub struct GuardedBash {
    inner: Arc<dyn Tool>,
    policy: CommandPolicy,
}

impl std::fmt::Debug for GuardedBash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedBash")
            .field("inner", &self.inner.name())
            .field("policy", &self.policy)
            .finish()
    }
}

impl GuardedBash {
    /// Wraps `inner` (the real Bash tool), which runs whatever passes `policy`.
    pub fn new(inner: Arc<dyn Tool>, policy: CommandPolicy) -> Self {
        Self { inner, policy }
    }

    pub fn policy(&self) -> &CommandPolicy {
        &self.policy
    }
}

impl Tool for GuardedBash {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[&str] {
        self.inner.aliases()
    }

    fn description(&self) -> String {
        format!(
            "{}\n\nRestricted: {} Other commands are refused without running.",
            self.inner.description(),
            self.policy.summary()
        )
    }

    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }

    fn is_read_only(&self) -> bool {
        matches!(self.policy, CommandPolicy::ReadOnly)
    }

    fn is_read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        self.is_read_only() || self.inner.is_read_only_call(input, ctx)
    }

    fn is_sandboxed_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        self.inner.is_sandboxed_call(input, ctx)
    }

    fn access(&self, input: &Value, ctx: &ToolContext) -> Access {
        self.inner.access(input, ctx)
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        // An input without a string `command` is left to the inner tool, whose validation
        // error names the field; it runs nothing either.
        let refused = input
            .get("command")
            .and_then(Value::as_str)
            .filter(|command| !sandbox_alone(command, ctx))
            .and_then(|command| check_command(command, &self.policy, &ctx.cwd).err());
        match refused {
            Some(refusal) => {
                let error = ToolError::Policy {
                    tool: self.inner.name().to_string(),
                    refusal: Box::new(refusal),
                    allowed: self.policy.summary(),
                };
                Box::pin(async move { Err(error) })
            }
            None => self.inner.call(input, ctx),
        }
    }
}

/// Whether the classifier is to be skipped for `command`: asked for with [`SANDBOX_ONLY_ENV`],
/// and the command will run under a sandbox policy.
fn sandbox_alone(command: &str, ctx: &ToolContext) -> bool {
    std::env::var(SANDBOX_ONLY_ENV).is_ok_and(|v| v == "1")
        && ctx
            .sandbox
            .plan(command, &ctx.cwd)
            .is_ok_and(|plan| plan.policy.is_some())
}
