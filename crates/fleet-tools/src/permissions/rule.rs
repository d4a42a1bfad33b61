//! Permission rules: `Tool` or `Tool(specifier)`. (Stub: parsing and matching to be written.)

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    Allow,
    Ask,
    Deny,
}

/// One parsed rule and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub tool: String,
    pub specifier: Option<String>,
    /// The folder `/x` path specifiers are relative to: the folder holding the settings folder
    /// the rule came from (the project root for `.claude/settings.json`), or the cwd for rules
    /// from the command line.
    pub base: PathBuf,
    /// Where the rule was written, for messages: a settings file path or `--allowedTools`.
    pub source: String,
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{origin}: invalid permission rule `{rule}`: {message}")]
pub struct RuleError {
    /// Where the rule was written.
    pub origin: String,
    pub rule: String,
    pub message: String,
}

#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub allow: Vec<Rule>,
    pub ask: Vec<Rule>,
    pub deny: Vec<Rule>,
}

impl RuleSet {
    /// Parses `text` (`Bash(npm run *)`) and adds it to the list for `kind`.
    pub fn add(
        &mut self,
        _kind: RuleKind,
        _text: &str,
        _base: PathBuf,
        _source: &str,
    ) -> Result<(), RuleError> {
        Ok(())
    }
}
