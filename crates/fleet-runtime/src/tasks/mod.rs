//! Background tasks: the registry that tracks them and the tools that look at and stop them.

mod registry;
mod tools;

pub use registry::{NewTask, TaskError, TaskRegistry, TaskSnapshot};
pub use tools::{TaskOutputTool, TaskStopTool};
