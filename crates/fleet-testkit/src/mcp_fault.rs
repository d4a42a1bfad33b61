//! Where the `fleet-mcp-fault` binary is, for tests in other crates. Cargo builds a package's
//! binaries only for that package's own tests, so the first caller builds it (once per test
//! process) into the same target folder and profile as the running test.

use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::{Arc, OnceLock};
use thiserror::Error;

/// Why `fleet-mcp-fault` could not be built. `Clone` because the one answer is handed to every
/// test of the process; the I/O errors are shared.
#[derive(Debug, Clone, Error)]
pub enum BuildError {
    #[error("current_exe: {0}")]
    CurrentExe(#[source] Arc<std::io::Error>),
    /// The test binary is not at `<target>/<profile>/deps/<name>`.
    #[error("unexpected test path {}", .0.display())]
    UnexpectedPath(PathBuf),
    #[error("running cargo build: {0}")]
    Cargo(#[source] Arc<std::io::Error>),
    #[error("cargo build of fleet-mcp-fault failed: {0}")]
    Failed(ExitStatus),
    #[error("{} was not built", .0.display())]
    Missing(PathBuf),
}

/// The path of a freshly built `fleet-mcp-fault`, or why it could not be built.
pub fn mcp_fault_server() -> Result<PathBuf, BuildError> {
    static BUILT: OnceLock<Result<PathBuf, BuildError>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<PathBuf, BuildError> {
    // A test runs as <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().map_err(|e| BuildError::CurrentExe(Arc::new(e)))?;
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or_else(|| BuildError::UnexpectedPath(exe.clone()))?;
    let target_dir = profile_dir
        .parent()
        .ok_or_else(|| BuildError::UnexpectedPath(exe.clone()))?;
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .unwrap_or("debug");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "fleet-testkit",
        "--bin",
        "fleet-mcp-fault",
    ])
    .arg("--target-dir")
    .arg(target_dir)
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().map_err(|e| BuildError::Cargo(Arc::new(e)))?;
    if !status.success() {
        return Err(BuildError::Failed(status));
    }
    let path = profile_dir.join("fleet-mcp-fault");
    if path.is_file() {
        Ok(path)
    } else {
        Err(BuildError::Missing(path))
    }
}

/// The entry point of the reference server `@modelcontextprotocol/server-everything`, installed
/// (pinned, once, under the target folder) by the project's `scripts/mcp-everything.sh`; `None`,
/// saying so on stderr, when node or npm is missing and cannot be installed.
pub fn mcp_everything_entry() -> Option<String> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-everything.sh");
    let out = Command::new("bash").arg(&script).output().ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if path.is_empty() {
        eprintln!(
            "skipped: server-everything is not installed (node/npm missing): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(path)
}
