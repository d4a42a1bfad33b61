//! Slash commands: the built-in ones and the person's own from `.claude/commands/*.md` and
//! `~/.claude/commands/*.md`, whose text becomes the prompt with `$ARGUMENTS` filled in.
//! The files are the ones Claude Code users already have: optional YAML frontmatter with
//! `description:` and `argument-hint:`, then the prompt.

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

const BUILTIN: &[(&str, &str, &str)] = &[
    ("help", "", "Show the keys and the commands"),
    ("clear", "", "Start a new conversation"),
    (
        "compact",
        "[instructions]",
        "Summarise the conversation to free context",
    ),
    ("resume", "[session]", "Resume a session of this folder"),
    ("model", "[name]", "Show or switch the model"),
    ("agents", "[new]", "List agent types, or create one"),
    ("tasks", "", "Background tasks: view, stop, message"),
    (
        "permissions",
        "[allow|deny|ask <rule> | remove …]",
        "View or edit permission rules",
    ),
    ("cost", "", "What this session cost, per agent"),
    ("mcp", "", "MCP servers and their state"),
    ("exit", "", "Quit fleet"),
];

/// The built-in commands, in the order `/help` lists them.
pub fn builtin() -> Vec<CommandInfo> {
    BUILTIN
        .iter()
        .map(|(name, hint, description)| CommandInfo {
            name: (*name).to_string(),
            description: (*description).to_string(),
            argument_hint: (*hint).to_string(),
            source: CommandSource::Builtin,
        })
        .collect()
}

/// Custom commands of the project (`<cwd>/.claude/commands`) and the user
/// (`<home>/.claude/commands`), sorted by name; a project command wins a clash, and a
/// built-in name cannot be taken (the file is skipped with a warning).
pub fn load_custom(cwd: &Path, home: Option<&Path>) -> Vec<CommandInfo> {
    let builtin_names: Vec<&str> = BUILTIN.iter().map(|(name, _, _)| *name).collect();
    let mut found: Vec<CommandInfo> = Vec::new();
    let roots = std::iter::once(cwd).chain(home);
    for root in roots {
        let dir = root.join(".claude").join("commands");
        let mut files = Vec::new();
        collect_markdown(&dir, &mut Vec::new(), &mut files);
        files.sort();
        for (name, path) in files {
            if builtin_names.contains(&name.as_str()) {
                tracing::warn!(path = %path.display(), "custom command /{name} skipped: a built-in has that name");
                continue;
            }
            if found.iter().any(|c| c.name == name) {
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(content) => found.push(describe(name, path, &content)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "custom command not read")
                }
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Every `*.md` below `dir`, named `folder:sub:name` by the folders under `dir`.
fn collect_markdown(dir: &Path, folders: &mut Vec<String>, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            folders.push(file_name);
            collect_markdown(&path, folders, out);
            folders.pop();
        } else if let Some(stem) = file_name.strip_suffix(".md") {
            let mut name = folders.join(":");
            if !name.is_empty() {
                name.push(':');
            }
            name.push_str(stem);
            out.push((name, path));
        }
    }
}

fn describe(name: String, path: PathBuf, content: &str) -> CommandInfo {
    let (front, body) = split_frontmatter(content);
    let field = |key: &str| {
        front.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| unquote(v.trim()).to_string())
        })
    };
    let description = field("description")
        .filter(|d| !d.is_empty())
        .or_else(|| {
            body.lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default();
    CommandInfo {
        name,
        description,
        argument_hint: field("argument-hint").unwrap_or_default(),
        source: CommandSource::Custom(path),
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// The frontmatter (between a leading `---` line and the next `---` line) and the body.
/// Without a closing `---` the whole file is the body.
fn split_frontmatter(content: &str) -> (&str, &str) {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let Some(rest) = content
        .strip_prefix("---\n")
        .or_else(|| content.strip_prefix("---\r\n"))
    else {
        return ("", content);
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (&rest[..at], &rest[at + line.len()..]);
        }
        at += line.len();
    }
    ("", content)
}

/// A custom command's prompt: its body (frontmatter removed) with `$ARGUMENTS` replaced by
/// all the arguments and `$1`…`$9` by each blank-separated one (empty when missing).
pub fn expand(path: &Path, arguments: &str) -> std::io::Result<String> {
    let content = std::fs::read_to_string(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let (_, body) = split_frontmatter(&content);
    let positional: Vec<&str> = arguments.split_whitespace().collect();
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut rest = body;
    // One pass, so arguments that contain `$1` are not expanded again.
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            rest = tail;
        } else if let Some(d) = after
            .chars()
            .next()
            .and_then(|c| c.to_digit(10))
            .filter(|d| *d > 0)
        {
            out.push_str(positional.get(d as usize - 1).copied().unwrap_or(""));
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_split_off() {
        let (front, body) = split_frontmatter("---\ndescription: x\n---\nbody\n");
        assert_eq!(front, "description: x\n");
        assert_eq!(body, "body\n");
        assert_eq!(split_frontmatter("no front\n"), ("", "no front\n"));
        assert_eq!(
            split_frontmatter("---\nunclosed\n"),
            ("", "---\nunclosed\n")
        );
    }

    #[test]
    fn builtins_are_the_documented_ones() {
        let names: Vec<String> = builtin().into_iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "help",
                "clear",
                "compact",
                "resume",
                "model",
                "agents",
                "tasks",
                "permissions",
                "cost",
                "mcp",
                "exit"
            ]
        );
    }
}
