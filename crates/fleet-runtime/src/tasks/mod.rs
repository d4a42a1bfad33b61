//! Background tasks: the registry that tracks them, the tools that look at and stop them, and
//! the output of shell commands the user moved to the background.

mod foreground;
pub mod interrupted;
mod registry;
mod shells;
mod tools;

pub(crate) use foreground::{ForegroundStart, ForegroundTask};
pub use registry::{NewTask, TaskError, TaskKind, TaskRegistry, TaskSnapshot};
pub use tools::{TaskOutputTool, TaskStopTool};
