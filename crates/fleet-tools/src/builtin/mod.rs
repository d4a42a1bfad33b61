//! The built-in tools: files (Read, Write, Edit), search (Glob, Grep) and the shell (Bash).

pub mod bash;
pub mod edit;
pub mod file_jobs;
pub mod glob;
pub mod grep;
pub mod read;
pub(crate) mod regular_file;
pub mod write;

pub use bash::{BashTool, CommandPolicy, GuardedBash, PolicyRefusal};
pub use edit::EditTool;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use read::ReadTool;
pub use write::WriteTool;

use crate::tool::Tool;
use std::sync::Arc;

/// Every built-in tool, in the order the model is shown them.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(BashTool::default()),
        Arc::new(EditTool),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(ReadTool),
        Arc::new(WriteTool),
    ]
}
