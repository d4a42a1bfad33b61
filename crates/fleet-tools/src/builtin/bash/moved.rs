//! A foreground Bash command the user moved to the background (Ctrl+B): the same process goes
//! on running as a background shell task, so nothing is restarted and nothing printed is lost.
//!
//! What it printed so far starts its output file, and everything it prints afterwards is
//! appended there as it arrives, so TaskOutput (or Read) can follow it. The call answers at
//! once with the task's id; the task ends when the command does (no time limit any more: the
//! user chose to let it run), or when TaskStop kills its process group. Its result, bounded as
//! a Bash result is, goes to the task's `<task-notification>`.

use super::process::{Ended, Running};
use super::{exit_code, result, Note, KILL_GRACE, LINGER};
use crate::background::{AdoptedShell, Moving, ShellEnding, ShellStart, ShellStatus};
use crate::{ToolContext, ToolError, ToolOutput};
use serde_json::json;
use tokio::io::AsyncWriteExt;

/// What the task is told about the command.
pub(super) fn start(command: &str, description: Option<&str>, ctx: &ToolContext) -> ShellStart {
    let description = description
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(command);
    ShellStart {
        command: command.to_string(),
        description: description.to_string(),
        tool_use_id: ctx.tool_use_id.clone().unwrap_or_default(),
    }
}

/// Hands `running` to a task of its own, tells `moving` it moved, and answers the call.
pub(super) async fn continue_in_background(
    mut running: Running,
    adopted: AdoptedShell,
    moving: Moving,
    max_output: usize,
) -> Result<ToolOutput, ToolError> {
    let AdoptedShell {
        task_id,
        output_file,
        cancel,
        done,
    } = adopted;
    let (stdout, stderr) = running.printed_so_far();
    let (stdout, stderr) = (stdout.render(), stderr.render());
    let mut so_far = String::new();
    for part in [&stdout, &stderr].into_iter().filter(|p| !p.is_empty()) {
        so_far.push_str(part);
        so_far.push('\n');
    }
    match open_output(&output_file, &so_far).await {
        Ok(file) => running.tee_to(file),
        // The command still runs and its notification still carries its output.
        Err(err) => tracing::warn!(%err, path = %output_file.display(), "background output file"),
    }
    tokio::spawn(async move {
        let ending = run_on(running, &cancel, max_output).await;
        // Unsent only when the task is gone: nobody is left to tell.
        let _ = done.send(ending);
    });
    // Only now: until the process was handed over, dropping this call would kill it.
    moving.done();
    let path = output_file.display();
    let text = format!(
        "The user moved this command to the background; it is still running as background \
         task {task_id}. Its output so far and everything it prints from now on goes to \
         {path}. You will receive a <task-notification> when it finishes: do not wait or poll \
         for it; carry on, or end your turn if there is nothing else to do. Use TaskOutput \
         with task_id {task_id} to read its output, or TaskStop to stop it."
    );
    Ok(ToolOutput::text(text).with_structured(json!({
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": false,
        "isImage": false,
        "noOutputExpected": false,
        "backgroundTaskId": task_id,
        "backgroundedByUser": true,
        "outputFile": output_file,
    })))
}

async fn open_output(path: &std::path::Path, so_far: &str) -> std::io::Result<tokio::fs::File> {
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await?;
    }
    let mut file = tokio::fs::File::create(path).await?;
    file.write_all(so_far.as_bytes()).await?;
    file.flush().await?;
    Ok(file)
}

/// Runs the command to its end (or until the task is stopped) and says how it ended.
async fn run_on(
    mut running: Running,
    cancel: &tokio_util::sync::CancellationToken,
    max_output: usize,
) -> ShellEnding {
    let lost = |err: std::io::Error| ShellEnding {
        status: ShellStatus::Failed,
        result: format!("Lost track of the bash process: {err}"),
        exit_code: None,
    };
    let (note, killed) = match running.run_until(cancel.cancelled(), LINGER).await {
        Ok(Ended::Exited) => (None, false),
        Ok(Ended::HeldOpen) => (Some(Note::HeldOpen), false),
        Ok(Ended::Stopped(())) => (None, true),
        Err(err) => return lost(err),
    };
    if note.is_some() || killed {
        if let Err(err) = running.stop_group(KILL_GRACE).await {
            return lost(err);
        }
    }
    let finished = running.finish();
    let code = exit_code(finished.status);
    let output = result(finished, note, max_output);
    let status = match (killed, output.is_error) {
        (true, _) => ShellStatus::Killed,
        (false, true) => ShellStatus::Failed,
        (false, false) => ShellStatus::Completed,
    };
    ShellEnding {
        status,
        result: output.content,
        exit_code: code,
    }
}
