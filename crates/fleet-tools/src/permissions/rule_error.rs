//! Why a permission rule could not be read: what is wrong with its text, and where it was
//! written. The messages say how to write it instead; settings loaders show them as they are.

use thiserror::Error;

/// A rule that does not parse, with the place it came from (a settings file, a flag).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{origin}: invalid permission rule `{rule}`: {problem}")]
pub struct RuleError {
    /// Where the rule was written.
    pub origin: String,
    pub rule: String,
    pub problem: RuleProblem,
}

/// What is wrong with a rule's text.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum RuleProblem {
    #[error("the rule is empty; write `Tool` or `Tool(specifier)`")]
    Empty,
    #[error("`)` without `(`; write `Tool(specifier)`")]
    UnopenedParenthesis,
    #[error("no tool name before `(`; write `Tool(specifier)`, e.g. `Bash(npm test)`")]
    NoToolName,
    #[error("missing `)` at the end; write `{tool}(specifier)`")]
    UnclosedParenthesis { tool: String },
    #[error(
        "`{tool}` is not a tool name (unexpected `{bad}`); tool names use letters, digits, `_` \
         and `-`"
    )]
    NotAToolName { tool: String, bad: char },
    /// `bash(ls)`: a built-in tool's name in the wrong case, which would never match.
    #[error("tool names are case-sensitive: write `{known}`")]
    WrongCase { known: &'static str },
    /// `Bash(:*)`.
    #[error("`:*` needs a command before it, as in `Bash(npm run test:*)`")]
    EmptyPrefix,
    /// `Read(~bob/x)`.
    #[error(
        "`~user` paths are not supported; write `~/path` for your own home folder or \
         `//absolute/path`"
    )]
    OtherUsersHome,
    /// The gitignore-style path pattern does not compile.
    #[error("not a valid path pattern: {source}")]
    PathPattern {
        #[source]
        source: PatternSyntax,
    },
}

/// A path pattern's syntax error, kept as text so rule errors stay comparable (`ignore`'s
/// error is neither `Clone` nor `PartialEq`).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct PatternSyntax(pub String);

impl From<ignore::Error> for RuleProblem {
    fn from(err: ignore::Error) -> Self {
        Self::PathPattern {
            source: PatternSyntax(err.to_string()),
        }
    }
}
