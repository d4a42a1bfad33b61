//! Whether a sandbox can be had here, and the one warning a process gives when it cannot.
//!
//! It can when the kernel enforces Landlock, a launcher binary is found, and
//! `FLEET_SANDBOX_UNAVAILABLE` is not set (a switch that makes fleet behave as on a kernel
//! without Landlock, for tests and for checking the fallback).

use super::launcher;
use super::ruleset::Support;
use super::unavailable::SandboxUnavailable;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Set to `1` to make fleet act as if the kernel had no Landlock.
pub const UNAVAILABLE_ENV: &str = "FLEET_SANDBOX_UNAVAILABLE";

/// Where warnings go: set once by the binary (fleet prints them on stderr); until then they go
/// to the log.
static WARN: OnceLock<fn(&str)> = OnceLock::new();

/// Sends sandbox warnings to `handler` from now on (the first call wins).
pub fn set_warning_handler(handler: fn(&str)) {
    let _ = WARN.set(handler);
}

fn warn(message: &str) {
    match WARN.get() {
        Some(handler) => handler(message),
        None => tracing::warn!("{message}"),
    }
}

/// Gives `message` unless this process already gave the warning called `key`: a process
/// that cannot sandbox says so once, not once per command.
pub fn warn_once(key: &'static str, message: &str) {
    static GIVEN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !given.contains(&key) {
        given.push(key);
        warn(message);
    }
}

/// The kernel's Landlock support, asked once per process.
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let support = Support::probe();
        let gaps = support.gaps();
        if support.files && !gaps.is_empty() {
            warn(&format!(
                "this kernel's Landlock is older than fleet's sandbox expects; not confined: {}",
                gaps.join(", ")
            ));
        }
        support
    })
}

/// The launcher to confine commands with, or why there is none.
pub fn launcher(explicit: Option<&Path>) -> Result<PathBuf, SandboxUnavailable> {
    if switched_off() {
        return Err(SandboxUnavailable::SwitchedOff);
    }
    if !support().files {
        return Err(SandboxUnavailable::NoLandlock);
    }
    locate(explicit)
}

/// The launcher binary, whether or not Landlock is there (the guardian needs it either way).
/// Probing a launcher runs it, so the answer for each path is kept.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, SandboxUnavailable> {
    type Found = Vec<(Option<PathBuf>, Result<PathBuf, SandboxUnavailable>)>;
    static FOUND: Mutex<Found> = Mutex::new(Vec::new());
    let key = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(launcher::LAUNCHER_ENV).map(PathBuf::from));
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, result)) = found.iter().find(|(k, _)| *k == key) {
        return result.clone();
    }
    let result = launcher::resolve(explicit);
    found.push((key, result.clone()));
    result
}

fn switched_off() -> bool {
    std::env::var(UNAVAILABLE_ENV)
        .is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no" | "off"))
}
