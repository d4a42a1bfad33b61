//! Pure renderers: data in, styled lines out, one small module per kind of item. Nothing
//! here keeps state or knows about the screen; the transcript caches what they return per
//! width, so they run again only when an item or the width changes.
//!
//! PLACEHOLDER BODIES (skeleton): the signatures are the contract the transcript builds on.

use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Markdown (the assistant's text) as lines at `width`. The text may be incomplete while it
/// streams: an unclosed code fence or list is shown as far as it goes.
pub fn markdown(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let _ = width;
    text.lines()
        .map(|l| Line::styled(l.to_string(), theme.style(Role::Text)))
        .collect()
}

/// Code, highlighted for `lang` (a fence's info string or a file extension); plain when the
/// language is unknown or the theme has no colours.
pub fn code(source: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    let _ = lang;
    source
        .lines()
        .map(|l| Line::styled(l.to_string(), theme.style(Role::Code)))
        .collect()
}

/// An edit as a coloured diff with line numbers: Edit's `old_string` → `new_string`, or a
/// Write's new content (`old` empty for a new file).
pub fn diff(path: &str, old: &str, new: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let _ = (path, width);
    let mut out = Vec::new();
    out.extend(
        old.lines()
            .map(|l| Line::styled(format!("-{l}"), theme.style(Role::DiffDelete))),
    );
    out.extend(
        new.lines()
            .map(|l| Line::styled(format!("+{l}"), theme.style(Role::DiffAdd))),
    );
    out
}

/// The one-line label of a tool call: `Read(src/lib.rs)`, `Bash(cargo test)`,
/// `Agent(Explore: map the crate)`. Cut to `max` characters.
pub fn tool_label(tool: &str, input: &Value, max: usize) -> String {
    let _ = max;
    format!("{tool}({input})")
}

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
/// Edit/Write as a diff, errors in red.
pub fn tool_result(view: ToolResultView<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let role = if view.is_error {
        Role::Error
    } else {
        Role::Dim
    };
    view.content
        .lines()
        .take(if view.expanded { usize::MAX } else { 4 })
        .map(|l| Line::from(Span::styled(format!("  ⎿ {l}"), theme.style(role))))
        .collect()
}

/// Lines wrapped to `width` cells, styles kept, words kept whole where they fit.
pub fn wrap(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let _ = width;
    lines
}
