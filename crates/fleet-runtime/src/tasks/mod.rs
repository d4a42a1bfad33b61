//! Background tasks: the registry that tracks them and the tools that look at and stop them.

mod foreground;
mod registry;
mod tools;

pub(crate) use foreground::{ForegroundStart, ForegroundTask};
pub use registry::{NewTask, TaskError, TaskRegistry, TaskSnapshot};
pub use tools::{TaskOutputTool, TaskStopTool};
