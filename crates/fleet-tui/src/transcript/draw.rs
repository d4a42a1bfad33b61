//! A cell into lines at one width. Pure apart from the groups it reads (and whose cells'
//! caches it fills); the markers in front of each kind (`›`, `✻`, `⚠`, `✗`, `◆`, `!`) carry
//! what colour would, so nothing is lost with `NO_COLOR`.

use super::cell::{CellKind, NotificationLine, RenderKey};
use super::group::{first_line, Groups};
use super::mail_cell;
use super::tool_cell;
use crate::port::NoticeLevel;
use crate::render;
use crate::theme::{Role, Theme};
use fleet_protocol::TaskStatus;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Output lines of a `!command` shown while folded: its tail.
const SHELL_TAIL: usize = 5;

pub(crate) fn draw(
    kind: &CellKind,
    groups: &mut Groups,
    key: RenderKey,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = key.width;
    match kind {
        CellKind::Prompt(text) => {
            let style = theme.style(Role::User);
            hang(plain(text, style), Span::styled("› ", style), width)
        }
        CellKind::Assistant { text, .. } => render::markdown(text, width, theme),
        CellKind::Thinking { text, .. } => thinking(text, key, theme),
        CellKind::Tool(call) => tool_cell::draw(call, groups, key, theme),
        CellKind::Mail(letter) => mail_cell::draw(letter, key, theme),
        CellKind::Notification(note) => notification(note, groups, width, theme),
        CellKind::Notice { level, text } => {
            let (mark, role) = match level {
                NoticeLevel::Info => ("", Role::Text),
                NoticeLevel::Warning => ("⚠ ", Role::Warning),
                NoticeLevel::Error => ("✗ ", Role::Error),
            };
            let style = theme.style(role);
            hang(plain(text, style), Span::styled(mark, style), width)
        }
        CellKind::Lines(lines) => render::wrap(lines.clone(), width),
        CellKind::Shell {
            command,
            output,
            exit_code,
        } => shell(command, output, *exit_code, key, theme),
        CellKind::Compacted => {
            let label = "── compacted ──";
            let fill = usize::from(width).saturating_sub(label.width());
            vec![Line::styled(
                format!("{label}{}", "─".repeat(fill)),
                theme.style(Role::Dim),
            )]
        }
        CellKind::Warning(text) => {
            let style = theme.style(Role::Warning);
            hang(plain(text, style), Span::styled("⚠ ", style), width)
        }
        CellKind::Error(text) => {
            let style = theme.style(Role::Error);
            hang(plain(text, style), Span::styled("✗ ", style), width)
        }
    }
}

/// `✻ Thinking…`, and the thinking itself when everything is expanded.
fn thinking(text: &str, key: RenderKey, theme: &Theme) -> Vec<Line<'static>> {
    let style = theme.style(Role::Dim).add_modifier(Modifier::ITALIC);
    let mut out = vec![Line::styled("✻ Thinking…", style)];
    if key.expanded && !text.trim().is_empty() {
        out.extend(hang(
            plain(text, style),
            Span::styled("  ", style),
            key.width,
        ));
    }
    out
}

/// `◆ Explore: map the crate — completed`, then the task's one-line summary.
fn notification(
    note: &NotificationLine,
    groups: &Groups,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let role = match note.status {
        TaskStatus::Completed => Role::Success,
        TaskStatus::Failed => Role::Error,
        _ => Role::Warning,
    };
    let who = match groups.get(&note.tool_use_id) {
        Some(g) if !g.subagent_type.is_empty() && !g.description.is_empty() => {
            format!("{}: {}", g.subagent_type, g.description)
        }
        Some(g) if !g.description.is_empty() => g.description.clone(),
        _ => format!("task {}", note.task_id),
    };
    let head = Line::from(vec![
        Span::styled("◆ ", theme.style(role)),
        Span::styled(who, theme.style(Role::Text).add_modifier(Modifier::BOLD)),
        Span::styled(format!(" — {}", note.status), theme.style(role)),
    ]);
    let mut out = hang(vec![head], Span::raw(""), width);
    let summary = first_line(&note.summary);
    if !summary.is_empty() {
        let style = theme.style(Role::Dim);
        out.extend(hang(
            vec![Line::styled(summary, style)],
            Span::styled("  ⎿ ", style),
            width,
        ));
    }
    out
}

/// `! cmd`, the output's tail (all of it when expanded), and a non-zero exit code.
fn shell(
    command: &str,
    output: &str,
    exit_code: Option<i32>,
    key: RenderKey,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let user = theme.style(Role::User);
    let dim = theme.style(Role::Dim);
    let mut out = hang(plain(command, user), Span::styled("! ", user), key.width);
    let lines: Vec<&str> = output.lines().collect();
    let keep = if key.expanded {
        lines.len()
    } else {
        SHELL_TAIL
    };
    let hidden = lines.len().saturating_sub(keep);
    if hidden > 0 {
        out.push(Line::styled(format!("  … {hidden} lines above"), dim));
    }
    let tail: Vec<Line<'static>> = lines[hidden..]
        .iter()
        .map(|l| Line::styled((*l).to_string(), dim))
        .collect();
    out.extend(hang(tail, Span::styled("  ", dim), key.width));
    if let Some(code) = exit_code.filter(|c| *c != 0) {
        out.push(Line::styled(
            format!("  exit code {code}"),
            theme.style(Role::Error),
        ));
    }
    out
}

/// Text as lines of one style, one per line of the text.
pub(crate) fn plain(text: &str, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .map(|l| Line::styled(l.to_string(), style))
        .collect()
}

/// Wraps `lines` beside a prefix: the prefix in front of the first row, blanks of its width
/// in front of the rest, so wrapped text stays aligned under itself.
pub(crate) fn hang(
    lines: Vec<Line<'static>>,
    first: Span<'static>,
    width: u16,
) -> Vec<Line<'static>> {
    let indent = first.content.width();
    let inner = width.saturating_sub(indent as u16).max(1);
    let blank = " ".repeat(indent);
    render::wrap(lines, inner)
        .into_iter()
        .enumerate()
        .map(|(i, mut line)| {
            let prefix = if i == 0 {
                first.clone()
            } else {
                Span::styled(blank.clone(), first.style)
            };
            if !prefix.content.is_empty() {
                line.spans.insert(0, prefix);
            }
            line
        })
        .collect()
}

/// Puts `indent` blank columns in front of each line (a subagent's activity).
pub(crate) fn indent(lines: &[Line<'static>], indent: usize) -> Vec<Line<'static>> {
    let pad = " ".repeat(indent);
    lines
        .iter()
        .map(|line| {
            let mut line = line.clone();
            line.spans.insert(0, Span::raw(pad.clone()));
            line
        })
        .collect()
}
