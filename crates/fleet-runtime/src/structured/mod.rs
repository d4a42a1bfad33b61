//! Structured output (`--json-schema`), as Claude Code gives it: the model is offered a
//! `StructuredOutput` tool whose input schema is the caller's schema and is told to give its
//! final answer by calling it. A call the schema refuses gets an error result naming every
//! problem, so the model tries again; a valid call ends the run at once (no further request)
//! and the run's result carries the value. A reply that ends without the call is answered with
//! a reminder. Past the retries allowed (`MAX_STRUCTURED_OUTPUT_RETRIES`, 5) the run ends with
//! `error_max_structured_output_retries`.

mod schema;

pub use schema::{check_schema, validate, SchemaError};

use fleet_protocol::{env, Message};
use fleet_tools::{Access, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};

/// The tool's name, as Claude Code calls it.
pub const TOOL_NAME: &str = "StructuredOutput";

/// What the model reads about the tool.
const DESCRIPTION: &str = "Use this tool to give your final answer in the structured format \
the caller asked for. Call it exactly once, at the end of your work, with the whole answer as \
its input; the input must match the schema. If the call is refused, correct the input and \
call it again.";

/// Added to the agent's system prompt.
pub const SYSTEM_NOTE: &str = "The caller wants your final answer as structured data: when \
your work is done, call the StructuredOutput tool with the answer as its input (it must match \
the tool's input schema). Your answer is what you pass to that tool, not your text.";

/// The reminder after a reply that ended without the call.
const REMINDER: &str = "You ended your turn without calling the StructuredOutput tool. You \
MUST call the StructuredOutput tool now to give your final answer; its input must match the \
tool's input schema.";

const DEFAULT_RETRIES: u32 = 5;

/// The schema, and what the current run has seen: shared by the tool and the agent loop.
#[derive(Debug)]
pub struct StructuredOutput {
    schema: Value,
    max_retries: u32,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The validated value, once the model gave one in this run.
    value: Option<Value>,
    /// Refused calls and replies without a call, in this run.
    failures: u32,
}

/// What the agent loop does next, after a reply's tool calls or after a reply without any.
#[derive(Debug)]
pub(crate) enum Next {
    /// Carry on as without structured output.
    Go,
    /// The value is in: end the run now.
    Delivered,
    /// Tell the model (a user message) and ask again.
    Remind(Message),
    /// Too many failures: end the run with this message.
    GiveUp(String),
}

impl StructuredOutput {
    /// Checks `schema` (see [`check_schema`]); the retries come from
    /// `MAX_STRUCTURED_OUTPUT_RETRIES`.
    pub fn new(schema: Value) -> Result<Arc<Self>, SchemaError> {
        check_schema(&schema)?;
        let max_retries = env::MAX_STRUCTURED_OUTPUT_RETRIES
            .get()
            .ok()
            .flatten()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(DEFAULT_RETRIES);
        Ok(Arc::new(Self {
            schema,
            max_retries,
            state: Mutex::default(),
        }))
    }

    /// The tool to put in the agent's pool.
    pub fn tool(self: &Arc<Self>) -> Arc<dyn Tool> {
        Arc::new(StructuredOutputTool(self.clone()))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value the run ended with, if any; the state starts over for the next run.
    pub(crate) fn take(&self) -> Option<Value> {
        std::mem::take(&mut *self.lock()).value
    }

    /// After a reply's tool calls were answered.
    pub(crate) fn after_tools(&self) -> Next {
        let state = self.lock();
        if state.value.is_some() {
            Next::Delivered
        } else if state.failures > self.max_retries {
            Next::GiveUp(self.gave_up())
        } else {
            Next::Go
        }
    }

    /// After a reply that called no tool: the model still owes the call.
    pub(crate) fn after_reply_without_call(&self) -> Next {
        let mut state = self.lock();
        state.failures += 1;
        if state.failures > self.max_retries {
            Next::GiveUp(self.gave_up())
        } else {
            Next::Remind(Message::user_text(REMINDER))
        }
    }

    fn gave_up(&self) -> String {
        format!(
            "Failed to provide valid structured output after {} retries \
             (MAX_STRUCTURED_OUTPUT_RETRIES).",
            self.max_retries
        )
    }

    /// Checks one call's input; a valid one is kept as the run's value.
    fn offer(&self, input: Value) -> Result<ToolOutput, ToolError> {
        let problems = validate(&self.schema, &input);
        let mut state = self.lock();
        if problems.is_empty() {
            state.value = Some(input.clone());
            return Ok(
                ToolOutput::text("Structured output provided successfully").with_structured(input)
            );
        }
        state.failures += 1;
        Err(ToolError::SchemaMismatch {
            tool: TOOL_NAME.to_string(),
            problems,
        })
    }
}

/// What the agent loop does after a reply: `with_calls` when the reply called tools (already
/// answered). `Go` for an agent without structured output.
pub(crate) fn next(structured: Option<&StructuredOutput>, with_calls: bool) -> Next {
    match structured {
        None => Next::Go,
        Some(s) if with_calls => s.after_tools(),
        Some(s) => s.after_reply_without_call(),
    }
}

struct StructuredOutputTool(Arc<StructuredOutput>);

impl Tool for StructuredOutputTool {
    fn name(&self) -> &str {
        TOOL_NAME
    }

    fn description(&self) -> String {
        DESCRIPTION.to_string()
    }

    fn input_schema(&self) -> Value {
        self.0.schema.clone()
    }

    /// It only hands back a value, so no permission question is ever asked about it.
    fn is_read_only(&self) -> bool {
        true
    }

    fn access(&self, _input: &Value, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { self.0.offer(input) })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn answer() -> Arc<StructuredOutput> {
        StructuredOutput::new(
            json!({"type": "object", "properties": {"n": {"type": "integer"}},
                                     "required": ["n"]}),
        )
        .unwrap()
    }

    #[test]
    fn a_valid_call_delivers_and_the_next_run_starts_over() {
        let s = answer();
        assert!(matches!(next(Some(&s), true), Next::Go));
        let err = s.offer(json!({"n": "x"})).unwrap_err().to_string();
        assert!(err.contains("/n: expected integer, got a string"), "{err}");
        assert!(matches!(next(Some(&s), true), Next::Go));
        let ok = s.offer(json!({"n": 3})).unwrap();
        assert_eq!(ok.structured, Some(json!({"n": 3})));
        assert!(matches!(next(Some(&s), true), Next::Delivered));
        assert_eq!(s.take(), Some(json!({"n": 3})));
        assert_eq!(s.take(), None);
        assert!(matches!(next(Some(&s), true), Next::Go));
    }

    #[test]
    fn replies_without_the_call_are_reminded_until_the_retries_run_out() {
        let s = answer();
        for _ in 0..DEFAULT_RETRIES {
            assert!(matches!(next(Some(&s), false), Next::Remind(_)));
        }
        let Next::GiveUp(message) = next(Some(&s), false) else {
            panic!("expected to give up")
        };
        assert!(message.contains("after 5 retries"), "{message}");
        assert!(matches!(next(None, false), Next::Go));
    }
}
