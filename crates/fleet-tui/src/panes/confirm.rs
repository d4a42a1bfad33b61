//! A question with a few lettered answers, such as "2 background tasks are running. Quit?
//! (s) stop them and quit · (w) wait for them · (c) cancel". The answer is the option's
//! letter; Esc picks the last option, which by convention is the harmless one.

use super::text::{cut, draw_lines, frame, framed_height, width, wrapped_lines, FRAME_COLUMNS};
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

#[derive(Debug)]
pub struct Confirm {
    pub question: String,
    pub options: Vec<(char, String)>,
    selected: usize,
}

impl Confirm {
    pub fn new(question: impl Into<String>, options: Vec<(char, String)>) -> Self {
        Self {
            question: question.into(),
            options,
            selected: 0,
        }
    }

    /// The chosen option's letter, once there is one.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<char> {
        let last = self.options.len().saturating_sub(1);
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return None;
        }
        match key.code {
            KeyCode::Esc => return self.options.last().map(|(c, _)| *c),
            KeyCode::Enter => return self.options.get(self.selected).map(|(c, _)| *c),
            KeyCode::Left | KeyCode::Up | KeyCode::BackTab => {
                self.selected = self.selected.saturating_sub(1)
            }
            KeyCode::Right | KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(last)
            }
            KeyCode::Char(c) => {
                return self
                    .options
                    .iter()
                    .find(|(o, _)| o.eq_ignore_ascii_case(&c))
                    .map(|(o, _)| *o)
            }
            _ => {}
        }
        None
    }

    pub fn height(&self, width: u16) -> u16 {
        framed_height(self.lines(
            usize::from(width.saturating_sub(FRAME_COLUMNS)),
            &Theme::mono(),
        ))
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width < 2 || area.height < 2 {
            return;
        }
        let block = frame(theme.style(Role::Warning));
        let inner = block.inner(area);
        block.render(area, buf);
        draw_lines(&self.lines(usize::from(inner.width), theme), inner, buf);
    }

    /// The question, then the options on one row when they fit, else one per row.
    fn lines(&self, w: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = wrapped_lines(&self.question, w, "", theme.style(Role::Text));
        let labels: Vec<String> = self
            .options
            .iter()
            .map(|(c, text)| format!("({c}) {text}"))
            .collect();
        let style = |i: usize| {
            theme.style(if i == self.selected {
                Role::Selected
            } else {
                Role::Text
            })
        };
        let one_row = labels.iter().map(|l| width(l)).sum::<usize>() + 3 * labels.len();
        if one_row <= w {
            let mut spans = Vec::new();
            for (i, label) in labels.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" · ", theme.style(Role::Dim)));
                }
                spans.push(Span::styled(label, style(i)));
            }
            out.push(Line::from(spans));
        } else {
            for (i, label) in labels.into_iter().enumerate() {
                let marker = if i == self.selected { "❯ " } else { "  " };
                out.push(Line::from(vec![
                    Span::styled(marker, theme.style(Role::Accent)),
                    Span::styled(cut(&label, w.saturating_sub(2)), style(i)),
                ]));
            }
        }
        out
    }
}
