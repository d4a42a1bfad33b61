//! The Glob tool: find files by path pattern, newest first.
//!
//! The pattern is matched against each file's path relative to the search folder with
//! `literal_separator` on, so `*` never crosses a `/`: `*.toml` is top-level only and `**/`
//! reaches any depth, as in a shell. Which files exist at all is decided by the walker shared
//! with Grep (see [`super::grep::walk`]): ignore files respected, hidden files included, VCS
//! folders skipped. A literal leading part of the pattern (`src/` in `src/**/mod.rs`) becomes
//! the folder walked, and a pattern without `**` bounds the walk's depth, so narrow patterns
//! stay cheap on big trees. Naming an ignored folder that way searches it, as `rg` does for a
//! folder given explicitly.

use super::grep::walk::{self, Collector, StopFlag};
use crate::permissions::ReadGuard;
use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

/// At most this many paths are returned; the model is told to narrow the search for more.
pub const MAX_RESULTS: usize = 100;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    /// Glob pattern matched against paths relative to the search folder, e.g. "**/*.rs",
    /// "src/**/mod.rs", "*.toml" (top level only), "**/*.{ts,tsx}".
    pub pattern: String,
    /// Folder to search, absolute or relative to the working directory. Omit it to search the
    /// working directory.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct GlobTool;

impl TypedTool for GlobTool {
    type Input = Input;
    const NAME: &'static str = "Glob";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        format!(
            "Find files whose path matches a glob pattern, in any size of codebase.\n\
             - The pattern is matched against each file's path relative to `path` (default: the \
             working directory). `*` and `?` stay within one folder, `**/` spans any number of \
             folders, `{{a,b}}` and `[abc]` work: \"**/*.rs\" finds Rust files anywhere, \
             \"*.toml\" only at the top level, \"src/**/mod.rs\" under src/.\n\
             - Honours .gitignore and .ignore files, includes hidden files, skips .git.\n\
             - Returns absolute paths, most recently modified first, at most {MAX_RESULTS}.\n\
             - To search inside files use Grep; for open-ended exploration that needs several \
             rounds of searching, delegate to an agent."
        )
    }

    fn access(&self, input: &Input, ctx: &ToolContext) -> Access {
        Access::Read(Plan::root_of(input, &ctx.cwd))
    }

    async fn run(&self, input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let plan = Plan::new(&input, &ctx.cwd)?;
        walk::check_root(&ctx.read_guard, &plan.walk_root)?;
        let cwd = ctx.cwd.clone();
        let guard = ctx.read_guard.clone();
        let mut found =
            walk::run_blocking(ctx, move |stop| Ok(plan.find(&cwd, &guard, &stop))).await?;
        Ok(render(&mut found, started))
    }
}

/// A validated pattern and where to walk for it.
struct Plan {
    /// The folder walked: `path` plus the pattern's literal leading folders.
    walk_root: PathBuf,
    /// The rest of the pattern, matched against paths relative to `walk_root`.
    matcher: GlobMatcher,
    /// `Some(n)` when the pattern has no `**` and so cannot match deeper than `n` levels.
    max_depth: Option<usize>,
}

impl Plan {
    fn new(input: &Input, cwd: &Path) -> Result<Self, ToolError> {
        let pattern = input.pattern.trim();
        if pattern.is_empty() {
            return Err(ToolError::bad_value(
                "pattern",
                "The glob pattern is empty. Give one such as \"**/*.rs\" or \"src/**/*.ts\".",
            ));
        }
        let root = walk::absolute_path(input.path.as_deref(), cwd);
        if !Path::new(pattern).is_absolute() {
            check_folder(&root)?;
        }
        let split = Split::of(pattern, &root);
        let matcher = GlobBuilder::new(&split.rest)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| {
                let message = format!(
                    "Invalid glob pattern \"{pattern}\": {}. Check that brackets and braces \
                     are closed, e.g. \"**/*.{{ts,tsx}}\".",
                    err.kind()
                );
                ToolError::bad_value_from("pattern", message, err)
            })?
            .compile_matcher();
        let max_depth = (!split.rest.contains("**")).then(|| split.rest.split('/').count());
        Ok(Self {
            walk_root: split.walk_root,
            matcher,
            max_depth,
        })
    }

    /// The folder a call would read, for the permission check; never fails.
    fn root_of(input: &Input, cwd: &Path) -> PathBuf {
        let root = walk::absolute_path(input.path.as_deref(), cwd);
        Split::of(input.pattern.trim(), &root).walk_root
    }

    /// Every matching file with its modification time, in walk order.
    fn find(
        &self,
        cwd: &Path,
        guard: &Arc<ReadGuard>,
        stop: &StopFlag,
    ) -> Vec<(PathBuf, SystemTime)> {
        if !self.walk_root.is_dir() {
            return Vec::new();
        }
        let shared = Mutex::new(Vec::new());
        walk::walker(&self.walk_root, cwd, guard)
            .max_depth(self.max_depth)
            .build_parallel()
            .run(|| {
                let mut found = Collector::new(&shared);
                Box::new(move |entry| {
                    if stop.is_set() {
                        return WalkState::Quit;
                    }
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return WalkState::Continue;
                    }
                    let relative = entry
                        .path()
                        .strip_prefix(&self.walk_root)
                        .unwrap_or(entry.path());
                    if self.matcher.is_match(relative) {
                        let modified = entry
                            .metadata()
                            .ok()
                            .and_then(|m| m.modified().ok())
                            .unwrap_or(SystemTime::UNIX_EPOCH);
                        found.local.push((entry.into_path(), modified));
                    }
                    WalkState::Continue
                })
            });
        walk::into_results(shared)
    }
}

/// A pattern cut into the folders it names literally and the part that needs matching.
struct Split {
    walk_root: PathBuf,
    rest: String,
}

impl Split {
    /// An absolute pattern brings its own root; a relative one starts at `root`. The last
    /// component always stays in `rest`, so the walk root is a folder even for a literal
    /// pattern such as "Cargo.toml".
    fn of(pattern: &str, root: &Path) -> Self {
        let pattern = pattern.trim_start_matches("./");
        let (base, relative) = match pattern.strip_prefix('/') {
            Some(stripped) => (PathBuf::from("/"), stripped),
            None => (root.to_path_buf(), pattern),
        };
        let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
        let literal = parts
            .iter()
            .take(parts.len().saturating_sub(1))
            .take_while(|part| !has_glob_syntax(part))
            .count();
        let walk_root = walk::normalize(&parts[..literal].iter().fold(base, |dir, p| dir.join(p)));
        Self {
            walk_root,
            rest: parts[literal..].join("/"),
        }
    }
}

fn has_glob_syntax(part: &str) -> bool {
    part.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

fn check_folder(root: &Path) -> Result<(), ToolError> {
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(ToolError::unsupported(
            root,
            format!(
                "Path is not a folder: {}. Glob searches inside a folder; give its parent folder \
             as path, or use Read to read this file.",
                root.display()
            ),
        )),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(ToolError::not_found(
            root,
            format!(
                "Folder does not exist: {}.{} Give an existing folder as path, or leave path \
                 out to search the working directory.",
                root.display(),
                walk::did_you_mean(root)
            ),
        )),
        Err(err) => Err(ToolError::io("Cannot search", root, err)),
    }
}

/// Newest first (ties by path, for a stable answer), capped, with a note when capped.
fn render(found: &mut Vec<(PathBuf, SystemTime)>, started: Instant) -> ToolOutput {
    found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = found.len();
    let truncated = total > MAX_RESULTS;
    found.truncate(MAX_RESULTS);
    let filenames: Vec<String> = found
        .iter()
        .map(|(path, _)| path.to_string_lossy().into_owned())
        .collect();
    let mut content = if filenames.is_empty() {
        "No files found".to_string()
    } else {
        filenames.join("\n")
    };
    if truncated {
        content.push_str(&format!(
            "\n(Results are truncated: showing the {MAX_RESULTS} most recently modified of \
             {total} matching files. Use a more specific pattern or path to see the rest.)"
        ));
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    ToolOutput::text(content).with_structured(json!({
        "filenames": filenames,
        "durationMs": duration_ms,
        "numFiles": filenames.len(),
        "truncated": truncated,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pattern: &str) -> (String, String) {
        let s = Split::of(pattern, Path::new("/r"));
        (s.walk_root.display().to_string(), s.rest)
    }

    #[test]
    fn literal_leading_folders_become_the_walk_root() {
        assert_eq!(
            split("src/**/mod.rs"),
            ("/r/src".into(), "**/mod.rs".into())
        );
        assert_eq!(split("./a/b/*.rs"), ("/r/a/b".into(), "*.rs".into()));
        assert_eq!(split("Cargo.toml"), ("/r".into(), "Cargo.toml".into()));
        assert_eq!(split("**/*.rs"), ("/r".into(), "**/*.rs".into()));
        assert_eq!(split("/etc/*.conf"), ("/etc".into(), "*.conf".into()));
        assert_eq!(split("../x/*"), ("/x".into(), "*".into()));
        assert_eq!(split("{a,b}/c/*"), ("/r".into(), "{a,b}/c/*".into()));
    }
}
