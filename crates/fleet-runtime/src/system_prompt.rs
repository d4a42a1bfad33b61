//! The system prompt: the agent's own prompt, then what it needs to know about where it runs
//! (working directory, platform, date, git state) and the project's instructions
//! (`CLAUDE.md` / `AGENTS.md` files).
//!
//! The agent prompt is the first block and changes least, the environment second, so a
//! conversation's prompt-cache prefix survives as long as possible.

use std::path::{Path, PathBuf};
use std::process::Command;

/// fleet's own prompt for the main agent, used unless `--system-prompt` replaces it.
pub const DEFAULT_PROMPT: &str = "\
You are fleet, an agent that works on software projects from the command line. You act through \
tools: read files before you change them, prefer the dedicated file and search tools over shell \
equivalents, and keep changes to what the task needs. Run commands to check your work when that \
is cheap. When a tool fails, read the error and adjust instead of repeating the same call. Paths \
given to file tools are absolute. Answer concisely; when you are done, say what you changed and \
what you verified.";

/// Instruction files read in each folder, in this order.
const INSTRUCTION_FILES: [&str; 3] = ["CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"];
/// Each instruction file is cut at this size so a huge file cannot crowd out the conversation.
const MAX_INSTRUCTION_BYTES: usize = 40_000;
/// Lines of `git status --short` shown before a summary line.
const MAX_STATUS_LINES: usize = 40;

/// Facts about the place the agent works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    pub cwd: PathBuf,
    pub platform: String,
    pub date: String,
    /// The repository root, when `cwd` is inside a git work tree.
    pub git_root: Option<PathBuf>,
    pub branch: Option<String>,
    pub status: Option<String>,
}

impl Environment {
    /// Looks at `cwd` with the real `git` command line; a missing git just means "not a repo".
    pub fn detect(cwd: &Path) -> Self {
        let git_root = git(cwd, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
        let (branch, status) = if git_root.is_some() {
            let branch = git(cwd, &["rev-parse", "--abbrev-ref", "HEAD"])
                .or_else(|| git(cwd, &["symbolic-ref", "--short", "HEAD"]));
            let status = git(cwd, &["status", "--short"]).map(|s| cap_lines(&s, MAX_STATUS_LINES));
            (branch, status)
        } else {
            (None, None)
        };
        Self {
            cwd: cwd.to_path_buf(),
            platform: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: today(),
            git_root,
            branch,
            status,
        }
    }

    fn render(&self) -> String {
        let mut out = String::from("<env>\n");
        out.push_str(&format!("Working directory: {}\n", self.cwd.display()));
        match &self.git_root {
            Some(root) => out.push_str(&format!(
                "Git repository: yes, rooted at {}\n",
                root.display()
            )),
            None => out.push_str("Git repository: no\n"),
        }
        out.push_str(&format!("Platform: {}\n", self.platform));
        out.push_str(&format!("Today's date: {}\n", self.date));
        out.push_str("</env>");
        if let Some(branch) = &self.branch {
            out.push_str(&format!("\n\nCurrent git branch: {branch}"));
        }
        if let Some(status) = &self.status {
            let status = if status.trim().is_empty() {
                "(clean)"
            } else {
                status.trim_end()
            };
            out.push_str(&format!(
                "\n\nGit status at the start of the session (it will not update):\n{status}"
            ));
        }
        out
    }
}

/// Assembles the system prompt blocks.
#[derive(Debug, Clone)]
pub struct SystemPromptBuilder {
    prompt: String,
    append: Vec<String>,
    environment: Option<Environment>,
    user_instructions: Option<PathBuf>,
    /// Whether the project's instruction files are read (`--setting-sources` without
    /// `project` leaves them out).
    project_instructions: bool,
}

impl SystemPromptBuilder {
    /// Starts from `prompt` (the agent's own prompt; [`DEFAULT_PROMPT`] for the main agent).
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            append: Vec::new(),
            environment: None,
            user_instructions: home_instructions(),
            project_instructions: true,
        }
    }

    pub fn environment(mut self, env: Environment) -> Self {
        self.environment = Some(env);
        self
    }

    /// Text added after everything else (`--append-system-prompt`).
    pub fn append(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        if !text.trim().is_empty() {
            self.append.push(text);
        }
        self
    }

    /// The user's own instruction file (`~/.claude/CLAUDE.md` by default); `None` to skip.
    pub fn user_instructions(mut self, path: Option<PathBuf>) -> Self {
        self.user_instructions = path;
        self
    }

    /// Whether the project's `CLAUDE.md` / `AGENTS.md` / `CLAUDE.local.md` files are read (on
    /// by default).
    pub fn project_instructions(mut self, on: bool) -> Self {
        self.project_instructions = on;
        self
    }

    /// The prompt, then one block of context. A blank prompt (`--system-prompt ""`, which
    /// SDKs pass to mean "no custom prompt") is left out: the API refuses an empty block.
    pub fn build(self) -> Vec<String> {
        let mut blocks: Vec<String> = Some(self.prompt)
            .filter(|prompt| !prompt.trim().is_empty())
            .into_iter()
            .collect();
        let mut context = Vec::new();
        if let Some(env) = &self.environment {
            context.push(env.render());
            let mut files = Vec::new();
            if let Some(user) = &self.user_instructions {
                files.push(user.clone());
            }
            if self.project_instructions {
                files.extend(project_instruction_files(&env.cwd, env.git_root.as_deref()));
            }
            let instructions = render_instructions(&files);
            if !instructions.is_empty() {
                context.push(instructions);
            }
        }
        context.extend(self.append);
        if !context.is_empty() {
            blocks.push(context.join("\n\n"));
        }
        blocks
    }
}

/// `~/.claude/CLAUDE.md`, when `HOME` is set.
fn home_instructions() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude").join("CLAUDE.md"))
}

/// Instruction files from the repository root (or `cwd` alone outside a repository) down to
/// `cwd`, so that the nearest, most specific file comes last and reads as the final word.
pub fn project_instruction_files(cwd: &Path, git_root: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir);
        if git_root.is_none_or(|root| dir == root) {
            break;
        }
    }
    dirs.reverse();
    let mut files = Vec::new();
    for dir in dirs {
        for name in INSTRUCTION_FILES {
            let path = dir.join(name);
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files
}

fn render_instructions(files: &[PathBuf]) -> String {
    let mut parts = Vec::new();
    for path in files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if text.len() > MAX_INSTRUCTION_BYTES {
            let mut cut = MAX_INSTRUCTION_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("\n[… file cut: it is longer than fleet includes]");
        }
        if text.trim().is_empty() {
            continue;
        }
        parts.push(format!(
            "Contents of {} (project instructions; follow them):\n\n{}",
            path.display(),
            text.trim_end()
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "<project-instructions>\n{}\n</project-instructions>",
        parts.join("\n\n")
    )
}

fn git(cwd: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string(),
    )
}

fn cap_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text.to_string();
    }
    format!(
        "{}\n… and {} more changed files",
        lines[..max].join("\n"),
        lines.len() - max
    )
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    now.get(..10).unwrap_or(&now).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_run_from_repo_root_to_cwd() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let sub = root.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.path().join("CLAUDE.md"), "root rules")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(sub.join("AGENTS.md"), "sub rules").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.path().join("a/CLAUDE.md"), "middle").unwrap_or_else(|e| panic!("{e}"));
        let files = project_instruction_files(&sub, Some(root.path()));
        assert_eq!(
            files,
            vec![
                root.path().join("CLAUDE.md"),
                root.path().join("a/CLAUDE.md"),
                sub.join("AGENTS.md")
            ]
        );
        // Outside a repository only the cwd itself counts.
        assert_eq!(
            project_instruction_files(&sub, None),
            vec![sub.join("AGENTS.md")]
        );
    }

    #[test]
    fn prompt_blocks_hold_prompt_then_context() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("CLAUDE.md"), "Use tabs.").unwrap_or_else(|e| panic!("{e}"));
        let env = Environment::detect(dir.path());
        let blocks = SystemPromptBuilder::new("P")
            .user_instructions(None)
            .environment(env)
            .append("extra")
            .build();
        assert_eq!(blocks[0], "P");
        assert!(blocks[1].contains(&format!("Working directory: {}", dir.path().display())));
        assert!(blocks[1].contains("Use tabs."));
        assert!(blocks[1].ends_with("extra"));
    }

    #[test]
    fn a_blank_prompt_leaves_only_the_context() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let blocks = SystemPromptBuilder::new("  ")
            .user_instructions(None)
            .environment(Environment::detect(dir.path()))
            .build();
        assert_eq!(blocks.len(), 1, "{blocks:?}");
        assert!(blocks[0].contains("Working directory"));
        assert!(SystemPromptBuilder::new("")
            .user_instructions(None)
            .build()
            .is_empty());
    }
}
