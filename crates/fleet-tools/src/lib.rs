//! What an agent may do to the world.
//!
//! A [`Tool`] takes JSON input from the model, checks it against a typed struct (whose JSON
//! Schema is what the model is shown) and returns a [`ToolOutput`]. Whether a call may run at
//! all is the business of [`permissions`]; the agent loop asks before every call, using the
//! [`Access`] a tool declares for its input.

pub mod background;
pub mod builtin;
pub mod context;
pub mod error;
pub mod file_state;
pub mod permissions;
pub mod pool;
pub mod sandbox;
pub mod shell;
pub mod tool;
pub mod workspace;

pub use builtin::bash::{
    check_command, CommandPolicy, GuardedBash, PolicyRefusal, HARDENED_GIT_CONFIG,
};
pub use context::ToolContext;
pub use error::ToolError;
pub use file_state::FileState;
pub use pool::ToolPool;
pub use tool::{Access, Parallelism, ProposeFuture, Tool, ToolFuture, ToolOutput, TypedTool};
pub use workspace::Workspace;
