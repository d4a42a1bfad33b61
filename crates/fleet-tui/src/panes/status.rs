//! The status line: model, permission mode, context used, session cost, running agents.
//!
//! `model · ⏵⏵ accept edits on (shift+tab to cycle)` on the left, `ctx 42% · $0.0123 ·
//! 2 agents running` on the right. On a narrow screen the line gives up detail in a fixed
//! order: the Shift+Tab hint, the model's length, the word "running", the model itself,
//! the mode's words (short ones first), and the cost; the mode's marker always stays.

use super::text::{cut, dollars, pad, width};
use crate::theme::{Role, Theme};
use fleet_protocol::PermissionMode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub model: String,
    /// `None` until the driver reports the mode: the line then shows no mode at all.
    pub permission_mode: Option<PermissionMode>,
    pub context_percent: Option<u8>,
    pub cost_usd: f64,
    /// The session has replies and none reported usage: there is no cost to show, and the
    /// line says so rather than look free.
    pub usage_unreported: bool,
    pub running_agents: usize,
    /// A short hint that replaces the right-hand side for a moment ("Ctrl+C again to quit").
    pub hint: Option<String>,
}

/// The model's name is not cut shorter than this.
const SHORT_MODEL: usize = 12;

pub fn render(status: &Status, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let line = line(status, usize::from(area.width), theme);
    buf.set_line(area.x, area.y, &line, area.width);
}

/// The mode's marker, its words, and its short words; the marker alone must say which
/// mode it is.
fn mode_parts(mode: Option<PermissionMode>) -> (&'static str, &'static str, &'static str) {
    match mode {
        None => ("", "", ""),
        Some(PermissionMode::Default) => ("⏵", "default mode", "default"),
        Some(PermissionMode::AcceptEdits) => ("⏵⏵", "accept edits on", "accept edits"),
        Some(PermissionMode::Plan) => ("⏸", "plan mode on", "plan"),
        Some(PermissionMode::BypassPermissions) => ("⚠", "bypass permissions on", "bypass"),
        Some(PermissionMode::DontAsk) => ("⊘", "don't ask on", "don't ask"),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Form {
    Long,
    Short,
    /// The mode's marker alone; the right side without the cost.
    Least,
}

/// How much detail a variant of the line keeps.
#[derive(Clone, Copy)]
struct Detail {
    cycle_hint: bool,
    model: Option<usize>,
    mode: Form,
    right: Form,
}

fn left(status: &Status, d: Detail) -> Vec<(String, Role)> {
    let mut parts = Vec::new();
    if let (Some(max), false) = (d.model, status.model.is_empty()) {
        parts.push((cut(&status.model, max), Role::Text));
    }
    let (marker, long, short) = mode_parts(status.permission_mode);
    if !marker.is_empty() {
        let mut mode = match d.mode {
            Form::Long => format!("{marker} {long}"),
            Form::Short => format!("{marker} {short}"),
            Form::Least => marker.to_string(),
        };
        if d.cycle_hint {
            mode.push_str(" (shift+tab to cycle)");
        }
        let role = match status.permission_mode {
            Some(PermissionMode::BypassPermissions) => Role::Error,
            Some(PermissionMode::Default) => Role::Dim,
            _ => Role::Warning,
        };
        parts.push((mode, role));
    }
    parts
}

fn right(status: &Status, form: Form) -> Vec<(String, Role)> {
    if let Some(hint) = &status.hint {
        return vec![(hint.clone(), Role::Warning)];
    }
    let mut parts = Vec::new();
    if let Some(pct) = status.context_percent {
        let role = if pct >= 80 { Role::Warning } else { Role::Dim };
        parts.push((format!("ctx {pct}%"), role));
    }
    if status.cost_usd > 0.0 && form != Form::Least {
        parts.push((dollars(status.cost_usd), Role::Dim));
    } else if status.usage_unreported && form != Form::Least {
        parts.push(("usage not reported".to_string(), Role::Dim));
    }
    let agents = match status.running_agents {
        0 => None,
        1 => Some("1 agent".to_string()),
        n => Some(format!("{n} agents")),
    };
    if let Some(mut agents) = agents {
        if form == Form::Long {
            agents.push_str(" running");
        }
        parts.push((agents, Role::Accent));
    }
    parts
}

fn joined_width(parts: &[(String, Role)]) -> usize {
    let seps = parts.len().saturating_sub(1) * 3;
    parts.iter().map(|(t, _)| width(t)).sum::<usize>() + seps
}

fn spans(parts: Vec<(String, Role)>, theme: &Theme) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    for (i, (text, role)) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(Span::styled(" · ", theme.style(Role::Dim)));
        }
        out.push(Span::styled(text, theme.style(role)));
    }
    out
}

/// The status line at `max` cells.
pub fn line(status: &Status, max: usize, theme: &Theme) -> Line<'static> {
    let full = Detail {
        cycle_hint: true,
        model: Some(usize::MAX),
        mode: Form::Long,
        right: Form::Long,
    };
    let plain = Detail {
        cycle_hint: false,
        ..full
    };
    let variants = [
        full,
        plain,
        Detail {
            model: Some(SHORT_MODEL),
            ..plain
        },
        Detail {
            model: Some(SHORT_MODEL),
            right: Form::Short,
            ..plain
        },
        Detail {
            model: None,
            right: Form::Short,
            ..plain
        },
        Detail {
            model: None,
            mode: Form::Short,
            right: Form::Short,
            ..plain
        },
        Detail {
            model: None,
            mode: Form::Short,
            right: Form::Least,
            ..plain
        },
        Detail {
            model: None,
            mode: Form::Least,
            right: Form::Least,
            ..plain
        },
    ];
    for d in variants {
        let l = left(status, d);
        let r = right(status, d.right);
        let (lw, rw) = (joined_width(&l), joined_width(&r));
        let gap = if l.is_empty() || r.is_empty() { 0 } else { 2 };
        if lw + gap + rw <= max {
            let mut out = spans(l, theme);
            out.push(Span::raw(pad("", max - lw - rw)));
            out.extend(spans(r, theme));
            return Line::from(out);
        }
    }
    // Nothing fits whole: the shortest form, cut.
    let last = variants[variants.len() - 1];
    let mut parts = left(status, last);
    parts.extend(right(status, Form::Least));
    let text: Vec<String> = parts.into_iter().map(|(t, _)| t).collect();
    Line::from(Span::styled(
        cut(&text.join(" · "), max),
        theme.style(Role::Dim),
    ))
}
