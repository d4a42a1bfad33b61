//! The Edit tool: replace one exact piece of text in a file the agent has read.
//!
//! Exact, unique matching is what makes an edit safe without line numbers that may have moved:
//! the model proves it knows the surrounding text. Failures therefore explain themselves (how
//! many matches and where, or where a near match is) so the next attempt can succeed.

pub(crate) mod patch;
mod replace;

use super::read::{blocking, format, path};
use super::write::{create, ensure_fresh, ensure_writable, existing, record_written};
use crate::file_state::{FileState, Seen};
use crate::workspace;
use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use fleet_protocol::{ChangeKind, ProposedChange};
use replace::{Applied, Mismatch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Files larger than this are not edited in memory; the model is sent to Bash instead.
const MAX_EDIT_BYTES: u64 = 32 * 1024 * 1024;
/// Unchanged lines shown around the edit in the reply.
const SNIPPET_CONTEXT: u64 = 4;
const MAX_SNIPPET_LINES: u64 = 40;
/// Lines of a near match quoted in a not-found error.
const MAX_NEAR_LINES: u64 = 20;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// Absolute path of the file to change.
    pub file_path: String,
    /// The exact text to replace, indentation included, without Read's line-number prefixes.
    /// Empty only to create a new file.
    pub old_string: String,
    /// The text to put in its place; must differ from old_string.
    pub new_string: String,
    /// Replace every occurrence of old_string instead of requiring it to be unique.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct EditTool;

impl TypedTool for EditTool {
    type Input = Input;
    const NAME: &'static str = "Edit";
    const READ_ONLY: bool = false;

    fn description(&self) -> String {
        "Replace text in a file: old_string becomes new_string.\n\
         - file_path must be absolute, and you must have Read the file first (it must not have \
         changed since).\n\
         - old_string must match the file exactly, whitespace and indentation included, and \
         must occur once: add surrounding lines until it is unique, or set replace_all to \
         change every occurrence (handy for renames).\n\
         - Never include the `<number><TAB>` prefixes Read puts before each line.\n\
         - Line endings follow the file: write `\\n` and a CRLF file stays CRLF.\n\
         - An empty old_string creates a file that does not exist yet."
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
        self.job(input, ctx, |job| job.propose().map(Some)).await
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.job(input, ctx, |job| job.run()).await
    }
}

impl EditTool {
    /// Checks what needs no file, then does `work` with the file off the async threads.
    async fn job<T: Send + 'static>(
        &self,
        input: Input,
        ctx: &ToolContext,
        work: impl FnOnce(&Job<'_>) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let given = path::require_absolute(&input.file_path, &ctx.cwd, path::Target::File)?;
        if input.old_string == input.new_string {
            return Err(ToolError::bad_value(
                "new_string",
                "old_string and new_string are the same, so there is nothing to change. Give \
                 the new text in new_string.",
            ));
        }
        let resolved = workspace::resolve(&given, &ctx.cwd);
        let files = ctx.files.clone();
        let cwd = ctx.cwd.clone();
        blocking(move || {
            let job = Job {
                given: &given,
                resolved: &resolved,
                cwd: &cwd,
                files: &files,
                input: &input,
            };
            work(&job)
        })
        .await
    }
}

struct Job<'a> {
    given: &'a Path,
    resolved: &'a Path,
    cwd: &'a Path,
    files: &'a FileState,
    input: &'a Input,
}

/// A finished edit, before rendering.
struct Done {
    original: String,
    applied: Applied,
}

/// An edit checked and worked out, not yet written.
enum Prepared {
    /// No file there: it is created holding `new_string`.
    Create,
    Update {
        /// The file's, kept by the rewrite.
        permissions: std::fs::Permissions,
        original: String,
        applied: Applied,
    },
}

impl Job<'_> {
    fn run(&self) -> Result<ToolOutput, ToolError> {
        match self.prepare()? {
            Prepared::Create => {
                create(self.given, self.resolved, &self.input.new_string)?;
                record_written(self.files, self.resolved, &self.input.new_string);
                Ok(self.created())
            }
            Prepared::Update {
                permissions,
                original,
                applied,
            } => {
                super::write::atomic::write_file(
                    self.resolved,
                    applied.content.as_bytes(),
                    Some(permissions),
                )
                .map_err(|err| ToolError::io("Could not write", self.given, err))?;
                record_written(self.files, self.resolved, &applied.content);
                Ok(self.render(&Done { original, applied }))
            }
        }
    }

    /// The change [`Job::run`] would make, checked the same way, nothing written.
    fn propose(&self) -> Result<ProposedChange, ToolError> {
        Ok(match self.prepare()? {
            Prepared::Create => {
                patch::proposed(self.given, ChangeKind::Create, "", &self.input.new_string)
            }
            Prepared::Update {
                original, applied, ..
            } => patch::proposed(self.given, ChangeKind::Update, &original, &applied.content),
        })
    }

    /// Every check the edit passes before anything is written, and the new text.
    fn prepare(&self) -> Result<Prepared, ToolError> {
        let Some(meta) = existing(self.given, self.resolved)? else {
            if !self.input.old_string.is_empty() {
                return Err(path::missing(self.given, self.resolved, self.cwd));
            }
            return Ok(Prepared::Create);
        };
        if meta.len() > MAX_EDIT_BYTES {
            return Err(ToolError::unsupported(
                self.given,
                format!(
                    "{} is {} MiB, too large to edit here (the limit is {} MiB). Use Bash (for \
                 example `sed -i`) instead.",
                    self.given.display(),
                    meta.len() / (1024 * 1024),
                    MAX_EDIT_BYTES / (1024 * 1024)
                ),
            ));
        }
        let bytes = super::regular_file::read_regular(self.resolved)
            .map_err(|err| ToolError::io("Could not read", self.given, err))?;
        let seen = Seen::of_bytes(Some(&meta), &bytes);
        ensure_fresh(self.files, self.given, self.resolved, &seen, "edit")?;
        ensure_writable(self.given, &meta)?;
        let original = String::from_utf8(bytes).map_err(|_| {
            ToolError::unsupported(
                self.given,
                format!(
                "{} is not valid UTF-8 text, so Edit cannot change it safely. Replace it whole \
                 with Write, or use Bash.",
                self.given.display()
            ),
            )
        })?;
        let applied = self.replace(&original)?;
        Ok(Prepared::Update {
            permissions: meta.permissions(),
            original,
            applied,
        })
    }

    fn replace(&self, original: &str) -> Result<Applied, ToolError> {
        let Input {
            old_string: old,
            new_string: new,
            replace_all,
            ..
        } = self.input;
        if old.is_empty() {
            if original.is_empty() {
                return Ok(Applied {
                    content: new.clone(),
                    count: 1,
                    first_at: 0,
                    first_len: new.len(),
                });
            }
            return Err(ToolError::bad_value(
                "old_string",
                format!(
                "old_string is empty, which only creates a new file (or fills an empty one), but \
                 {} already has content. Give the text to replace, or use Write to replace the \
                 whole file.",
                self.given.display()
            ),
            ));
        }
        replace::apply(original, old, new, *replace_all).map_err(|mismatch| match mismatch {
            Mismatch::NotFound => self.not_found(original),
            Mismatch::Many { count, offsets } => self.ambiguous(original, count, &offsets),
        })
    }

    fn not_found(&self, original: &str) -> ToolError {
        let old = &self.input.old_string;
        let mut message = format!(
            "old_string was not found in {}. It must match the file exactly, including \
             whitespace and indentation; Read the file again if unsure of its current text.",
            self.given.display()
        );
        if replace::has_line_number_prefixes(old) {
            message.push_str(
                " old_string seems to start its lines with the `<number><TAB>` prefixes Read \
                 shows; those are not part of the file, so leave them out.",
            );
        }
        if let Some(range) = replace::near_match(original, old) {
            let from = format::line_of(original, range.start);
            let to = format::line_of(original, range.end.saturating_sub(1));
            let (snippet, _) = format::snippet(original, from, to.min(from + MAX_NEAR_LINES - 1));
            message.push_str(&format!(
                " It does match lines {from}-{to} if whitespace and quote styles are ignored; \
                 copy the exact text from there:\n{snippet}"
            ));
        }
        ToolError::NoMatch {
            path: self.given.to_path_buf(),
            message,
        }
    }

    fn ambiguous(&self, original: &str, count: usize, offsets: &[usize]) -> ToolError {
        let lines: Vec<String> = offsets
            .iter()
            .map(|&at| format::line_of(original, at).to_string())
            .collect();
        let more = if count > offsets.len() { ", …" } else { "" };
        ToolError::Ambiguous {
            path: self.given.to_path_buf(),
            count,
            message: format!(
            "Found {count} matches of old_string in {} (at lines {}{more}), but replace_all is \
             false. Add surrounding lines to old_string so it matches exactly one place, or set \
             replace_all to true to change all {count}.",
            self.given.display(),
            lines.join(", ")
        ),
        }
    }

    fn created(&self) -> ToolOutput {
        ToolOutput::text(format!(
            "File created successfully at: {}",
            self.given.display()
        ))
        .with_structured(self.structured("", &self.input.new_string))
    }

    fn render(&self, done: &Done) -> ToolOutput {
        let applied = &done.applied;
        let start = format::line_of(&applied.content, applied.first_at);
        let end = format::line_of(
            &applied.content,
            (applied.first_at + applied.first_len).saturating_sub(1),
        )
        .max(start);
        let from = start.saturating_sub(SNIPPET_CONTEXT).max(1);
        let to = (end + SNIPPET_CONTEXT).min(from + MAX_SNIPPET_LINES - 1);
        let (snippet, to) = format::snippet(&applied.content, from, to);
        let shown = self.given.display();
        let head = if applied.count > 1 {
            format!(
                "The file {shown} has been updated: {} matches replaced. Around the first, \
                 lines {from}-{to} now read:",
                applied.count
            )
        } else {
            format!("The file {shown} has been updated. Lines {from}-{to} now read:")
        };
        let text = if snippet.is_empty() {
            format!("The file {shown} has been updated; it is now empty.")
        } else {
            format!("{head}\n{snippet}")
        };
        ToolOutput::text(text).with_structured(self.structured(&done.original, &applied.content))
    }

    fn structured(&self, original: &str, updated: &str) -> serde_json::Value {
        json!({
            "filePath": self.input.file_path,
            "oldString": self.input.old_string,
            "newString": self.input.new_string,
            "originalFile": original,
            "structuredPatch": patch::hunks(original, updated),
            "userModified": false,
            "replaceAll": self.input.replace_all,
        })
    }
}
