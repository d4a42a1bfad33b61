//! Where the `fleet-mcp-fault` binary is, for tests in other crates. Cargo builds a package's
//! binaries only for that package's own tests, so the first caller builds it (once per test
//! process) into the same target folder and profile as the running test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The path of a freshly built `fleet-mcp-fault`, or why it could not be built.
pub fn mcp_fault_server() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<PathBuf, String> {
    // A test runs as <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or_else(|| format!("unexpected test path {}", exe.display()))?;
    let target_dir = profile_dir
        .parent()
        .ok_or_else(|| format!("unexpected test path {}", exe.display()))?;
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
    let status = cmd
        .status()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build of fleet-mcp-fault failed: {status}"));
    }
    let path = profile_dir.join("fleet-mcp-fault");
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("{} was not built", path.display()))
    }
}
