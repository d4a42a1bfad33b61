//! The Bash tool: runs one command line with `bash -c` in the agent's working directory.
//!
//! Every call is a fresh shell in its own process group, started through the agent's sandbox
//! ([`crate::sandbox`]): confined by Landlock when the agent or the command calls for it, with
//! secrets scrubbed from its environment, and watched by the guardian so nothing outlives fleet.
//! A timeout, a cancelled agent or a dropped call stops the whole group, so nothing the command
//! started outlives it by accident.
//! Output is kept in bounded memory (see [`output`]), whatever the command prints.
//!
//! Choices where Claude Code leaves room:
//! - A `timeout` above the maximum is lowered to it without an error (the description says so);
//!   zero or a negative value is an input error.
//! - A command that succeeds without printing anything returns `(no output)`, so the model
//!   never sees an empty result it might take for a failure to run.
//! - Processes left in the background with their output redirected keep running after the
//!   call; those still writing to the call's own output once the shell has exited are stopped
//!   (they would die of SIGPIPE at their next write anyway) and the result says how to keep one.

mod git_env;
pub use git_env::HARDENED_GIT_CONFIG;
mod guarded;
mod moved;
mod output;
mod policy;
mod process;

pub use guarded::{GuardedBash, SANDBOX_ONLY_ENV};
pub use policy::{check_command, CommandPolicy, PolicyRefusal};
pub(crate) use policy::{enters_embedded_repository, hidden_action, protected_target};

use crate::background::{Enrolment, Moving};
use crate::{sandbox, Access, ToolContext, ToolError, ToolOutput, TypedTool};
use process::{Ended, Finished, Running};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// Timeout when the model gives none: long enough for a build step, short enough to notice a hang.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest timeout a call may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Output kept per call (stdout and stderr together) unless `BASH_MAX_OUTPUT_LENGTH` says otherwise.
pub const DEFAULT_MAX_OUTPUT: usize = 30_000;
/// The most `BASH_MAX_OUTPUT_LENGTH` may raise the cap to, as in Claude Code.
pub const MAX_MAX_OUTPUT: usize = 150_000;
/// The variable Claude Code users already set to change the output cap.
pub const MAX_OUTPUT_ENV: &str = "BASH_MAX_OUTPUT_LENGTH";

/// Time a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long after the shell exits its pipes may stay open before background processes holding
/// them are taken to be left running.
const LINGER: Duration = Duration::from_secs(1);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// The command line to run with `bash -c`.
    pub command: String,
    /// Time limit in milliseconds (default 120000 = 2 minutes, maximum 600000 = 10 minutes).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Option<i64>,
    /// A few words saying what the command does, shown to the user (e.g. "Run the unit tests").
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy)]
pub struct BashTool {
    max_output: usize,
}

impl Default for BashTool {
    /// The output cap from `BASH_MAX_OUTPUT_LENGTH`, else 30000 bytes. The binary checks the
    /// variable before anything runs; a bad value met here is logged and the default kept.
    fn default() -> Self {
        let max_output = match fleet_protocol::env::BASH_MAX_OUTPUT_LENGTH.get() {
            Ok(value) => value.and_then(|n| usize::try_from(n).ok()),
            Err(err) => {
                tracing::warn!("{err}; keeping {DEFAULT_MAX_OUTPUT}");
                None
            }
        };
        Self::with_max_output(max_output.unwrap_or(DEFAULT_MAX_OUTPUT))
    }
}

impl BashTool {
    /// A Bash tool that keeps at most `max_output` bytes of output per call (at least 1).
    pub fn with_max_output(max_output: usize) -> Self {
        Self {
            max_output: max_output.max(1),
        }
    }

    pub fn max_output(&self) -> usize {
        self.max_output
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::InvalidInput {
        tool: BashTool::NAME.to_string(),
        message,
    }
}

/// The time limit a call asked for, lowered to the maximum.
fn timeout_of(timeout: Option<i64>) -> Result<u64, ToolError> {
    match timeout {
        None => Ok(DEFAULT_TIMEOUT_MS),
        Some(ms) if ms <= 0 => Err(invalid(format!(
            "timeout: must be a positive number of milliseconds, got {ms}; leave it out for the \
             default of {DEFAULT_TIMEOUT_MS} ms"
        ))),
        Some(ms) => Ok(ms.unsigned_abs().min(MAX_TIMEOUT_MS)),
    }
}

/// Why a command did not run to its end.
#[derive(Debug)]
enum Interrupt {
    Timeout,
    Cancelled,
    /// The user moved the call to the background (Ctrl+B); it must say whether it did.
    Background(Moving),
}

/// Resolves when the call is moved to the background; never without an enrolment.
async fn moved(enrolment: &mut Option<Enrolment>) -> Moving {
    match enrolment {
        Some(enrolment) => enrolment.moved().await,
        None => std::future::pending().await,
    }
}

impl TypedTool for BashTool {
    type Input = Input;
    const NAME: &'static str = "Bash";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        format!(
            "Runs a command line with `bash -c` in the working directory and returns its stdout \
             and stderr.\n\
             - Each call is a fresh shell: `cd`, variables and functions do not carry over. Use \
             absolute paths or `cd dir && cmd`.\n\
             - Quote paths that contain spaces: `cd \"my dir\"`.\n\
             - stdin is empty, and editors and pagers are disabled: give commands everything up \
             front (`-y`, `-m \"message\"`, `--no-edit`).\n\
             - `timeout` is in milliseconds: default {DEFAULT_TIMEOUT_MS} (2 minutes), maximum \
             {MAX_TIMEOUT_MS} (10 minutes); a larger value is lowered to the maximum. On timeout \
             the command and every process it started are stopped.\n\
             - At most {max} bytes of output are returned; beyond that the middle is cut and the \
             start and end kept. Redirect long output to a file and inspect it with Read or \
             Grep.\n\
             - A non-zero exit code makes the result an error and is reported.\n\
             - A background job (`cmd &`) keeps running after the call only if its output is \
             redirected: `cmd > log 2>&1 &`.\n\
             - Commands may run in an OS sandbox that limits where they write; a refusal ends \
             with `denied by the sandbox: <path>`. Do not retry it: write elsewhere (scratch \
             files go in $TMPDIR) or ask the user.\n\
             - Prefer the dedicated tools: Read instead of cat/head/tail, Grep instead of \
             grep/rg, Glob instead of find/ls to find files, Edit or Write instead of sed/awk/echo \
             redirection. Use Bash for builds, tests, git and other programs.",
            max = self.max_output,
        )
    }

    fn access(&self, input: &Input, _ctx: &ToolContext) -> Access {
        Access::Command(input.command.clone())
    }

    /// A command the read-only classifier accepts needs no prompt: it runs under the read-only
    /// sandbox, so a misjudged command still cannot change anything.
    fn read_only_call(&self, input: &Input, ctx: &ToolContext) -> bool {
        check_command(&input.command, &CommandPolicy::ReadOnly, &ctx.cwd).is_ok()
    }

    /// With `autoAllowBashIfSandboxed`, a command the sandbox will confine needs no prompt.
    fn sandboxed_call(&self, input: &Input, ctx: &ToolContext) -> bool {
        ctx.sandbox.auto_allows(&input.command, &ctx.cwd)
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.command.trim().is_empty() {
            return Err(invalid(
                "command: is empty; give the shell command line to run".to_string(),
            ));
        }
        let timeout_ms = timeout_of(input.timeout)?;
        check_cwd(ctx).await?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let plan = ctx
            .sandbox
            .plan(&input.command, &ctx.cwd)
            .map_err(|refusal| ToolError::Sandbox {
                tool: Self::NAME.to_string(),
                refusal: Box::new(refusal),
            })?;
        let mut running = process::spawn(
            &input.command,
            &ctx.cwd,
            self.max_output,
            environment(&input.command, ctx),
            &plan,
            ctx.sandbox.launcher_hint(),
        )
        .map_err(|err| ToolError::Process {
            message: format!(
                "Could not start bash: {err}. Bash must be installed as /bin/bash or on PATH."
            ),
            source: err,
        })?;
        // Only where a moved command can become a task does the call answer Ctrl+B.
        let shells = ctx.background.as_ref().and_then(|s| s.shell_tasks());
        let mut enrolment = shells.as_ref().and(ctx.enrol_foreground());
        let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
        let ended = loop {
            let stop = async {
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => Interrupt::Timeout,
                    () = ctx.cancel.cancelled() => Interrupt::Cancelled,
                    moving = moved(&mut enrolment) => Interrupt::Background(moving),
                }
            };
            let ended = running.run_until(stop, LINGER).await.map_err(wait_failed)?;
            let moving = match ended {
                Ended::Stopped(Interrupt::Background(moving)) => moving,
                other => break other,
            };
            let Some(shells) = shells.as_ref() else {
                moving.refused();
                enrolment = None;
                continue;
            };
            let start = moved::start(&input.command, input.description.as_deref(), ctx);
            match shells.adopt(start).await {
                Ok(adopted) => {
                    let max = self.max_output;
                    return moved::continue_in_background(running, adopted, moving, max).await;
                }
                Err(err) => {
                    // It cannot become a task: it goes on in the foreground, as before.
                    tracing::warn!(%err, "moving a Bash command to the background");
                    moving.refused();
                    enrolment = None;
                }
            }
        };
        let note = match ended {
            Ended::Exited => None,
            Ended::HeldOpen => {
                stop_group(&mut running).await?;
                Some(Note::HeldOpen)
            }
            Ended::Stopped(Interrupt::Timeout) => {
                stop_group(&mut running).await?;
                Some(Note::TimedOut(timeout_ms))
            }
            Ended::Stopped(Interrupt::Cancelled | Interrupt::Background(_)) => {
                stop_group(&mut running).await?;
                return Err(ToolError::Cancelled);
            }
        };
        let mut output = result(running.finish(), note, self.max_output);
        if let Some(policy) = plan.policy.as_ref().filter(|_| output.is_error) {
            let printed = output.structured.as_ref().map(printed).unwrap_or_default();
            if let Some(explained) = sandbox::violation::explain(policy, &printed, &ctx.cwd) {
                output.content.push('\n');
                output.content.push_str(&explained);
            }
        }
        Ok(output)
    }
}

/// The environment a command starts with: the sandbox's scrubbed one, and for a command
/// that runs unasked because it only looks (or any command of a read-only agent) git's
/// program-running configuration turned off (see [`git_env`]).
fn environment(command: &str, ctx: &ToolContext) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let env = ctx.sandbox.environment();
    let looking = matches!(ctx.sandbox.kind(), sandbox::SandboxKind::ReadOnly)
        || policy::only_looking_git(command)
        || check_command(command, &CommandPolicy::ReadOnly, &ctx.cwd).is_ok();
    if looking {
        git_env::harden(env)
    } else {
        env
    }
}

/// What a command printed, both streams, from its structured result.
fn printed(structured: &serde_json::Value) -> String {
    ["stdout", "stderr"]
        .iter()
        .filter_map(|key| structured[*key].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn stop_group(running: &mut Running) -> Result<(), ToolError> {
    running.stop_group(KILL_GRACE).await.map_err(wait_failed)
}

fn wait_failed(err: std::io::Error) -> ToolError {
    ToolError::Process {
        message: format!("Lost track of the bash process: {err}"),
        source: err,
    }
}

/// Refuses to run anywhere but the agent's working directory, which must exist.
async fn check_cwd(ctx: &ToolContext) -> Result<(), ToolError> {
    let cwd = ctx.cwd.display();
    match tokio::fs::metadata(&ctx.cwd).await {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(ToolError::unsupported(
            &ctx.cwd,
            format!("The working directory {cwd} is not a directory, so no command can run there."),
        )),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(ToolError::not_found(
            &ctx.cwd,
            format!(
            "The working directory {cwd} does not exist (it may have been deleted or moved), so \
             no command can run there. Recreate it, or ask the user how to continue."
        ),
        )),
        Err(err) => Err(ToolError::io(
            "Cannot use the working directory",
            &ctx.cwd,
            err,
        )),
    }
}

/// Something the model must know about how the command ended, beyond its exit status.
#[derive(Debug, Clone, Copy)]
enum Note {
    TimedOut(u64),
    HeldOpen,
}

impl Note {
    fn text(self) -> String {
        match self {
            Note::TimedOut(ms) => format!(
                "Command timed out after {ms} ms; it and every process it started were stopped. \
                 Give a larger `timeout` (at most {MAX_TIMEOUT_MS} ms) or make the command \
                 faster (a narrower test filter, a smaller input)."
            ),
            Note::HeldOpen => format!(
                "The shell exited, but processes it left in the background were still writing to \
                 its output {} s later, so they were stopped. To keep a process running after \
                 the call, redirect its output: `cmd > file.log 2>&1 &`.",
                LINGER.as_secs()
            ),
        }
    }
}

/// How an exit status reads for the model, or `None` for success.
fn status_text(status: Option<ExitStatus>) -> Option<String> {
    let status = status?;
    if status.success() {
        return None;
    }
    match (status.code(), status.signal()) {
        (Some(code), _) => Some(format!("Exit code {code}")),
        (None, Some(signal)) => Some(format!("Killed by signal {}", signal_name(signal))),
        (None, None) => Some(format!("Failed: {status}")),
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| signal.to_string())
}

/// The exit code as a shell would report it in `$?` (128 + N for a signal).
fn exit_code(status: Option<ExitStatus>) -> Option<i32> {
    let status = status?;
    status.code().or_else(|| status.signal().map(|s| 128 + s))
}

fn result(finished: Finished, note: Option<Note>, max_output: usize) -> ToolOutput {
    let Finished {
        status,
        mut stdout,
        mut stderr,
    } = finished;
    output::fit(&mut stdout, &mut stderr, max_output);
    let stdout = stdout.render();
    let stderr = stderr.render();
    let failure = match note {
        // We stopped it: its signal says nothing the timeout note does not.
        Some(Note::TimedOut(_)) => None,
        _ => status_text(status),
    };
    let is_error = failure.is_some() || matches!(note, Some(Note::TimedOut(_)));
    let mut parts: Vec<String> = [stdout.clone(), stderr.clone()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    parts.extend(failure);
    parts.extend(note.map(Note::text));
    let content = if parts.is_empty() {
        "(no output)".to_string()
    } else {
        parts.join("\n")
    };
    let structured = json!({
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": matches!(note, Some(Note::TimedOut(_))),
        "isImage": false,
        "noOutputExpected": false,
        "exitCode": exit_code(status),
    });
    ToolOutput {
        content,
        is_error,
        structured: Some(structured),
        images: Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn output_cap_variable_is_bounded_by_the_maximum() {
        let var = fleet_protocol::env::BASH_MAX_OUTPUT_LENGTH;
        assert_eq!(var.name, MAX_OUTPUT_ENV);
        assert_eq!(var.max, MAX_MAX_OUTPUT as u64);
        assert_eq!(var.parse(" 5000 ").unwrap(), 5_000);
        for bad in ["0", "-5", "lots", "1000000"] {
            assert!(var.parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timeout_defaults_is_clamped_and_must_be_positive() {
        assert_eq!(timeout_of(None).unwrap(), DEFAULT_TIMEOUT_MS);
        assert_eq!(timeout_of(Some(5)).unwrap(), 5);
        assert_eq!(timeout_of(Some(10_000_000)).unwrap(), MAX_TIMEOUT_MS);
        for bad in [0, -1] {
            let err = timeout_of(Some(bad)).unwrap_err().to_string();
            assert!(err.contains("timeout: must be a positive number"), "{err}");
        }
    }
}
