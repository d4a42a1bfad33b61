//! The launcher: a small process that confines itself and then becomes the shell.
//!
//! The workspace forbids `unsafe`, so fleet cannot run code between `fork` and `exec` of the
//! shell (`pre_exec`). Instead the Bash tool starts the launcher — the `fleet` binary itself in
//! a hidden mode, `fleet __sandbox-exec …`, dispatched before any runtime starts — which, being
//! its own single-threaded process, can: leave fleet's session for one of its own (`setsid`),
//! ask to be killed when fleet dies (`PR_SET_PDEATHSIG`), set `no_new_privs`, drop every
//! capability, install the seccomp filter, apply the Landlock ruleset to itself, and `exec` the
//! shell, which inherits all of it.
//!
//! The new session is what keeps a sandboxed command away from the user's terminal: a process
//! without a controlling terminal cannot open `/dev/tty`, and `TIOCSTI` (pushing keystrokes
//! into a terminal's input, which the user's shell runs after fleet exits) works only on one's
//! controlling terminal — the seccomp filter refuses it anyway. `setsid` also makes the
//! launcher the leader of a new process group whose id is its pid, which is the group the Bash
//! tool and the guardian signal; the Bash tool therefore starts the launcher *without* a group
//! of its own (`setsid` fails for a group leader) and, until the group exists, signals the
//! launcher's pid as well. The same binary in `fleet __sandbox-guard` mode
//! is the [guardian](super::guardian).
//!
//! Test binaries of other crates are not `fleet`, so the launcher is found by [`resolve`]:
//! configured path, `FLEET_SANDBOX_LAUNCHER`, the current executable when it is `fleet`, or a
//! `fleet` / `fleet-sandbox` binary next to the current executable or in its parent folder
//! (`target/debug/deps/x` finds `target/debug/fleet`).

use super::capabilities::{self, CapsDropError};
use super::policy::SandboxPolicy;
use super::seccomp::{self, FilterError};
use super::unavailable::SandboxUnavailable;
use super::{guardian, ruleset};
use nix::sys::signal::Signal;
use nix::unistd::{getppid, setsid, Pid};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, OnceLock};
use thiserror::Error;

/// The hidden argument that makes `fleet` the sandbox launcher.
pub const EXEC_MODE: &str = "__sandbox-exec";
/// The hidden argument that makes `fleet` the guardian.
pub const GUARD_MODE: &str = "__sandbox-guard";
/// The environment variable naming the launcher binary.
pub const LAUNCHER_ENV: &str = "FLEET_SANDBOX_LAUNCHER";
/// What `__sandbox-exec --probe` prints: a launcher of another protocol is not used.
const PROTOCOL: &str = "fleet-sandbox 1";

/// Exit status when the launcher itself fails (as `env` and `timeout` use 125).
const LAUNCHER_FAILED: u8 = 125;
/// Exit status when the program could not be executed (as shells use 126).
const EXEC_FAILED: u8 = 126;

/// Runs the launcher or the guardian when the process was started as one; `None` otherwise.
/// Call it first thing in `main`, before any thread or runtime exists.
pub fn dispatch() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let mode = args.next()?;
    let rest: Vec<OsString> = args.collect();
    if mode == EXEC_MODE {
        Some(exec_main(&rest))
    } else if mode == GUARD_MODE {
        Some(guardian::guard_main(&rest))
    } else {
        None
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "fleet sandbox: {message}");
    ExitCode::from(code)
}

/// `__sandbox-exec --parent PID <policy> -- program args…`, or `__sandbox-exec --probe`.
fn exec_main(args: &[OsString]) -> ExitCode {
    if args.first().is_some_and(|a| a == "--probe") {
        println!("{PROTOCOL}");
        return ExitCode::SUCCESS;
    }
    let (parent, rest) = match args {
        [flag, pid, rest @ ..] if flag == "--parent" => {
            match pid.to_str().and_then(|p| p.parse::<i32>().ok()) {
                Some(pid) => (Pid::from_raw(pid), rest),
                None => return fail(LAUNCHER_FAILED, "--parent needs a process id"),
            }
        }
        _ => return fail(LAUNCHER_FAILED, "missing --parent PID"),
    };
    let (policy, program) = match SandboxPolicy::from_args(rest) {
        Ok(parsed) => parsed,
        Err(err) => return fail(LAUNCHER_FAILED, &err.to_string()),
    };
    let Some((program, program_args)) = program.split_first() else {
        return fail(LAUNCHER_FAILED, "no program to run after `--`");
    };
    if let Err(err) = confine(parent, &policy) {
        return fail(LAUNCHER_FAILED, &err.to_string());
    }
    let err = Command::new(program).args(program_args).exec();
    fail(
        EXEC_FAILED,
        &format!("cannot run {}: {err}", Path::new(program).display()),
    )
}

/// Why the launcher could not confine itself; it prints this and exits with 125.
#[derive(Debug, Error)]
enum ConfineFailure {
    #[error("setsid (leaving fleet's terminal session): {0}")]
    Setsid(#[source] nix::Error),
    #[error("PR_SET_PDEATHSIG: {0}")]
    DeathSignal(#[source] nix::Error),
    /// fleet died before the launcher asked to be killed with it.
    #[error("fleet exited before the command started")]
    ParentGone,
    #[error("PR_SET_NO_NEW_PRIVS: {0}")]
    NoNewPrivs(#[source] nix::Error),
    #[error(transparent)]
    Capabilities(#[from] CapsDropError),
    #[error(transparent)]
    Seccomp(#[from] FilterError),
    #[error(transparent)]
    Landlock(#[from] ruleset::ConfineError),
}

/// Everything the launcher does to itself before `exec`.
fn confine(parent: Pid, policy: &SandboxPolicy) -> Result<(), ConfineFailure> {
    use nix::sys::prctl;
    // First, so the process group the caller signals exists as early as possible.
    setsid().map_err(ConfineFailure::Setsid)?;
    prctl::set_pdeathsig(Signal::SIGKILL).map_err(ConfineFailure::DeathSignal)?;
    // fleet may have died before the line above ran; then nobody would send the signal.
    if getppid() != parent {
        return Err(ConfineFailure::ParentGone);
    }
    prctl::set_no_new_privs().map_err(ConfineFailure::NoNewPrivs)?;
    capabilities::drop_all()?;
    seccomp::install(policy)?;
    ruleset::confine(policy)?;
    Ok(())
}

/// Where the launcher binary is, if anywhere: `explicit`, else `FLEET_SANDBOX_LAUNCHER`, else
/// the current executable when it is `fleet`, else a `fleet` or `fleet-sandbox` beside the
/// current executable or in its parent folder. A binary other than the current one must answer
/// the probe, so a stale build of another version is not used.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, SandboxUnavailable> {
    if let Some(path) = explicit {
        return probed(path.to_path_buf());
    }
    if let Some(path) = std::env::var_os(LAUNCHER_ENV).filter(|v| !v.is_empty()) {
        return probed(PathBuf::from(path));
    }
    static FOUND: OnceLock<Result<PathBuf, SandboxUnavailable>> = OnceLock::new();
    FOUND.get_or_init(find_near_current_exe).clone()
}

fn find_near_current_exe() -> Result<PathBuf, SandboxUnavailable> {
    let exe = std::env::current_exe().map_err(|e| SandboxUnavailable::CurrentExe(Arc::new(e)))?;
    if exe.file_name().is_some_and(|n| n == "fleet") {
        return Ok(exe);
    }
    let dirs = exe
        .parent()
        .into_iter()
        .chain(exe.parent().and_then(Path::parent));
    let mut tried = Vec::new();
    for dir in dirs {
        for name in ["fleet-sandbox", "fleet"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                match probed(candidate.clone()) {
                    Ok(path) => return Ok(path),
                    Err(err) => tried.push(err),
                }
            }
        }
    }
    Err(SandboxUnavailable::NoLauncher { exe, tried })
}

/// `path` if it runs and speaks this launcher protocol.
fn probed(path: PathBuf) -> Result<PathBuf, SandboxUnavailable> {
    let output = match Command::new(&path)
        .args([EXEC_MODE, "--probe"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    {
        Ok(output) => output,
        Err(err) => {
            return Err(SandboxUnavailable::CannotRun {
                path,
                source: Arc::new(err),
            })
        }
    };
    let said = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && said.trim() == PROTOCOL {
        Ok(path)
    } else {
        Err(SandboxUnavailable::WrongProtocol { path })
    }
}

/// The command that runs `program args…` under `policy` through `launcher`.
pub fn command(
    launcher: &Path,
    policy: &SandboxPolicy,
    program: &Path,
) -> (PathBuf, Vec<OsString>) {
    let mut args: Vec<OsString> = vec![
        EXEC_MODE.into(),
        "--parent".into(),
        std::process::id().to_string().into(),
    ];
    args.extend(policy.to_args());
    args.push(program.as_os_str().to_os_string());
    (launcher.to_path_buf(), args)
}
