//! Slash commands: the built-in ones and the person's own from `.claude/commands/*.md` and
//! `~/.claude/commands/*.md`, whose text becomes the prompt with `$ARGUMENTS` filled in.
//!
//! PLACEHOLDER (skeleton).

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSource {
    Builtin,
    /// A Markdown file; its body is the prompt.
    Custom(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// Without the slash; a custom command in a subfolder is `folder:name`.
    pub name: String,
    pub description: String,
    /// Shown after the name in completion (`[instructions]`).
    pub argument_hint: String,
    pub source: CommandSource,
}

/// The built-in commands, in the order `/help` lists them.
pub fn builtin() -> Vec<CommandInfo> {
    Vec::new()
}

/// Custom commands of the project (`<cwd>/.claude/commands`) and the user
/// (`<home>/.claude/commands`); a project command wins a clash.
pub fn load_custom(cwd: &Path, home: Option<&Path>) -> Vec<CommandInfo> {
    let _ = (cwd, home);
    Vec::new()
}

/// A custom command's prompt: its body (frontmatter removed) with `$ARGUMENTS` replaced.
pub fn expand(path: &Path, arguments: &str) -> std::io::Result<String> {
    let body = std::fs::read_to_string(path)?;
    Ok(body.replace("$ARGUMENTS", arguments))
}
