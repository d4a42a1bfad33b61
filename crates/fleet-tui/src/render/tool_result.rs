//! A finished tool call's result, under its tool line: a summary or a few lines, never the
//! whole output unless the person asked (Ctrl+O). Each tool gets the view that tells the most
//! in the fewest rows: Read a count, Edit/Write their diff, Bash the tail of its output.

use super::diff::Hunks;
use super::highlight::expand_tabs;
use super::wrap::{truncate, wrap_prefixed};
use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Lines of an ordinary result shown folded.
const FOLD_LINES: usize = 4;
/// Lines of an error shown folded: errors deserve a little more.
const ERROR_LINES: usize = 6;
/// Lines of Bash output shown folded, from the end (the end holds the verdict).
const BASH_TAIL: usize = 5;
/// Rows of an edit's diff shown folded.
const DIFF_ROWS: usize = 20;
/// Rows of a new file shown folded.
const NEW_FILE_ROWS: usize = 10;

/// The first row's prefix, joining the result to its tool line.
const ELBOW: &str = "  ⎿ ";
/// Every later row's prefix, as wide as the elbow.
const INDENT: &str = "    ";

/// A finished tool call's result.
#[derive(Debug, Clone, Copy)]
pub struct ToolResultView<'a> {
    pub tool: &'a str,
    pub input: &'a Value,
    /// The text the model received.
    pub content: &'a str,
    /// `tool_use_result` detail when the tool gave one (a Write's old content, a Bash
    /// command's stdout and stderr).
    pub structured: Option<&'a Value>,
    pub is_error: bool,
    /// Ctrl+O: everything, not the folded few lines.
    pub expanded: bool,
    pub width: u16,
}

/// The result under its tool line: folded to a few lines ("… +40 lines"), Bash's tail,
/// Edit/Write as a diff, errors in red. Every row starts with `  ⎿ ` or four spaces and fits
/// `width`.
pub fn tool_result(view: ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let inner = view.width.saturating_sub(INDENT.len() as u16);
    let body = match view.tool {
        "Bash" if bash_streams(view.structured).is_some() => bash(&view, theme),
        _ if view.is_error => error(&view, theme),
        "Read" => read(&view, theme),
        "Edit" | "MultiEdit" => edit(&view, inner, theme),
        "Write" => write(&view, inner, theme),
        "Grep" | "Glob" => search(&view, theme),
        "Agent" | "Task" => agent(&view, inner, theme),
        _ => fold_head(
            text_lines(view.content, Role::Dim, theme),
            FOLD_LINES,
            &view,
            theme,
        ),
    };
    frame(body, view.width, theme)
}

/// Prefixes the body's rows and wraps them to `width`.
fn frame(body: Vec<Line<'static>>, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let elbow = [Span::styled(ELBOW, theme.style(Role::Dim))];
    let indent = [Span::raw(INDENT)];
    let mut out = Vec::with_capacity(body.len());
    for (i, line) in body.into_iter().enumerate() {
        let first: &[Span<'static>] = if i == 0 { &elbow } else { &indent };
        out.extend(wrap_prefixed(line, width, first, &indent));
    }
    out
}

fn error(view: &ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let content = if view.content.trim().is_empty() {
        "Error"
    } else {
        view.content
    };
    fold_head(
        text_lines(content, Role::Error, theme),
        ERROR_LINES,
        view,
        theme,
    )
}

fn read(view: &ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let file = view.structured.and_then(|s| s.get("file"));
    let kind = view
        .structured
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str);
    let summary = match (
        kind,
        file.and_then(|f| f.get("numLines")).and_then(Value::as_u64),
    ) {
        (Some("text") | None, Some(n)) => format!("Read {}", plural(n as usize, "line")),
        (Some(other), _) if other != "text" => format!("Read {other}"),
        _ => {
            // No structured copy: count the numbered lines the model was given.
            let n = view
                .content
                .lines()
                .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
                .count();
            format!("Read {}", plural(n, "line"))
        }
    };
    let mut out = vec![Line::styled(summary, theme.style(Role::Dim))];
    if view.expanded {
        out.extend(text_lines(view.content, Role::Dim, theme));
    }
    out
}

fn edit(view: &ToolResultView<'_>, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    let from_patch = view
        .structured
        .and_then(|s| s.get("structuredPatch"))
        .and_then(Hunks::from_patch)
        .filter(|h| !h.0.is_empty());
    let hunks =
        from_patch.unwrap_or_else(|| match view.input.get("edits").and_then(Value::as_array) {
            Some(edits) => Hunks(
                edits
                    .iter()
                    .flat_map(|e| Hunks::between(text(e, "old_string"), text(e, "new_string")).0)
                    .collect(),
            ),
            None => Hunks::between(
                text(view.input, "old_string"),
                text(view.input, "new_string"),
            ),
        });
    changed(&hunks, None, DIFF_ROWS, view, inner, theme)
}

fn write(view: &ToolResultView<'_>, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    let structured = view.structured;
    let get = |key: &str| structured.and_then(|s| s.get(key));
    let content = get("content")
        .or_else(|| view.input.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let original = get("originalFile").and_then(Value::as_str);
    let created = match get("type").and_then(Value::as_str) {
        Some(kind) => kind == "create",
        None => original.is_none(),
    };
    if created {
        let lines = content.lines().count();
        let summary = format!("Wrote {}", plural(lines, "line"));
        return changed(
            &Hunks::between("", content),
            Some(summary),
            NEW_FILE_ROWS,
            view,
            inner,
            theme,
        );
    }
    let hunks = get("structuredPatch")
        .and_then(Hunks::from_patch)
        .filter(|h| !h.0.is_empty())
        .unwrap_or_else(|| Hunks::between(original.unwrap_or(""), content));
    changed(&hunks, None, DIFF_ROWS, view, inner, theme)
}

/// A string field of `value`, or empty.
fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A summary line ("Added 2 lines, removed 1 line") and the diff, folded to `rows`.
fn changed(
    hunks: &Hunks,
    summary: Option<String>,
    rows: usize,
    view: &ToolResultView<'_>,
    inner: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (added, removed) = hunks.counts();
    let summary = summary.unwrap_or_else(|| match (added, removed) {
        (0, 0) => "No changes".to_string(),
        (a, 0) => format!("Added {}", plural(a, "line")),
        (0, r) => format!("Removed {}", plural(r, "line")),
        (a, r) => format!("Added {}, removed {}", plural(a, "line"), plural(r, "line")),
    });
    let mut out = vec![Line::styled(summary, theme.style(Role::Dim))];
    let diff = hunks.render(inner, theme);
    if !diff.is_empty() {
        out.extend(fold_head(diff, rows, view, theme));
    }
    out
}

/// Bash's stdout and stderr from its structured result, when it has them.
fn bash_streams(structured: Option<&Value>) -> Option<(&str, &str)> {
    let s = structured?;
    let stdout = s.get("stdout").and_then(Value::as_str);
    let stderr = s.get("stderr").and_then(Value::as_str);
    (stdout.is_some() || stderr.is_some()).then(|| (stdout.unwrap_or(""), stderr.unwrap_or("")))
}

fn bash(view: &ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let Some((stdout, stderr)) = bash_streams(view.structured) else {
        return error(view, theme);
    };
    let structured = view.structured;
    let exit = structured
        .and_then(|s| s.get("exitCode"))
        .and_then(Value::as_i64);
    let interrupted = structured
        .and_then(|s| s.get("interrupted"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let failed = exit.is_some_and(|code| code != 0);
    let stderr_role = if failed { Role::Error } else { Role::Dim };
    let mut lines = text_lines(stdout, Role::Dim, theme);
    lines.extend(text_lines(stderr, stderr_role, theme));
    let mut out = if lines.is_empty() && !failed && !interrupted {
        vec![Line::styled("(no output)", theme.style(Role::Dim))]
    } else {
        fold_tail(lines, BASH_TAIL, view, theme)
    };
    if interrupted {
        out.push(Line::styled(
            "Interrupted: timed out",
            theme.style(Role::Error),
        ));
    } else if let Some(code) = exit.filter(|c| *c != 0) {
        out.push(Line::styled(
            format!("Exit code {code}"),
            theme.style(Role::Error),
        ));
    }
    out
}

fn search(view: &ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let get = |key: &str| view.structured.and_then(|s| s.get(key));
    let mode = get("mode").and_then(Value::as_str);
    let count = |key: &str| get(key).and_then(Value::as_u64).map(|n| n as usize);
    let summary = match mode {
        Some("content") => count("numLines").map(|n| plural(n, "line")),
        Some("count") => count("numMatches").map(|n| plural(n, "match")),
        _ => count("numFiles").map(|n| plural(n, "file")),
    };
    let Some(summary) = summary else {
        return fold_head(
            text_lines(view.content, Role::Dim, theme),
            FOLD_LINES,
            view,
            theme,
        );
    };
    let mut out = vec![Line::styled(
        format!("Found {summary}"),
        theme.style(Role::Dim),
    )];
    let lines = text_lines(view.content, Role::Dim, theme);
    if view.expanded {
        out.extend(lines);
    } else if mode == Some("content") {
        out.extend(fold_head(lines, FOLD_LINES, view, theme));
    }
    out
}

/// The transcript shows a subagent's work itself; here only its answer's first line.
fn agent(view: &ToolResultView<'_>, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    if view.expanded {
        return text_lines(view.content, Role::Dim, theme);
    }
    let first = view
        .content
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no output)");
    let first = sanitize(first);
    let text = match usize::from(inner) {
        0 => first,
        room => truncate(&first, room),
    };
    vec![Line::styled(text, theme.style(Role::Dim))]
}

/// The first `keep` lines and a note of how many more, or everything when expanded.
fn fold_head(
    mut lines: Vec<Line<'static>>,
    keep: usize,
    view: &ToolResultView<'_>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if lines.is_empty() {
        return vec![Line::styled("(no output)", theme.style(Role::Dim))];
    }
    // Folding away one line would cost the same row as showing it.
    if view.expanded || lines.len() <= keep + 1 {
        return lines;
    }
    let hidden = lines.len() - keep;
    lines.truncate(keep);
    lines.push(more(hidden, theme));
    lines
}

/// The last `keep` lines under a note of how many came before, or everything when expanded.
fn fold_tail(
    lines: Vec<Line<'static>>,
    keep: usize,
    view: &ToolResultView<'_>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if view.expanded || lines.len() <= keep + 1 {
        return lines;
    }
    let hidden = lines.len() - keep;
    let mut out = Vec::with_capacity(keep + 1);
    out.push(more(hidden, theme));
    out.extend(lines.into_iter().skip(hidden));
    out
}

fn more(hidden: usize, theme: &Theme) -> Line<'static> {
    Line::styled(
        format!("… +{} (ctrl+o to expand)", plural(hidden, "line")),
        theme.style(Role::Dim),
    )
}

/// `text`'s lines, cleaned for the screen, in `role`; no trailing empty lines.
fn text_lines(text: &str, role: Role, theme: &Theme) -> Vec<Line<'static>> {
    let style = theme.style(role);
    text.trim_end_matches(['\n', '\r', ' '])
        .lines()
        .map(|l| Line::styled(sanitize(l), style))
        .collect()
}

/// A line as a terminal would leave it: after the last carriage return (progress bars), with
/// escape sequences (colours) and other control characters removed, then tabs expanded.
fn sanitize(line: &str) -> String {
    let line = line.trim_end_matches('\r');
    let line = line.rsplit('\r').next().unwrap_or(line);
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: `ESC [` parameters, then one final byte in `@`..=`~`.
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if c == '\t' || !c.is_control() {
            out.push(c);
        }
    }
    expand_tabs(&out)
}

fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (1, _) => format!("1 {word}"),
        (_, "match") => format!("{n} matches"),
        _ => format!("{n} {word}s"),
    }
}
