//! The answers a permission question offers, as rows: the full list (one numbered answer per
//! row, "allow always" naming the rule it writes) and a compact list packed into as few rows
//! as the width allows, for a box too short for the full one. Either way every answer is on
//! screen with its number and letter: the box never cuts its answers.

use crate::panes::escape::escaped;
use crate::panes::teammate::LEAD_NAME;
use crate::panes::text::{cut, width as width_of, wrap};
use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};

/// Rows one answer of the full list takes at most; a longer one (a long rule) ends in `…`.
const ANSWER_ROWS: usize = 3;

/// One of the answers, in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Choice {
    Once,
    Always,
    Deny,
    Feedback,
    AskLead,
}

impl Choice {
    pub(super) fn letter(self) -> char {
        match self {
            Choice::Once => 'y',
            Choice::Always => 'a',
            Choice::Deny => 'n',
            Choice::Feedback => 'f',
            Choice::AskLead => 'l',
        }
    }

    /// The label of the full list.
    fn text(self, rule: Option<&str>) -> String {
        match self {
            Choice::Once => "Yes".to_string(),
            Choice::Always => format!(
                "Yes, and don't ask again for {}",
                escaped(rule.unwrap_or_default())
            ),
            Choice::Deny => "No".to_string(),
            Choice::Feedback => "No, and tell the model what to do differently".to_string(),
            Choice::AskLead => format!("Ask {LEAD_NAME} (their answer comes back by mail)"),
        }
    }

    /// The label of the compact list.
    fn short(self) -> &'static str {
        match self {
            Choice::Once => "Yes",
            Choice::Always => "Always",
            Choice::Deny => "No",
            Choice::Feedback => "No, say why",
            Choice::AskLead => "Ask lead",
        }
    }
}

/// The full list: `❯ 1. Yes (y)`, one answer per row (wrapped under its text).
pub(super) fn full(
    choices: &[Choice],
    selected: usize,
    rule: Option<&str>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (index, &choice) in choices.iter().enumerate() {
        let chosen = index == selected;
        let marker = if chosen { "❯ " } else { "  " };
        let number = format!("{}. ", index + 1);
        let label = format!("{} ({})", choice.text(rule), choice.letter());
        let style = theme.style(if chosen { Role::Selected } else { Role::Text });
        let lead_cells = width_of(marker) + width_of(&number);
        let room = width.saturating_sub(lead_cells);
        let mut rows = wrap(&label, room);
        if rows.len() > ANSWER_ROWS {
            rows.truncate(ANSWER_ROWS);
            if let Some(last) = rows.last_mut() {
                *last = cut(&format!("{last}…"), room);
            }
        }
        for (row, part) in rows.into_iter().enumerate() {
            let mut spans = if row == 0 {
                vec![
                    Span::styled(marker, theme.style(Role::Accent)),
                    Span::styled(number.clone(), style),
                ]
            } else {
                vec![Span::raw(" ".repeat(lead_cells))]
            };
            spans.push(Span::styled(part, style));
            out.push(Line::from(spans));
        }
    }
    out
}

/// The compact list: `❯ 1. Yes (y)  2. Always (a)  3. No (n) …`, answers packed into rows,
/// none split across two.
pub(super) fn compact(
    choices: &[Choice],
    selected: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (index, &choice) in choices.iter().enumerate() {
        let chosen = index == selected;
        let marker = if chosen { "❯ " } else { "" };
        let label = format!(
            "{marker}{}. {} ({})",
            index + 1,
            choice.short(),
            choice.letter()
        );
        let label = cut(&label, width);
        let cells = width_of(&label);
        if used > 0 && used + 2 + cells > width {
            out.push(Line::from(std::mem::take(&mut row)));
            used = 0;
        }
        if used > 0 {
            row.push(Span::raw("  "));
            used += 2;
        }
        let style = theme.style(if chosen { Role::Selected } else { Role::Text });
        row.push(Span::styled(label, style));
        used += cells;
    }
    if !row.is_empty() {
        out.push(Line::from(row));
    }
    out
}
