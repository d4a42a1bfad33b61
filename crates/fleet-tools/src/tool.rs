//! The [`Tool`] trait the agent loop calls, and [`TypedTool`], the way built-ins implement it
//! with a typed input struct whose JSON Schema is derived rather than written by hand.

use crate::context::ToolContext;
use crate::error::ToolError;
use fleet_protocol::ProposedChange;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// What [`Tool::propose`] answers: the change the call would make, `None` for a tool that
/// changes no file (or cannot say), or the error the call itself would fail with.
pub type ProposeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<ProposedChange>, ToolError>> + Send + 'a>>;

/// What a call would touch, for the permission check. Paths are as the model gave them,
/// resolved against the agent's cwd; the permission layer resolves `..` and symlinks itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads a file or searches a folder (Read, Glob, Grep).
    Read(PathBuf),
    /// Creates or changes a file (Write, Edit).
    Write(PathBuf),
    /// Runs a shell command (Bash).
    Command(String),
    /// Touches nothing the rules can name; only the tool name matters.
    Other,
}

/// What the model gets back, plus a structured copy for printers (`tool_use_result` in
/// stream-json) that the model never sees.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub structured: Option<Value>,
    /// Pictures the model is shown after `content` (an MCP tool that returns a screenshot).
    /// Kept apart from the text so printers and transcripts of text-only tools stay as they are.
    pub images: Vec<fleet_protocol::ImageSource>,
}

impl ToolOutput {
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }

    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// A result the model should read as a failure although the tool itself worked (a command
    /// that exited non-zero).
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            ..Self::default()
        }
    }
}

/// How a tool's calls may overlap with the other calls of the same reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallelism {
    /// Runs alone, after everything before it (tools that change things).
    Exclusive,
    /// Runs beside other shared calls, up to the agent's tool concurrency (read-only tools).
    Shared,
    /// Runs beside anything that is not exclusive, with no cap of its own: the Agent tool,
    /// whose real limit is the subagent concurrency limit.
    Unbounded,
}

/// One tool as the agent loop sees it: object-safe, input still JSON.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    /// Other names the model may call it by (`Task` for `Agent`).
    fn aliases(&self) -> &[&str] {
        &[]
    }
    /// Whether a call needs to see the conversation that made it (the Agent tool forking its
    /// caller). The agent loop then publishes a copy before answering the reply; for other
    /// tools that copy would be wasted work.
    fn wants_conversation(&self) -> bool {
        false
    }
    fn parallelism(&self) -> Parallelism {
        if self.is_read_only() {
            Parallelism::Shared
        } else {
            Parallelism::Exclusive
        }
    }
    /// The description the model reads.
    fn description(&self) -> String;
    /// JSON Schema of the input object.
    fn input_schema(&self) -> Value;
    /// True when the tool never changes anything, so calls may overlap and plan mode allows it.
    fn is_read_only(&self) -> bool;
    /// True when this one call changes nothing, so the permission check may let it through as
    /// read-only (Bash with `cat x`). Tools whose every call is alike need not override it.
    fn is_read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        let _ = (input, ctx);
        self.is_read_only()
    }
    /// Whether this call will run in the OS sandbox and the settings let such calls run
    /// without a prompt (`autoAllowBashIfSandboxed`). Only Bash says yes.
    fn is_sandboxed_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        let _ = (input, ctx);
        false
    }
    /// What this input would touch. An input that does not parse yields `Access::Other`; the
    /// call itself then fails with the validation error.
    fn access(&self, input: &Value, ctx: &ToolContext) -> Access;
    /// Whether every call is the person's decision, whatever the mode and rules would allow
    /// (leaving plan mode): such a call asks where it would have been allowed.
    fn asks_always(&self) -> bool {
        false
    }
    /// Checks the call as running it would, without changing anything, and says what it
    /// would change. Asked before a person is asked to approve the call: a call that would
    /// fail (a file not read, or changed since; an `old_string` not found or not unique) is
    /// answered with its error at once instead of being put to the person, and one that
    /// would succeed is shown as the diff it makes. The call checks everything again when it
    /// runs, since the file may change while the person reads.
    fn propose<'a>(&'a self, input: &'a Value, ctx: &'a ToolContext) -> ProposeFuture<'a> {
        let _ = (input, ctx);
        Box::pin(async { Ok(None) })
    }
    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// The convenient way to write a tool: typed input, derived schema, typed errors.
pub trait TypedTool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    const NAME: &'static str;
    const READ_ONLY: bool;

    fn description(&self) -> String;
    fn access(&self, input: &Self::Input, ctx: &ToolContext) -> Access;
    /// Whether this call changes nothing; [`Self::READ_ONLY`] unless the tool knows better.
    fn read_only_call(&self, input: &Self::Input, ctx: &ToolContext) -> bool {
        let _ = (input, ctx);
        Self::READ_ONLY
    }
    /// See [`Tool::is_sandboxed_call`].
    fn sandboxed_call(&self, input: &Self::Input, ctx: &ToolContext) -> bool {
        let _ = (input, ctx);
        false
    }
    /// See [`Tool::propose`]; tools that change no file keep this default.
    fn propose(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Option<ProposedChange>, ToolError>> + Send {
        let _ = (input, ctx);
        async { Ok(None) }
    }
    fn run(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// Deserialises a tool input, naming the field that is wrong (`offset: invalid type: string
/// "ten", expected u64`).
pub fn parse_input<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(input).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        let message = if path == "." || path.is_empty() {
            inner
        } else {
            format!("{path}: {inner}")
        };
        ToolError::InvalidInput {
            tool: tool.to_string(),
            message,
        }
    })
}

/// The JSON Schema of `T` as the Messages API wants it: an object schema without `$schema`
/// or `title`.
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(T).to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    value
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn description(&self) -> String {
        TypedTool::description(self)
    }

    fn input_schema(&self) -> Value {
        schema_for::<T::Input>()
    }

    fn is_read_only(&self) -> bool {
        T::READ_ONLY
    }

    fn is_read_only_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        match serde_json::from_value::<T::Input>(input.clone()) {
            Ok(parsed) => TypedTool::read_only_call(self, &parsed, ctx),
            Err(_) => T::READ_ONLY,
        }
    }

    fn is_sandboxed_call(&self, input: &Value, ctx: &ToolContext) -> bool {
        serde_json::from_value::<T::Input>(input.clone())
            .is_ok_and(|parsed| TypedTool::sandboxed_call(self, &parsed, ctx))
    }

    fn access(&self, input: &Value, ctx: &ToolContext) -> Access {
        match serde_json::from_value::<T::Input>(input.clone()) {
            Ok(parsed) => TypedTool::access(self, &parsed, ctx),
            Err(_) => Access::Other,
        }
    }

    fn propose<'a>(&'a self, input: &'a Value, ctx: &'a ToolContext) -> ProposeFuture<'a> {
        Box::pin(async move {
            let parsed = parse_input::<T::Input>(T::NAME, input.clone())?;
            TypedTool::propose(self, parsed, ctx).await
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let parsed = parse_input::<T::Input>(T::NAME, input)?;
            self.run(parsed, ctx).await
        })
    }
}
