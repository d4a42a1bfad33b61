//! The header row of a pane teammate: who this session is, so a person looking at a grid of
//! panes knows which one they are typing into.
//!
//! `● alpha · teammate in session-1a2b3c4d · general-purpose · lead: team-lead`, the dot and
//! the name in the teammate's colour (its pane border's). On a narrow screen the row gives up
//! detail in a fixed order — the lead's name, then the agent type — and then cuts the team's
//! name; the name itself goes last. The word "teammate" says the mode, so `NO_COLOR` loses
//! nothing.

use super::text::{cut, width};
use crate::port::TeammateIdentity;
use crate::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The lead's member name: fixed by the team protocol, whatever the lead's session is called.
pub const LEAD_NAME: &str = "team-lead";

const SEPARATOR: &str = " · ";

pub fn render(identity: &TeammateIdentity, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let line = line(identity, usize::from(area.width), theme);
    buf.set_line(area.x, area.y, &line, area.width);
}

/// The header at `max` cells (never wider).
pub fn line(identity: &TeammateIdentity, max: usize, theme: &Theme) -> Line<'static> {
    let name = one_line(&identity.name);
    let team = one_line(&identity.team);
    let agent_type = one_line(&identity.agent_type);
    let who = format!("● {name}");
    let mode = if team.is_empty() {
        "teammate".to_string()
    } else {
        format!("teammate in {team}")
    };
    let lead = format!("lead: {LEAD_NAME}");
    let who_style = theme.team(&identity.color);
    let dim = theme.style(Role::Dim);
    let mut extras: Vec<String> = Vec::new();
    if !agent_type.is_empty() {
        extras.push(agent_type);
    }
    extras.push(lead);
    // Whole parts while they fit, dropping the extras from the right.
    for keep in (0..=extras.len()).rev() {
        let kept = &extras[..keep];
        let total = width(&who)
            + width(SEPARATOR)
            + width(&mode)
            + kept
                .iter()
                .map(|e| width(SEPARATOR) + width(e))
                .sum::<usize>();
        if total <= max {
            let mut spans = vec![
                Span::styled(who.clone(), who_style),
                Span::styled(SEPARATOR, dim),
                Span::styled(mode.clone(), theme.style(Role::Text)),
            ];
            for extra in kept {
                spans.push(Span::styled(SEPARATOR, dim));
                spans.push(Span::styled(extra.clone(), dim));
            }
            return Line::from(spans);
        }
    }
    // The mode cut after the name, or the name alone, cut.
    let head = width(&who) + width(SEPARATOR);
    if head < max {
        return Line::from(vec![
            Span::styled(who, who_style),
            Span::styled(SEPARATOR, dim),
            Span::styled(cut(&mode, max - head), theme.style(Role::Text)),
        ]);
    }
    Line::from(Span::styled(cut(&who, max), who_style))
}

/// Control characters and line breaks as spaces: a name is one row and drives nothing.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}
