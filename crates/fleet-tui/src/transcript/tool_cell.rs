//! A tool call as lines: `● Read(src/lib.rs)` with its result folded under it, a refusal,
//! or a "running" mark — and, for an Agent call, the subagent's group: a header with its
//! type and counters, then its activity indented (its last few lines while it runs, one
//! summary line once done, all of it when expanded).

use super::cell::{Cell, RenderKey, ToolCall};
use super::draw::{self, hang, indent};
use super::group::{first_line, Group, Groups};
use crate::render::{self, ToolResultView};
use crate::theme::{Role, Theme};
use fleet_protocol::TaskStatus;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

/// Rows of a running subagent's activity shown while folded.
const FOLDED_ACTIVITY: usize = 3;
/// Columns a subagent's activity is indented by, per level.
const GROUP_INDENT: usize = 2;

pub(crate) fn draw(
    call: &ToolCall,
    groups: &mut Groups,
    key: RenderKey,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let failed = call.refused.is_some() || call.result.as_ref().is_some_and(|r| r.is_error);
    let mut out = vec![call_line(call, failed, key.width, theme)];
    if let Some(message) = &call.refused {
        let style = theme.style(Role::Error);
        out.extend(hang(
            vec![Line::styled(
                format!("refused: {}", first_line(message)),
                style,
            )],
            Span::styled("  ⎿ ", style),
            key.width,
        ));
        return out;
    }
    if let Some(mut group) = groups.take(&call.id) {
        out.extend(group_lines(&mut group, groups, key, theme));
        groups.put_back(group);
        return out;
    }
    match &call.result {
        Some(done) => out.extend(render::tool_result(
            ToolResultView {
                tool: &call.name,
                input: &call.input,
                content: &done.content,
                structured: done.structured.as_deref(),
                is_error: done.is_error,
                expanded: key.expanded,
                width: key.width,
            },
            theme,
        )),
        None => out.push(running(call.waiting, theme)),
    }
    out
}

/// `● Read(src/lib.rs)`: the tool's name bold, the bullet red once the call failed.
fn call_line(call: &ToolCall, failed: bool, width: u16, theme: &Theme) -> Line<'static> {
    let max = usize::from(width.saturating_sub(2)).max(1);
    let label = render::tool_label(&call.name, &call.input, max);
    let bullet = if failed { Role::Error } else { Role::Tool };
    let (name, rest) = match label.find('(') {
        Some(at) => label.split_at(at),
        None => (label.as_str(), ""),
    };
    Line::from(vec![
        Span::styled("● ", theme.style(bullet)),
        Span::styled(name.to_string(), theme.style(Role::Tool)),
        Span::styled(rest.to_string(), theme.style(Role::Text)),
    ])
}

/// The mark of a call without a result yet: still running, or waiting for an answer.
fn running(waiting: bool, theme: &Theme) -> Line<'static> {
    if waiting {
        Line::styled("  ⎿ waiting for approval…", theme.style(Role::Warning))
    } else {
        Line::styled("  ⎿ running…", theme.style(Role::Dim))
    }
}

/// The header and the activity of a subagent under its Agent call.
pub(crate) fn group_lines(
    group: &mut Group,
    groups: &mut Groups,
    key: RenderKey,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = header(group, key.width, theme);
    let inner = RenderKey {
        width: key.width.saturating_sub(GROUP_INDENT as u16).max(1),
        ..key
    };
    let dim = theme.style(Role::Dim);
    let done = group.done();
    if done && !key.expanded {
        if !group.outcome.summary.is_empty() {
            let role = if group.outcome.status == Some(TaskStatus::Completed) {
                Role::Dim
            } else {
                Role::Error
            };
            let line = Line::styled(group.outcome.summary.clone(), theme.style(role));
            out.extend(indent(
                &hang(vec![line], Span::raw(""), inner.width),
                GROUP_INDENT,
            ));
        }
        return out;
    }
    for cell in &mut group.cells {
        ensure(cell, groups, inner, theme);
    }
    let total: usize = group.cells.iter().map(Cell::cached_height).sum();
    let keep = if key.expanded { total } else { FOLDED_ACTIVITY };
    let mut skip = total.saturating_sub(keep);
    if skip > 0 {
        let hint = format!("… +{skip} lines (ctrl+o to expand)");
        out.extend(indent(&[Line::styled(hint, dim)], GROUP_INDENT));
    }
    for cell in &group.cells {
        let lines = cell.cached(inner).unwrap_or(&[]);
        if skip >= lines.len() {
            skip -= lines.len();
            continue;
        }
        out.extend(indent(&lines[skip..], GROUP_INDENT));
        skip = 0;
    }
    if done && group.outcome.status != Some(TaskStatus::Completed) {
        let line = Line::styled(group.outcome.summary.clone(), theme.style(Role::Error));
        out.extend(indent(
            &hang(vec![line], Span::raw(""), inner.width),
            GROUP_INDENT,
        ));
    }
    out
}

/// `  ⎿ Explore · map the crate · running · 3 turns · 12.4k tokens`.
fn header(group: &Group, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let kind = if group.subagent_type.is_empty() {
        "agent"
    } else {
        group.subagent_type.as_str()
    };
    let mut spans = vec![Span::styled(
        kind.to_string(),
        theme.style(Role::Text).add_modifier(Modifier::BOLD),
    )];
    if !group.description.is_empty() {
        spans.push(Span::styled(format!(" · {}", group.description), dim));
    }
    let marker = if group.background { " ◇ " } else { " · " };
    spans.push(Span::styled(format!("{marker}{}", group.figures()), dim));
    hang(vec![Line::from(spans)], Span::styled("  ⎿ ", dim), width)
}

/// Draws a group's cell when its lines are stale for `key`.
fn ensure(cell: &mut Cell, groups: &mut Groups, key: RenderKey, theme: &Theme) {
    if cell.cached(key).is_none() {
        let lines = draw::draw(&cell.kind, groups, key, theme);
        cell.cache = Some(super::cell::Rendered { key, lines });
    }
}
