//! The footer row of background tasks: `◇ Explore: map the crate · 3 turns` while one runs,
//! `◆ Explore: map the crate · done` once it ended (until the next prompt). When they do
//! not all fit, descriptions shrink first, then the last pills give way to "+2 more".

use super::tasks::{TaskBoard, TaskEntry};
use super::text::{cut, width};
use crate::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// Between two pills.
const GAP: &str = "  ";
/// A label is not cut shorter than this (cells, the ellipsis included).
const MIN_LABEL: usize = 8;

/// Rows the footer needs: one when there is anything to show.
pub fn height(board: &TaskBoard) -> u16 {
    u16::from(!board.footer().is_empty())
}

pub fn render(board: &TaskBoard, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let line = line(&board.footer(), usize::from(area.width), theme);
    buf.set_line(area.x, area.y, &line, area.width);
}

/// One pill's parts: the icon, the label that may shrink, the tail that may not.
struct Pill {
    icon: &'static str,
    icon_role: Role,
    label: String,
    tail: String,
}

impl Pill {
    fn of(task: &TaskEntry) -> Self {
        let label = if task.description.is_empty() {
            task.kind_label().to_string()
        } else {
            format!("{}: {}", task.kind_label(), task.description)
        };
        let (icon, icon_role, tail) = match task.status.as_str() {
            "idle" => ("◇ ", Role::Dim, " · idle".to_string()),
            _ if task.is_live() => (
                "◇ ",
                Role::Accent,
                match task.turns {
                    // No reply yet: the model has the task's prompt and has not answered.
                    0 => " · waiting for model".to_string(),
                    1 => " · 1 turn".to_string(),
                    n => format!(" · {n} turns"),
                },
            ),
            "failed" => ("◆ ", Role::Error, " · failed".to_string()),
            "killed" => ("◆ ", Role::Warning, " · stopped".to_string()),
            _ => ("◆ ", Role::Success, " · done".to_string()),
        };
        Self {
            icon,
            icon_role,
            label,
            tail,
        }
    }

    fn fixed(&self) -> usize {
        width(self.icon) + width(&self.tail)
    }

    fn min_width(&self) -> usize {
        self.fixed() + width(&self.label).min(MIN_LABEL)
    }
}

fn more(hidden: usize) -> String {
    if hidden == 0 {
        String::new()
    } else {
        format!("{GAP}+{hidden} more")
    }
}

/// The footer line at `max` cells.
fn line(tasks: &[&TaskEntry], max: usize, theme: &Theme) -> Line<'static> {
    if tasks.is_empty() || max == 0 {
        return Line::default();
    }
    let pills: Vec<Pill> = tasks.iter().map(|t| Pill::of(t)).collect();
    // The most pills whose shortest forms fit beside the "+n more" of the rest.
    let shown = (1..=pills.len()).rev().find(|&k| {
        let need: usize = pills[..k].iter().map(Pill::min_width).sum::<usize>()
            + width(GAP) * (k - 1)
            + width(&more(pills.len() - k));
        need <= max
    });
    let Some(shown) = shown else {
        let text = format!("◇ {} background tasks", pills.len());
        return Line::from(Span::styled(cut(&text, max), theme.style(Role::Dim)));
    };
    let pills = &pills[..shown];
    let suffix = more(tasks.len() - shown);
    let fixed: usize =
        pills.iter().map(Pill::fixed).sum::<usize>() + width(GAP) * (shown - 1) + width(&suffix);
    let room = max.saturating_sub(fixed);
    let cap = label_cap(pills, room);

    let mut spans = Vec::new();
    for (i, pill) in pills.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(GAP));
        }
        spans.push(Span::styled(pill.icon, theme.style(pill.icon_role)));
        spans.push(Span::styled(cut(&pill.label, cap), theme.style(Role::Text)));
        spans.push(Span::styled(pill.tail.clone(), theme.style(Role::Dim)));
    }
    if !suffix.is_empty() {
        spans.push(Span::styled(suffix, theme.style(Role::Dim)));
    }
    Line::from(spans)
}

/// The largest label width such that every label, cut to it, fits in `room` together.
fn label_cap(pills: &[Pill], room: usize) -> usize {
    let longest = pills.iter().map(|p| width(&p.label)).max().unwrap_or(0);
    let total = |cap: usize| -> usize { pills.iter().map(|p| width(&p.label).min(cap)).sum() };
    (0..=longest)
        .rev()
        .find(|&cap| total(cap) <= room)
        .unwrap_or(0)
}
