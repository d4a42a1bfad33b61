//! Running a backend's command line (`tmux`, `it2`) once and reading its answer. Every call is
//! argv words, never a shell string; a failure carries the command as the person would type
//! it and what the program said, so the error can be acted on.

use super::quote::display_word;
use super::BackendError;
use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// Runs `program args…` and returns its standard output.
pub(crate) fn run<S: AsRef<OsStr>>(program: &OsStr, args: &[S]) -> Result<String, BackendError> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| BackendError::Spawn {
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    let stderr = if stderr.is_empty() {
        format!("it exited with {}", output.status)
    } else {
        stderr
    };
    Err(BackendError::Failed {
        command: shown(program, args),
        stderr,
    })
}

/// The command as one line a person could read (and paste).
pub(crate) fn shown<S: AsRef<OsStr>>(program: &OsStr, args: &[S]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(AsRef::as_ref))
        .map(|w| display_word(&w.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}
