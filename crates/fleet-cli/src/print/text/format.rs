//! One-line renderings for the text printer: a tool call, its outcome, an agent's tag, the
//! agent tree's summary. Pure functions, so the printer only decides *when* to write.

use crate::visible::visible;
use fleet_protocol::{ModelUsage, ToolResultEvent, TreeReport};
use serde_json::Value;

/// Input fields that best say what a call is about, in order of preference (`to`: whom a
/// SendMessage writes to).
const SUMMARY_FIELDS: [&str; 9] = [
    "file_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "to",
];
pub(super) const SUMMARY_CHARS: usize = 80;
pub(super) const ERROR_CHARS: usize = 200;
/// Lines of a successful call's output shown in verbose text.
const OUTCOME_LINES: usize = 3;
/// Characters of an agent or task id shown: enough to tell a session's agents apart at a
/// glance, short enough not to crowd the line.
const SHORT_ID_CHARS: usize = 7;

/// `Read(/path)`, `Bash(cargo test)`: the tool and what it is pointed at.
pub(super) fn call_summary(name: &str, input: &Value) -> String {
    let subject = SUMMARY_FIELDS
        .iter()
        .find_map(|field| input.get(field).and_then(Value::as_str))
        .map(|s| first_line(s, SUMMARY_CHARS));
    match subject {
        Some(s) => format!("{name}({s})"),
        None => name.to_string(),
    }
}

/// A failed call's first line, or the first few lines of what a call returned, so a reader
/// can follow the run without the whole output.
pub(super) fn outcome(result: &ToolResultEvent) -> String {
    if result.is_error {
        return format!("error: {}", first_line(&result.content, ERROR_CHARS));
    }
    if let Some(said) = message_of(result) {
        return first_line(&said, SUMMARY_CHARS);
    }
    let lines: Vec<&str> = result
        .content
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return "ok".to_string();
    }
    let mut shown: Vec<String> = lines
        .iter()
        .take(OUTCOME_LINES)
        .map(|l| first_line(&l.replace('\t', "  "), SUMMARY_CHARS))
        .collect();
    if lines.len() > OUTCOME_LINES {
        shown.push(format!("… +{} lines", lines.len() - OUTCOME_LINES));
    }
    shown.join("\n    ")
}

/// What a SendMessage call did, in its own words: its result is JSON for the model
/// (`{"success":true,"message":"Message sent to alpha's inbox",…}`), of which a person wants
/// the `message`.
fn message_of(result: &ToolResultEvent) -> Option<String> {
    if result.tool_name != "SendMessage" {
        return None;
    }
    let value: Value = serde_json::from_str(&result.content).ok()?;
    value.get("message")?.as_str().map(str::to_owned)
}

/// The first non-empty line, control characters made visible, cut to `max` characters.
pub(super) fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = visible(line);
    let line = line.as_ref();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(max).collect();
    cut.push('…');
    cut
}

/// The start of an agent or task id, the way people quote git hashes. A teammate's id,
/// `name@team`, is a name people chose: it is shown whole.
pub(super) fn short_id(id: &str) -> &str {
    if id.contains('@') {
        return id;
    }
    match id.char_indices().nth(SHORT_ID_CHARS) {
        Some((end, _)) => &id[..end],
        None => id,
    }
}

/// `3 subagents · $0.0123 · 12.3k tokens`: the whole tree's size and cost in one line, or
/// `None` when no subagent ran (the main agent's own figures are no news). Usage a server
/// did not report is said to be so, never shown as zero tokens and no cost.
pub(super) fn tree_summary(tree: &TreeReport) -> Option<String> {
    let spawned = tree.subagent_stats.spawned;
    if spawned == 0 {
        return None;
    }
    let noun = if spawned == 1 {
        "subagent"
    } else {
        "subagents"
    };
    let Some(cost) = tree.reported_cost_usd() else {
        return Some(format!("{spawned} {noun} · usage not reported"));
    };
    let tokens: u64 = tree
        .model_usage
        .values()
        .map(ModelUsage::total_tokens)
        .sum();
    let mut line = format!(
        "{spawned} {noun} · ${cost:.4} · {} tokens",
        compact_count(tokens)
    );
    match tree.unreported_replies() {
        0 => {}
        1 => line.push_str(" (1 reply did not report usage)"),
        n => line.push_str(&format!(" ({n} replies did not report usage)")),
    }
    Some(line)
}

/// `950`, `12.3k`, `4.5M`: a count to the precision a glance needs.
pub(super) fn compact_count(n: u64) -> String {
    let x = n as f64;
    match n {
        0..=999 => n.to_string(),
        1_000..=999_949 => format!("{:.1}k", x / 1e3),
        _ => format!("{:.1}M", x / 1e6),
    }
}
