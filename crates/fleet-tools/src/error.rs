//! Why a tool call produced no ordinary output. Every variant becomes an `is_error` tool result
//! for the model (the loop goes on); the text is written for the model to act on.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ToolError {
    /// The input did not match the tool's schema; `message` names the field.
    #[error("InputValidationError: {tool}: {message}")]
    InvalidInput { tool: String, message: String },
    /// The call ran and failed in a way the model can correct (file missing, string not found…).
    #[error("{0}")]
    Failed(String),
    /// The call was refused before it ran.
    #[error("Permission to use {tool} was denied: {reason}")]
    PermissionDenied { tool: String, reason: String },
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
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    pub fn io(
        action: &'static str,
        path: impl AsRef<std::path::Path>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}
