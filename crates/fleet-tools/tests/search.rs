//! Glob and Grep on real file trees in temporary folders, including real git repositories
//! with `.gitignore` files. Shared helpers live here; the cases are in `search/`.
#![allow(clippy::unwrap_used)]

#[path = "search/glob.rs"]
mod glob;
#[path = "search/grep.rs"]
mod grep;
#[path = "search/guard.rs"]
mod guard;

use fleet_tools::builtin::{GlobTool, GrepTool};
use fleet_tools::{Tool, ToolContext, ToolError, ToolOutput, Workspace};
use serde_json::{json, Value};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tempfile::TempDir;

pub(crate) fn ctx(dir: &Path) -> ToolContext {
    ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)))
}

pub(crate) fn write(root: &Path, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    path
}

/// Makes `path` look `secs` seconds old.
pub(crate) fn age(path: &Path, secs: u64) {
    let when = SystemTime::now() - Duration::from_secs(secs);
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

pub(crate) fn git_init(root: &Path) {
    let status = Command::new("git")
        .args(["-c", "init.defaultBranch=main", "init", "-q"])
        .arg(root)
        .status()
        .unwrap();
    assert!(status.success());
}

pub(crate) async fn run(tool: &dyn Tool, root: &Path, input: Value) -> ToolOutput {
    let out = tool.call(input, &ctx(root)).await.unwrap();
    assert!(!out.is_error, "{}", out.content);
    out
}

pub(crate) async fn fail(tool: &dyn Tool, root: &Path, input: Value) -> String {
    tool.call(input, &ctx(root)).await.unwrap_err().to_string()
}

pub(crate) fn lines(out: &ToolOutput) -> Vec<&str> {
    out.content.lines().collect()
}

pub(crate) fn abs(root: &Path, relative: &str) -> String {
    root.join(relative).display().to_string()
}

/// A small project: Rust sources at several depths and a top-level manifest.
pub(crate) fn project() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Cargo.toml", "[package]\nname = \"demo\"\n");
    write(
        root,
        "src/main.rs",
        "fn main() {\n    println!(\"hello\");\n}\n",
    );
    write(root, "src/net/mod.rs", "pub mod tcp;\n");
    write(root, "src/net/tcp.rs", "pub fn connect() {}\n");
    write(
        root,
        "crates/inner/Cargo.toml",
        "[package]\nname = \"inner\"\n",
    );
    write(root, "README.md", "# Demo\nHello world\n");
    dir
}

#[tokio::test]
async fn a_cancelled_call_reports_cancellation() {
    let dir = project();
    let context = ctx(dir.path());
    context.cancel.cancel();
    let glob = GlobTool.call(json!({"pattern": "**/*"}), &context).await;
    assert!(matches!(glob, Err(ToolError::Cancelled)), "{glob:?}");
    let grep = GrepTool.call(json!({"pattern": "fn"}), &context).await;
    assert!(matches!(grep, Err(ToolError::Cancelled)), "{grep:?}");
}
