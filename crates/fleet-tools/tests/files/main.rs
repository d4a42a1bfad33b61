//! Read, Write and Edit on real files in temporary folders, called the way the agent loop calls
//! them: JSON input through `Tool::call`.
#![allow(clippy::unwrap_used)]

mod edit;
mod propose;
mod read;
mod write;

use fleet_tools::builtin::{EditTool, ReadTool, WriteTool};
use fleet_tools::{Tool, ToolContext, ToolError, ToolOutput, Workspace};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tempfile::TempDir;

pub(crate) struct Fixture {
    _dir: TempDir,
    pub(crate) root: PathBuf,
    pub(crate) ctx: ToolContext,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = ToolContext::new(root.clone(), Arc::new(Workspace::new(&root)));
        Self {
            _dir: dir,
            root,
            ctx,
        }
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub(crate) fn arg(&self, relative: &str) -> String {
        self.path(relative).display().to_string()
    }

    pub(crate) fn put(&self, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub(crate) fn text(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    pub(crate) async fn read(&self, input: Value) -> Result<ToolOutput, ToolError> {
        ReadTool.call(input, &self.ctx).await
    }

    pub(crate) async fn read_file(&self, relative: &str) -> ToolOutput {
        self.read(json!({ "file_path": self.arg(relative) }))
            .await
            .unwrap()
    }

    pub(crate) async fn write(
        &self,
        relative: &str,
        content: &str,
    ) -> Result<ToolOutput, ToolError> {
        let input = json!({ "file_path": self.arg(relative), "content": content });
        WriteTool.call(input, &self.ctx).await
    }

    pub(crate) async fn edit(&self, input: Value) -> Result<ToolOutput, ToolError> {
        EditTool.call(input, &self.ctx).await
    }

    pub(crate) async fn replace(
        &self,
        relative: &str,
        old: &str,
        new: &str,
    ) -> Result<ToolOutput, ToolError> {
        self.edit(json!({ "file_path": self.arg(relative), "old_string": old, "new_string": new }))
            .await
    }
}

/// The message of a failed call; panics on success.
pub(crate) fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(err) => err.to_string(),
        Ok(output) => panic!("expected a failure, got {output:?}"),
    }
}

pub(crate) fn numbered_lines(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|n| format!("line {n}\n")).collect()
}
