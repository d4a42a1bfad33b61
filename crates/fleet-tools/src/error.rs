//! Why a tool call produced no ordinary output. Every variant becomes an `is_error` tool result
//! for the model (the loop goes on); the text is written for the model to act on.
//!
//! The variants keep what went wrong (the field, the path, the rule, the underlying error) so a
//! caller can tell a missing file from a refused call without reading the text. Where the text
//! the model reads is long and specific to one tool, the variant carries it whole as `message`
//! beside the facts it was made from, and `Display` shows exactly that text.

use crate::permissions::{Decision, ReadDenial};
use crate::sandbox::SandboxRefusal;
use crate::PolicyRefusal;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// An underlying error kept as the source of a [`ToolError`].
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, Error)]
pub enum ToolError {
    /// The input did not match the tool's schema; `message` names the field.
    #[error("InputValidationError: {tool}: {message}")]
    InvalidInput { tool: String, message: String },
    /// The input matched the schema, but the value of `field` cannot be used (an empty pattern,
    /// a limit of 0, a regex that does not compile); `source` is the parser's error, if any.
    #[error("{message}")]
    BadValue {
        field: &'static str,
        message: String,
        #[source]
        source: Option<BoxedSource>,
    },
    /// The input is well-formed JSON but does not match the schema the tool checks itself
    /// (StructuredOutput's); each problem names its place.
    #[error(
        "The input does not match the schema; fix these and call {tool} again:\n- {}",
        problems.join("\n- ")
    )]
    SchemaMismatch { tool: String, problems: Vec<String> },
    /// The file or folder the call names does not exist.
    #[error("{message}")]
    NotFound { path: PathBuf, message: String },
    /// The path exists but is nothing this tool works on: a folder where a file is wanted, a
    /// device, a binary or non-UTF-8 file, a file too large.
    #[error("{message}")]
    Unsupported { path: PathBuf, message: String },
    /// A write or edit of a file the agent has not read, or that changed since it read it.
    #[error("{message}")]
    Stale { path: PathBuf, message: String },
    /// Edit: `old_string` is not in the file.
    #[error("{message}")]
    NoMatch { path: PathBuf, message: String },
    /// Edit: `old_string` is in the file `count` times and `replace_all` is false.
    #[error("{message}")]
    Ambiguous {
        path: PathBuf,
        count: usize,
        message: String,
    },
    /// The file's own permissions forbid the change (it is read-only on disk).
    #[error("{message}")]
    NotWritable { path: PathBuf, message: String },
    /// The call was refused before it ran, for a reason the tool itself gives (a read-only
    /// agent's command policy).
    #[error("Permission to use {tool} was denied: {reason}")]
    PermissionDenied { tool: String, reason: String },
    /// A restricted Bash (a read-only or scratch-only agent's) refused the command line;
    /// `allowed` says what the policy lets the agent run.
    #[error("Permission to use {tool} was denied: {refusal}. {allowed}")]
    Policy {
        tool: String,
        /// Boxed, as is the sandbox's, to keep every `Result<_, ToolError>` small.
        #[source]
        refusal: Box<PolicyRefusal>,
        allowed: String,
    },
    /// The permission check refused the call: a deny rule, a mode, an ask rule with nobody to
    /// ask. The decision keeps the rule or mode that decided.
    #[error("{}", .0.message())]
    Denied(Box<Decision>),
    /// A `Read(...)` deny rule or a credential store keeps `path` from being read.
    #[error("{}", denial.message(path))]
    ReadDenied { path: PathBuf, denial: ReadDenial },
    /// The OS sandbox the call needs is not there, and the settings say not to run without it.
    #[error("Permission to use {tool} was denied: {refusal}")]
    Sandbox {
        tool: String,
        #[source]
        refusal: Box<SandboxRefusal>,
    },
    /// A hook (`PreToolUse`, `PermissionRequest`, a task gate) refused the call.
    #[error("{message}")]
    HookRefused {
        hook: &'static str,
        reason: String,
        message: String,
    },
    /// The user answered no when asked.
    #[error("{message}")]
    UserRefused { tool: String, message: String },
    /// The model named a tool this agent does not have.
    #[error("No such tool available: {name}. The tools you can use are: {available}.")]
    UnknownTool { name: String, available: String },
    /// A process the tool runs could not be started or watched.
    #[error("{message}")]
    Process {
        message: String,
        #[source]
        source: std::io::Error,
    },
    /// The tool failed in a way that is fleet's fault (a panic, a lost worker thread).
    #[error("{message}")]
    Internal {
        message: String,
        #[source]
        source: Option<BoxedSource>,
    },
    /// A service the tool stands for (an MCP server, a remote worker) failed; the service's
    /// own error, shown as it is, and reachable with `downcast_ref`.
    #[error(transparent)]
    Service(BoxedSource),
    /// A failure with what hooks said about it appended (PostToolUseFailure feedback).
    #[error("{error}\n\n{feedback}")]
    WithFeedback {
        #[source]
        error: Box<ToolError>,
        feedback: String,
    },
    /// The agent was cancelled while the call ran.
    #[error("The tool call was cancelled before it finished.")]
    Cancelled,
    /// An I/O failure the model cannot do much about, with the path it concerned.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The call ran and failed in a way the model can correct, of no kind above.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    pub fn io(action: &'static str, path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.as_ref().display().to_string(),
            source,
        }
    }

    /// A value of `field` that cannot be used, with no underlying error.
    pub fn bad_value(field: &'static str, message: impl Into<String>) -> Self {
        Self::BadValue {
            field,
            message: message.into(),
            source: None,
        }
    }

    /// A value of `field` that a parser rejected with `source`.
    pub fn bad_value_from(
        field: &'static str,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::BadValue {
            field,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    pub fn not_found(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::NotFound {
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn unsupported(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Unsupported {
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn stale(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Stale {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A failure of a service the tool stands for, kept as the source.
    pub fn service(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Service(Box::new(source))
    }

    /// `self` with hook feedback appended to what the model reads.
    pub fn with_feedback(self, feedback: impl Into<String>) -> Self {
        Self::WithFeedback {
            error: Box::new(self),
            feedback: feedback.into(),
        }
    }

    /// A refusal by the permission check.
    pub fn denied(decision: Decision) -> Self {
        Self::Denied(Box::new(decision))
    }

    /// Whether the call was refused before it ran (by a rule, a mode, a hook, the user, the
    /// sandbox or a command policy), as opposed to running and failing.
    pub fn is_refusal(&self) -> bool {
        if let Self::WithFeedback { error, .. } = self {
            return error.is_refusal();
        }
        matches!(
            self,
            Self::PermissionDenied { .. }
                | Self::Policy { .. }
                | Self::Denied(_)
                | Self::ReadDenied { .. }
                | Self::Sandbox { .. }
                | Self::HookRefused { .. }
                | Self::UserRefused { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant shows the model exactly the text the tool wrote, and keeps its source.
    #[test]
    fn the_text_is_the_message_and_the_source_is_kept() {
        let missing = ToolError::not_found("/x", "File does not exist: /x.");
        assert_eq!(missing.to_string(), "File does not exist: /x.");
        let fed = ToolError::failed("boom").with_feedback("a hook says why");
        assert_eq!(fed.to_string(), "boom\n\na hook says why");
        let service = ToolError::service(std::io::Error::other("the server exited"));
        assert_eq!(service.to_string(), "the server exited");
        let schema = ToolError::SchemaMismatch {
            tool: "StructuredOutput".into(),
            problems: vec!["a: missing".into(), "b: not a number".into()],
        };
        assert_eq!(
            schema.to_string(),
            "The input does not match the schema; fix these and call StructuredOutput \
             again:\n- a: missing\n- b: not a number"
        );
        let unknown = ToolError::UnknownTool {
            name: "Nope".into(),
            available: "Read, Bash".into(),
        };
        assert_eq!(
            unknown.to_string(),
            "No such tool available: Nope. The tools you can use are: Read, Bash."
        );
        let bad = ToolError::bad_value_from(
            "pattern",
            "Invalid regex \"(\"",
            std::io::Error::other("unclosed group"),
        );
        assert_eq!(bad.to_string(), "Invalid regex \"(\"");
        assert!(std::error::Error::source(&bad).is_some());
        let hooked = ToolError::HookRefused {
            hook: "PreToolUse",
            reason: "no".into(),
            message: "PreToolUse hook refused this call: no".into(),
        };
        assert!(hooked.is_refusal());
        assert!(hooked.with_feedback("more").is_refusal());
        assert!(!missing.is_refusal());
    }
}
