//! The Ultraplan pill at the left of the footer row: `◇ ultraplan` while the remote session
//! explores, `◇ ultraplan needs your input` when it waits for a reply, `◆ ultraplan ready`
//! when a plan waits for a decision. The driver sends the phase ([`crate::UiEvent::Ultraplan`]);
//! the pill goes away when the session ends.

use super::text::{cut, width};
use crate::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// What the pill shows: the remote session's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UltraplanPill {
    Running,
    NeedsInput,
    Ready,
}

impl UltraplanPill {
    /// The pill's words, icon included.
    pub fn text(self) -> &'static str {
        match self {
            Self::Running => "◇ ultraplan",
            Self::NeedsInput => "◇ ultraplan needs your input",
            Self::Ready => "◆ ultraplan ready",
        }
    }

    fn icon_role(self) -> Role {
        match self {
            Self::Running => Role::Accent,
            Self::NeedsInput => Role::Warning,
            Self::Ready => Role::Success,
        }
    }
}

/// Between the pill and the task pills beside it.
const GAP: u16 = 2;

/// Draws `pill` at the left of `area`; the area left for the task pills.
pub fn render(pill: Option<UltraplanPill>, area: Rect, buf: &mut Buffer, theme: &Theme) -> Rect {
    let Some(pill) = pill else { return area };
    if area.height == 0 || area.width == 0 {
        return area;
    }
    let text = cut(pill.text(), usize::from(area.width));
    let (icon, words) = text.split_at(text.char_indices().nth(2).map_or(text.len(), |(i, _)| i));
    let line = Line::from(vec![
        Span::styled(icon.to_string(), theme.style(pill.icon_role())),
        Span::styled(words.to_string(), theme.style(Role::Text)),
    ]);
    buf.set_line(area.x, area.y, &line, area.width);
    let used = (width(&text) as u16).saturating_add(GAP).min(area.width);
    Rect {
        x: area.x + used,
        width: area.width - used,
        ..area
    }
}
