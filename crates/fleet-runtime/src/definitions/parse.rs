//! One agent file: frontmatter fields into an [`AgentDefinition`], the body as its prompt.

use super::fields::{build, Issue};
use super::frontmatter::{read_fields, split};
use super::{AgentDefinition, AgentSource, LoadWarning};
use std::path::Path;

/// Why a file (or a `--agents` entry) is not an agent: which line, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ParseError {
    /// 1-based line in the file (or in the `--agents` JSON), when there is one to point at.
    pub line: Option<usize>,
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }

    pub(crate) fn at(line: usize, message: impl Into<String>) -> Self {
        Self::new(Some(line), message)
    }
}

/// Parses the text of one agent file. `path` is only used to name the file in warnings.
///
/// Fields that are unknown or badly written come back as warnings (with the file's line
/// numbers); only a missing frontmatter, a missing or empty `name`/`description` or an empty
/// prompt make the file fail.
pub fn parse_agent_file(
    text: &str,
    path: &Path,
    source: AgentSource,
) -> Result<(AgentDefinition, Vec<LoadWarning>), ParseError> {
    let split = split(text)?;
    let fields = read_fields(&split.lines);
    let (def, issues) = build(fields, split.body.clone(), source, Some(split.opening_line))?;
    if split.body.is_empty() {
        return Err(ParseError::at(
            split.closing_line,
            "the prompt is empty; write the agent's system prompt below this closing `---`",
        ));
    }
    let warnings = issues
        .into_iter()
        .map(|Issue { line, message }| LoadWarning {
            path: Some(path.to_path_buf()),
            line,
            message,
        })
        .collect();
    Ok((def, warnings))
}
