//! Why no sandbox can be had here: the kernel, the switch, or the launcher binary. The answer
//! is found once per process and handed out many times (to every agent's Bash, the guardian,
//! `fleet verify`), so it is `Clone`, its I/O errors shared.

use super::launcher::LAUNCHER_ENV;
use super::UNAVAILABLE_ENV;
use std::path::PathBuf;
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum SandboxUnavailable {
    /// `FLEET_SANDBOX_UNAVAILABLE` asks fleet to behave as on a kernel without Landlock.
    #[error("{UNAVAILABLE_ENV} is set, so fleet acts as if this kernel had no Landlock")]
    SwitchedOff,
    #[error(
        "this kernel does not enforce Landlock (Linux 5.13 or later with Landlock enabled is \
         needed)"
    )]
    NoLandlock,
    /// The path of the running binary, where a launcher is looked for, is unknown.
    #[error("cannot find the running binary: {0}")]
    CurrentExe(#[source] Arc<std::io::Error>),
    /// No launcher beside the running binary; `tried` holds why each candidate was not one.
    #[error(
        "no sandbox launcher: {} is not `fleet` and no `fleet` or `fleet-sandbox` binary is \
         beside it{}; set {LAUNCHER_ENV} to one",
        exe.display(),
        tried_list(tried)
    )]
    NoLauncher {
        exe: PathBuf,
        tried: Vec<SandboxUnavailable>,
    },
    /// The launcher (named, or a candidate) could not be run.
    #[error("cannot run the sandbox launcher {}: {source}", path.display())]
    CannotRun {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The binary ran but does not speak this fleet's launcher protocol (a stale build).
    #[error("{} is not a sandbox launcher of this fleet version", path.display())]
    WrongProtocol { path: PathBuf },
}

fn tried_list(tried: &[SandboxUnavailable]) -> String {
    if tried.is_empty() {
        return String::new();
    }
    let each: Vec<String> = tried.iter().map(ToString::to_string).collect();
    format!(" ({})", each.join("; "))
}
