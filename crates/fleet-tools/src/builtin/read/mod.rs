//! The Read tool: a window of a text file as numbered lines.
//!
//! The file is streamed once (see [`scan`]) so a huge file costs time, not memory, and the
//! whole-file digest Write and Edit need to detect later changes comes out of the same pass.
//! The helpers for paths and for showing lines live here too and are shared with Write and
//! Edit.

pub(crate) mod format;
mod number;
pub(crate) mod path;
mod relative;
mod scan;

use super::regular_file::{open_regular, would_block, OpenError};
use crate::file_state::Seen;
use crate::workspace;
use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use scan::{Scan, ScanError, Stop, Window};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// Lines shown when the call gives no limit.
const DEFAULT_LIMIT: u64 = 2000;
/// Text shown by one call at most, whatever the limit: 2000 long lines would otherwise fill
/// much of a context window.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// Absolute path of the file to read.
    pub file_path: String,
    /// Line to start at, counting from 1. Use it with limit for files too long to read at once.
    #[serde(default, deserialize_with = "number::optional_u64")]
    pub offset: Option<u64>,
    /// How many lines to read (2000 when left out).
    #[serde(default, deserialize_with = "number::optional_u64")]
    pub limit: Option<u64>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct ReadTool;

impl TypedTool for ReadTool {
    type Input = Input;
    const NAME: &'static str = "Read";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        format!(
            "Read a text file. Returns its lines numbered as `<line number><TAB><text>`; the \
             number and tab are not part of the file.\n\
             - file_path must be absolute.\n\
             - Shows up to {DEFAULT_LIMIT} lines from the start unless you give offset (1-based \
             line) and limit; a note tells you the offset to continue from.\n\
             - Lines longer than {} characters are cut.\n\
             - Directories, images and binary files are refused: use Glob or Bash `ls` for \
             folders.\n\
             - Write and Edit only change a file you have read (and that has not changed since).\n\
             - Reading several files in one turn is fine.",
            format::MAX_LINE_CHARS
        )
    }

    fn access(&self, input: &Input, ctx: &ToolContext) -> Access {
        Access::Read(ctx.cwd.join(&input.file_path))
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let given = path::require_absolute(&input.file_path, &ctx.cwd, path::Target::File)?;
        if let Some(denial) = ctx.read_guard.denial(&given) {
            return Err(ToolError::ReadDenied {
                path: given,
                denial,
            });
        }
        let resolved = workspace::resolve(&given, &ctx.cwd);
        let window = Window {
            first_line: input.offset.unwrap_or(1).max(1),
            limit: match input.limit {
                Some(0) => {
                    return Err(ToolError::bad_value(
                        "limit",
                        "limit must be at least 1; leave it out to read up to 2000 lines.",
                    ))
                }
                Some(limit) => limit,
                None => DEFAULT_LIMIT,
            },
            budget_bytes: MAX_OUTPUT_BYTES,
        };
        let job = Job {
            given: given.clone(),
            resolved: resolved.clone(),
            cwd: ctx.cwd.clone(),
            cancel: ctx.cancel.clone(),
        };
        let (scan, seen) = blocking_until_cancelled(&ctx.cancel, move || job.run(window)).await?;
        ctx.files.record(&resolved, seen);
        Ok(render(&given, &input.file_path, window, &scan))
    }
}

/// Runs blocking file work off the async threads, within the process's cap on file jobs.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    super::file_jobs::run(work)
        .await
        .map_err(|err| ToolError::Internal {
            message: format!("The file operation stopped unexpectedly: {err}"),
            source: Some(Box::new(err)),
        })?
}

/// As [`blocking`], but gives up waiting when `cancel` fires: a read stuck in the kernel (a
/// hung network mount) must not hold the agent. The thread is left to finish on its own; the
/// binary does not wait for such threads when it exits.
pub(crate) async fn blocking_until_cancelled<T: Send + 'static>(
    cancel: &CancellationToken,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ToolError::Cancelled),
        done = blocking(work) => done,
    }
}

/// What the blocking part of one Read needs.
struct Job {
    given: PathBuf,
    resolved: PathBuf,
    cwd: PathBuf,
    cancel: CancellationToken,
}

impl Job {
    fn run(self, window: Window) -> Result<(Scan, Seen), ToolError> {
        let meta = match std::fs::metadata(&self.resolved) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(path::missing(&self.given, &self.resolved, &self.cwd))
            }
            Err(err) => return Err(ToolError::io("Could not read", &self.given, err)),
        };
        if meta.is_dir() {
            return Err(path::directory(&self.given));
        }
        if !meta.is_file() {
            return Err(path::not_regular(&self.given));
        }
        if let Some(kind) = path::binary_kind(&self.resolved) {
            return Err(path::binary(&self.given, Some(kind)));
        }
        let file = open_regular(&self.resolved).map_err(|err| match err {
            OpenError::NotRegular => path::not_regular(&self.given),
            OpenError::Io(err) => ToolError::io("Could not open", &self.given, err),
        })?;
        let scan = scan::scan(file, window, &self.cancel).map_err(|err| match err {
            ScanError::Binary => path::binary(&self.given, None),
            ScanError::Cancelled => ToolError::Cancelled,
            ScanError::Io(err) if would_block(&err) => path::would_block(&self.given),
            ScanError::Io(err) => ToolError::io("Could not read", &self.given, err),
        })?;
        let seen = Seen {
            modified: meta.modified().ok(),
            len: scan.len,
            hash: scan.hash,
        };
        Ok((scan, seen))
    }
}

/// The text the model reads and the structured copy for printers.
fn render(given: &Path, file_path: &str, window: Window, scan: &Scan) -> ToolOutput {
    let shown = given.display();
    let total = scan.total_lines;
    let first = window.first_line;
    let content = if total == 0 {
        format!("The file {shown} exists but is empty.")
    } else if first > total {
        format!(
            "The file {shown} has {total} lines, so offset {first} is past its end. Use an \
             offset of at most {total}."
        )
    } else {
        let mut text = format::numbered(scan.lines.iter().map(String::as_str), first);
        let last = first + scan.lines.len() as u64 - 1;
        if last < total {
            let next = last + 1;
            let note = match scan.stop {
                Stop::Budget => format!(
                    "[Stopped after line {last} of {total} to keep this output under {} KiB. \
                     Call Read with offset={next} to continue; a smaller limit helps with long \
                     lines.]",
                    MAX_OUTPUT_BYTES / 1024
                ),
                Stop::LimitOrEnd => format!(
                    "[Showing lines {first}-{last} of {total}. Call Read with offset={next} to \
                     read on.]"
                ),
            };
            text.push_str("\n\n");
            text.push_str(&note);
        }
        text
    };
    let structured = json!({
        "type": "text",
        "file": {
            "filePath": file_path,
            "content": scan.lines.join("\n"),
            "numLines": scan.lines.len(),
            "startLine": first,
            "totalLines": total,
        }
    });
    ToolOutput::text(content).with_structured(structured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stuck_blocking_read_gives_way_to_cancellation() {
        let cancel = CancellationToken::new();
        let (_never, stuck) = std::sync::mpsc::channel::<()>();
        let waiting = blocking_until_cancelled(&cancel, move || {
            // Stands for a read the kernel never completes.
            let _ = stuck.recv();
            Ok(())
        });
        cancel.cancel();
        assert!(matches!(waiting.await, Err(ToolError::Cancelled)));
    }
}
