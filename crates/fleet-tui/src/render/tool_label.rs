//! The one line that names a tool call: the tool and the one argument a person needs to know
//! what it does (`Read(src/lib.rs)`, `Bash(cargo test)`), never the whole JSON input.

use super::wrap::{truncate, truncate_left};
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// What goes between the parentheses, and which end to cut when it is too long.
enum Arg {
    /// Nothing worth showing: the label is the bare name.
    None,
    /// A path: its end names the file, so a long one loses its start.
    Path(String),
    /// Anything else: keeps its start.
    Text(String),
    /// A path followed by text that must stay whole (`src/lib.rs:10-40`).
    PathThen(String, String),
}

/// The one-line label of a tool call: `Read(src/lib.rs)`, `Bash(cargo test)`,
/// `Agent(Explore: map the crate)`, an MCP tool as `server · tool(arg)`. Cut to `max` cells.
pub fn tool_label(tool: &str, input: &Value, max: usize) -> String {
    let (name, arg) = describe(tool, input);
    let name = one_line(&name);
    let name_w = name.width();
    // Room for the argument once the name and the parentheses are in.
    let room = max.saturating_sub(name_w + 2);
    let inner = match arg {
        Arg::None => return truncate(&name, max),
        _ if room == 0 => return truncate(&name, max),
        Arg::Path(path) => truncate_left(&path, room),
        Arg::Text(text) => truncate(&text, room),
        Arg::PathThen(path, tail) => {
            let tail_w = tail.width();
            if tail_w + 1 >= room {
                truncate(&format!("{path}{tail}"), room)
            } else {
                format!("{}{tail}", truncate_left(&path, room - tail_w))
            }
        }
    };
    truncate(&format!("{name}({inner})"), max)
}

fn describe(tool: &str, input: &Value) -> (String, Arg) {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(one_line);
    let number = |key: &str| input.get(key).and_then(Value::as_u64);
    let path = |key: &str| text(key).map_or(Arg::None, Arg::Path);
    let name = tool.to_string();
    let arg = match tool {
        "Read" => match text("file_path") {
            None => Arg::None,
            Some(file) => match read_range(number("offset"), number("limit")) {
                Some(range) => Arg::PathThen(file, range),
                None => Arg::Path(file),
            },
        },
        "Write" | "Edit" | "MultiEdit" => path("file_path"),
        "NotebookEdit" => path("notebook_path"),
        "Bash" => bash_command(input),
        "Grep" => match text("pattern") {
            None => Arg::None,
            Some(pattern) => match text("path").or_else(|| text("glob")) {
                Some(place) => Arg::Text(format!("\"{pattern}\" in {place}")),
                None => Arg::Text(format!("\"{pattern}\"")),
            },
        },
        "Glob" => match (text("pattern"), text("path")) {
            (Some(pattern), Some(place)) => Arg::Text(format!("{pattern} in {place}")),
            (Some(pattern), None) => Arg::Text(pattern),
            (None, _) => Arg::None,
        },
        "WebFetch" => text("url").map_or(Arg::None, Arg::Text),
        "WebSearch" => text("query").map_or(Arg::None, Arg::Text),
        "Agent" | "Task" => {
            let kind = text("subagent_type").filter(|k| !k.is_empty());
            let what = text("description").filter(|d| !d.is_empty());
            match (kind, what) {
                (Some(kind), Some(what)) => Arg::Text(format!("{kind}: {what}")),
                (Some(one), None) | (None, Some(one)) => Arg::Text(one),
                (None, None) => Arg::None,
            }
        }
        "TaskStop" | "TaskOutput" | "KillShell" => text("task_id")
            .or_else(|| text("shell_id"))
            .map_or(Arg::None, Arg::Text),
        "SendMessage" => text("to").map_or(Arg::None, |to| Arg::Text(format!("to: {to}"))),
        "Skill" => text("skill").map_or(Arg::None, Arg::Text),
        _ => {
            if let Some((server, mcp_tool)) = mcp_parts(tool) {
                return (format!("{server} · {mcp_tool}"), first_string(input));
            }
            first_string(input)
        }
    };
    (name, arg)
}

/// `:10-39` for offset 10 and limit 30 (Read counts lines from 1), `:10-` for an offset alone.
fn read_range(offset: Option<u64>, limit: Option<u64>) -> Option<String> {
    match (offset, limit) {
        (None, None) => None,
        (Some(from), None) => Some(format!(":{from}-")),
        (from, Some(limit)) => {
            let from = from.unwrap_or(1).max(1);
            let to = from.saturating_add(limit.saturating_sub(1));
            Some(format!(":{from}-{to}"))
        }
    }
}

/// The command's first line, with `… +N lines` when more lines follow: the label is one row,
/// and it must not pass for the whole of a command whose real work is further down.
fn bash_command(input: &Value) -> Arg {
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Arg::None;
    };
    let mut lines = command.trim().lines();
    let first = lines.next().unwrap_or("").trim();
    match lines.count() {
        0 => Arg::Text(one_line(first)),
        1 => Arg::Text(format!("{} … +1 line", one_line(first))),
        more => Arg::Text(format!("{} … +{more} lines", one_line(first))),
    }
}

/// `mcp__server__tool` as (`server`, `tool`); tool names may hold `__` themselves.
fn mcp_parts(tool: &str) -> Option<(&str, &str)> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some((server, name))
}

/// The first non-empty string field of the input, for tools this file does not know.
fn first_string(input: &Value) -> Arg {
    input
        .as_object()
        .and_then(|fields| {
            fields
                .values()
                .filter_map(Value::as_str)
                .find(|s| !s.trim().is_empty())
        })
        .map_or(Arg::None, |s| {
            Arg::Text(one_line(s.trim().lines().next().unwrap_or("")))
        })
}

/// Control characters and line breaks as spaces, so the label stays on one row.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
