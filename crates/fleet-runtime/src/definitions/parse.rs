//! One agent file: frontmatter fields into an [`AgentDefinition`]. (Stub.)

use super::{AgentDefinition, AgentSource, LoadWarning};
use std::path::Path;

/// Why a file is not an agent: which line, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ParseError {
    pub line: Option<usize>,
    pub message: String,
}

pub fn parse_agent_file(
    _text: &str,
    _path: &Path,
    _source: AgentSource,
) -> Result<(AgentDefinition, Vec<LoadWarning>), ParseError> {
    Err(ParseError {
        line: None,
        message: "not implemented".into(),
    })
}
