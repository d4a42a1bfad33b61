//! The Write tool: create a file, or replace one the agent has read and that is unchanged
//! since. The must-have-read rule keeps an agent from clobbering text it never saw (a user's
//! edit, a formatter's rewrite); the guard for it is shared with Edit.

pub(crate) mod atomic;

use super::edit::patch::{self, Hunk};
use super::read::{blocking, format, path};
use crate::file_state::{FileState, Freshness, Seen};
use crate::workspace;
use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use fleet_protocol::{ChangeKind, ProposedChange, Unshown};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::fs::Metadata;
use std::path::Path;

/// Replaced files up to this size are kept in memory to report what changed; larger ones are
/// only hashed.
const MAX_DIFF_BYTES: u64 = 8 * 1024 * 1024;
/// Lines of the changed region shown after an update.
const MAX_SNIPPET_LINES: u64 = 40;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// Absolute path of the file to write.
    pub file_path: String,
    /// The complete new content of the file.
    pub content: String,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct WriteTool;

impl TypedTool for WriteTool {
    type Input = Input;
    const NAME: &'static str = "Write";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Write a whole file, creating it or replacing what it holds.\n\
         - file_path must be absolute. Missing parent folders are created.\n\
         - To replace an existing file you must have Read it first, and it must not have \
         changed since; otherwise Read it again before writing.\n\
         - To change part of an existing file, prefer Edit: it sends only the change.\n\
         - The content is written exactly as given, atomically, keeping the file's permissions."
            .into()
    }

    fn access(&self, input: &Input, ctx: &ToolContext) -> Access {
        Access::Write(ctx.cwd.join(&input.file_path))
    }

    async fn propose(
        &self,
        input: Input,
        ctx: &ToolContext,
    ) -> Result<Option<ProposedChange>, ToolError> {
        let given = path::require_absolute(&input.file_path, &ctx.cwd, path::Target::Parent)?;
        let resolved = workspace::resolve(&given, &ctx.cwd);
        let files = ctx.files.clone();
        blocking(move || {
            let change = match prepare(&given, &resolved, &files)? {
                Prepared::Create => patch::proposed(&given, ChangeKind::Create, "", &input.content),
                Prepared::Update {
                    original: Ok(original),
                    ..
                } => patch::proposed(&given, ChangeKind::Update, &original, &input.content),
                Prepared::Update {
                    original: Err(unshown),
                    ..
                } => ProposedChange {
                    path: given.clone(),
                    kind: ChangeKind::Update,
                    hunks: Vec::new(),
                    unshown: Some(unshown),
                },
            };
            Ok(Some(change))
        })
        .await
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let given = path::require_absolute(&input.file_path, &ctx.cwd, path::Target::Parent)?;
        let resolved = workspace::resolve(&given, &ctx.cwd);
        let files = ctx.files.clone();
        let content = input.content;
        let (outcome, content) = blocking({
            let (given, resolved) = (given.clone(), resolved.clone());
            move || write(&given, &resolved, &files, &content).map(|outcome| (outcome, content))
        })
        .await?;
        Ok(render(&given, &input.file_path, &content, &outcome))
    }
}

/// What a write replaced.
#[derive(Debug)]
enum Outcome {
    Created,
    /// The old text, when it was small enough and valid UTF-8 to diff against.
    Updated {
        original: Option<String>,
    },
}

/// A write checked, not yet done.
enum Prepared {
    Create,
    Update {
        /// The file's, kept by the rewrite.
        permissions: std::fs::Permissions,
        /// The old text to diff against, or why there is none.
        original: Result<String, Unshown>,
    },
}

/// Every check a write passes before anything is written: a file there must have been read
/// and be unchanged since, and be writable.
fn prepare(given: &Path, resolved: &Path, files: &FileState) -> Result<Prepared, ToolError> {
    let Some(meta) = existing(given, resolved)? else {
        return Ok(Prepared::Create);
    };
    let original = if meta.len() <= MAX_DIFF_BYTES {
        let bytes = super::regular_file::read_regular(resolved)
            .map_err(|err| ToolError::io("Could not read", given, err))?;
        ensure_fresh(
            files,
            given,
            resolved,
            &Seen::of_bytes(Some(&meta), &bytes),
            "write",
        )?;
        String::from_utf8(bytes).map_err(|_| Unshown::NotText)
    } else {
        let seen =
            Seen::of_file(resolved).map_err(|err| ToolError::io("Could not read", given, err))?;
        ensure_fresh(files, given, resolved, &seen, "write")?;
        Err(Unshown::TooLarge)
    };
    ensure_writable(given, &meta)?;
    Ok(Prepared::Update {
        permissions: meta.permissions(),
        original,
    })
}

fn write(
    given: &Path,
    resolved: &Path,
    files: &FileState,
    content: &str,
) -> Result<Outcome, ToolError> {
    let outcome = match prepare(given, resolved, files)? {
        Prepared::Update {
            permissions,
            original,
        } => {
            atomic::write_file(resolved, content.as_bytes(), Some(permissions))
                .map_err(|err| ToolError::io("Could not write", given, err))?;
            Outcome::Updated {
                original: original.ok(),
            }
        }
        Prepared::Create => {
            create(given, resolved, content)?;
            Outcome::Created
        }
    };
    record_written(files, resolved, content);
    Ok(outcome)
}

/// The metadata of the file at `resolved`, `None` if there is none; folders and other
/// non-files are refused.
pub(crate) fn existing(given: &Path, resolved: &Path) -> Result<Option<Metadata>, ToolError> {
    match std::fs::metadata(resolved) {
        Ok(meta) if meta.is_dir() => Err(path::directory(given)),
        Ok(meta) if !meta.is_file() => Err(path::not_regular(given)),
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(ToolError::io("Could not inspect", given, err)),
    }
}

/// Creates a new file (and its missing folders) holding `content`.
pub(crate) fn create(given: &Path, resolved: &Path, content: &str) -> Result<(), ToolError> {
    if let Some(parent) = resolved.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| ToolError::io("Could not create the folder for", given, err))?;
    }
    atomic::write_file(resolved, content.as_bytes(), None)
        .map_err(|err| ToolError::io("Could not write", given, err))
}

/// Refuses to change a file the agent has not read, or that changed since it read it.
/// `verb` names the attempted change in the message ("write", "edit").
pub(crate) fn ensure_fresh(
    files: &FileState,
    given: &Path,
    resolved: &Path,
    current: &Seen,
    verb: &str,
) -> Result<(), ToolError> {
    let shown = given.display();
    match files.freshness(resolved, current) {
        Freshness::Fresh => Ok(()),
        Freshness::Unread => Err(ToolError::stale(
            given,
            format!(
                "{shown} already exists and you have not read it. Read it first, then {verb} it."
            ),
        )),
        Freshness::Changed => Err(ToolError::stale(
            given,
            format!(
                "{shown} has changed on disk since you last read it (the user, a formatter or \
             another command may have changed it). Read it again, then {verb} it."
            ),
        )),
    }
}

/// A read-only file stays protected: replacing it by rename would otherwise succeed.
pub(crate) fn ensure_writable(given: &Path, meta: &Metadata) -> Result<(), ToolError> {
    if meta.permissions().readonly() {
        return Err(ToolError::NotWritable {
            path: given.to_path_buf(),
            message: format!(
                "{} is read-only. Change its permissions first (Bash `chmod u+w`) if it is meant \
                 to be changed.",
                given.display()
            ),
        });
    }
    Ok(())
}

/// After a write the agent has seen what it wrote: a following Write or Edit needs no Read.
pub(crate) fn record_written(files: &FileState, resolved: &Path, content: &str) {
    let meta = std::fs::metadata(resolved).ok();
    files.record(resolved, Seen::of_bytes(meta.as_ref(), content.as_bytes()));
}

fn render(given: &Path, file_path: &str, content: &str, outcome: &Outcome) -> ToolOutput {
    let shown = given.display();
    match outcome {
        Outcome::Created => ToolOutput::text(format!("File created successfully at: {shown}"))
            .with_structured(json!({
                "type": "create",
                "filePath": file_path,
                "content": content,
                "structuredPatch": [],
                "originalFile": null,
            })),
        Outcome::Updated { original } => {
            let hunks = original
                .as_deref()
                .map(|old| patch::hunks(old, content))
                .unwrap_or_default();
            let text = format!(
                "The file {shown} has been updated.{}",
                describe_change(content, original.is_some(), &hunks)
            );
            ToolOutput::text(text).with_structured(json!({
                "type": "update",
                "filePath": file_path,
                "content": content,
                "structuredPatch": hunks,
                "originalFile": original,
            }))
        }
    }
}

/// The first changed region of the new content, numbered, for the model to check.
fn describe_change(content: &str, diffed: bool, hunks: &[Hunk]) -> String {
    let Some(first) = hunks.first() else {
        return if diffed {
            " Its content is unchanged.".into()
        } else {
            String::new()
        };
    };
    let from = first.new_start as u64;
    let to = (from + first.new_lines as u64).saturating_sub(1);
    if to < from {
        return " It is now empty.".into();
    }
    let to = to.min(from + MAX_SNIPPET_LINES - 1);
    let more = if hunks.len() > 1 {
        format!(" ({} changed regions; the first is shown)", hunks.len())
    } else {
        String::new()
    };
    let (snippet, to) = format::snippet(content, from, to);
    format!(" Lines {from}-{to}{more}:\n{snippet}")
}
