//! The Grep tool: search file contents with a regex, built on ripgrep's own crates so that it
//! behaves like `rg --hidden` (same ignore rules, file types, binary detection and regex
//! engine) without a subprocess.
//!
//! Results are deterministic, unlike `rg`'s parallel output: files_with_matches lists files
//! most recently modified first (ties by path) because recent files are the likely subject of
//! the task; content and count list files by path. A file given as `path` is searched even if
//! `glob` or `type` would skip it.

mod render;
mod search;
pub(crate) mod walk;

use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{FileTypeDef, Types, TypesBuilder};
use render::Report;
use schemars::JsonSchema;
use search::Search;
use serde::Deserialize;
use std::path::Path;
use std::time::Instant;

pub use render::MAX_OUTPUT_CHARS;
pub use search::MAX_LINE_CHARS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines, as `path:line:text`.
    Content,
    /// Paths of files that match, most recently modified first.
    #[default]
    FilesWithMatches,
    /// Matching lines per file, as `path:count`.
    Count,
}

impl OutputMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Content => "content",
            Self::FilesWithMatches => "files_with_matches",
            Self::Count => "count",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// Regular expression to search for (Rust regex syntax, as in ripgrep).
    pub pattern: String,
    /// File or folder to search, absolute or relative to the working directory. Defaults to
    /// the working directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files whose name matches this glob, e.g. "*.js", "*.{ts,tsx}",
    /// "src/**/*.rs"; several globs may be separated by spaces or commas, "!" excludes.
    #[serde(default)]
    pub glob: Option<String>,
    /// Only search files of this ripgrep file type, e.g. "rust", "py", "js", "go", "java".
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    /// "content" shows matching lines, "files_with_matches" (default) lists file paths,
    /// "count" gives matching lines per file.
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Case-insensitive search.
    #[serde(default, rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers (content mode only; default true).
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (content mode only).
    #[serde(default, rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode only).
    #[serde(default, rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode only).
    #[serde(default, rename = "-C")]
    pub context: Option<usize>,
    /// Let the pattern span lines; `.` then matches newlines too.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// Keep only the first N entries (lines, files or counts, by mode); 0 means no limit.
    #[serde(default)]
    pub head_limit: Option<usize>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct GrepTool;

impl TypedTool for GrepTool {
    type Input = Input;
    const NAME: &'static str = "Grep";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Search file contents with a regular expression; fast on codebases of any size.\n\
         - `pattern` is a Rust/ripgrep regex (\"log.*Error\", \"fn\\s+\\w+\"). Escape literal \
         braces and parentheses: \"interface\\{\\}\" finds `interface{}`.\n\
         - Narrow the files with `glob` (\"*.js\", \"*.{ts,tsx}\") or `type` (a ripgrep file \
         type such as rust, py, js, go).\n\
         - output_mode: \"files_with_matches\" (default) lists paths, most recently modified \
         first; \"content\" shows matching lines as path:line:text, with -A/-B/-C context and \
         -n line numbers (on by default); \"count\" gives matching lines per file.\n\
         - \"-i\": true ignores case; multiline: true lets a match span lines (`.` matches \
         newlines); head_limit keeps the first N lines or files.\n\
         - Honours .gitignore and .ignore, searches hidden files, skips binary files.\n\
         - Use this tool for content search rather than grep or rg through Bash."
            .to_string()
    }

    fn access(&self, input: &Input, ctx: &ToolContext) -> Access {
        Access::Read(walk::absolute_path(input.path.as_deref(), &ctx.cwd))
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let search = plan(&input, &ctx.cwd)?;
        walk::check_root(&ctx.read_guard, &search.root)?;
        let (mode, context) = (search.mode, search.before > 0 || search.after > 0);
        let cwd = ctx.cwd.clone();
        let guard = ctx.read_guard.clone();
        let hits = walk::run_blocking(ctx, move |stop| Ok(search.run(&cwd, &guard, &stop))).await?;
        let report = Report {
            hits,
            mode,
            head_limit: input.head_limit.filter(|&n| n > 0),
            context: context && mode == OutputMode::Content,
            elapsed: started.elapsed(),
        };
        let (text, structured) = report.render();
        Ok(ToolOutput::text(text).with_structured(structured))
    }
}

/// Checks the input and builds everything the search needs, so that every mistake is
/// reported before any file is read.
fn plan(input: &Input, cwd: &Path) -> Result<Search, ToolError> {
    let root = walk::absolute_path(input.path.as_deref(), cwd);
    let meta = std::fs::metadata(&root).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ToolError::not_found(
            &root,
            format!(
            "Path does not exist: {}.{} Give an existing file or folder as path, or leave path \
             out to search the working directory.",
            root.display(),
            walk::did_you_mean(&root)
        ),
        ),
        _ => ToolError::io("Cannot search", &root, err),
    })?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(ToolError::unsupported(
            &root,
            format!(
                "{} is not a regular file or folder (it is a device, pipe or socket); Grep only \
             searches files, which it reads without waiting on anything.",
                root.display()
            ),
        ));
    }
    let multiline = input.multiline.unwrap_or(false);
    let overrides = match input.glob.as_deref().map(str::trim) {
        Some(glob) if !glob.is_empty() => Some(glob_filter(&root, glob)?),
        _ => None,
    };
    let types = match input.file_type.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => Some(type_filter(name)?),
        _ => None,
    };
    Ok(Search {
        single_file: !meta.is_dir(),
        root,
        matcher: matcher(
            &input.pattern,
            input.case_insensitive.unwrap_or(false),
            multiline,
        )?,
        mode: input.output_mode.unwrap_or_default(),
        line_numbers: input.line_numbers.unwrap_or(true),
        before: input.before.or(input.context).unwrap_or(0),
        after: input.after.or(input.context).unwrap_or(0),
        multiline,
        overrides,
        types,
    })
}

/// The regex as `rg` builds it: `^`/`$` match at line boundaries; outside multiline mode the
/// matcher knows lines end at `\n`, which lets the searcher scan whole buffers at once.
fn matcher(
    pattern: &str,
    case_insensitive: bool,
    multiline: bool,
) -> Result<RegexMatcher, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::bad_value(
            "pattern",
            "The pattern is empty. Give a regular expression to search for.",
        ));
    }
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .dot_matches_new_line(multiline);
    if !multiline {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|err| {
        let hint = match err.kind() {
            grep_regex::ErrorKind::NotAllowed(_) => "Set multiline: true to match across lines.",
            _ => {
                "The pattern is Rust regex syntax: escape characters such as ( ) [ ] { } . * + ? \
                 with a backslash to match them literally."
            }
        };
        let message = format!("Invalid regex \"{pattern}\": {err}\n{hint}");
        ToolError::bad_value_from("pattern", message, err)
    })
}

/// `glob` as ripgrep's `-g` flags: several globs split on spaces or on commas outside braces.
fn glob_filter(root: &Path, glob: &str) -> Result<Override, ToolError> {
    let mut builder = OverrideBuilder::new(root);
    for one in split_globs(glob) {
        builder.add(one).map_err(|err| {
            let message = format!(
                "Invalid glob \"{one}\": {err}. Use a pattern such as \"*.rs\" or \"*.{{ts,tsx}}\"."
            );
            ToolError::bad_value_from("glob", message, err)
        })?;
    }
    builder.build().map_err(|err| {
        let message = format!("Invalid glob \"{glob}\": {err}");
        ToolError::bad_value_from("glob", message, err)
    })
}

fn split_globs(glob: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (index, ch) in glob.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                parts.push(&glob[start..index]);
                start = index + ch.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&glob[start..]);
    parts.retain(|part| !part.is_empty());
    parts
}

/// ripgrep's built-in file types; `names` may list several, separated by commas or spaces.
fn type_filter(names: &str) -> Result<Types, ToolError> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known = builder.definitions();
    for name in names.split([',', ' ']).filter(|n| !n.is_empty()) {
        if !known.iter().any(|def| def.name() == name) {
            return Err(unknown_type(name, &known));
        }
        builder.select(name);
    }
    builder.build().map_err(|err| {
        let message = format!("Invalid file type \"{names}\": {err}");
        ToolError::bad_value_from("type", message, err)
    })
}

fn unknown_type(name: &str, known: &[FileTypeDef]) -> ToolError {
    let extension = format!("*.{}", name.trim_start_matches('.'));
    let guess = known
        .iter()
        .find(|def| def.globs().iter().any(|g| g == &extension))
        .map(|def| format!(" Did you mean \"{}\" ({extension})?", def.name()))
        .unwrap_or_default();
    ToolError::bad_value(
        "type",
        format!(
            "Unknown file type \"{name}\".{guess} `type` takes a ripgrep type name such as rust, \
         py, js, ts, go, java, c, cpp, md, json, toml or yaml; to filter by file name use glob \
         instead, e.g. \"{extension}\"."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_outside_braces_only() {
        assert_eq!(split_globs("*.{ts,tsx}"), vec!["*.{ts,tsx}"]);
        assert_eq!(split_globs("*.rs, *.toml"), vec!["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.js !*.min.js"), vec!["*.js", "!*.min.js"]);
    }
}
