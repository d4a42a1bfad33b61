//! `/agents new`: the short form that becomes `.claude/agents/<name>.md`. It checks what the
//! agent loader would reject (a name that is not a plain slug, a missing description or
//! prompt) before anything is written, and says so next to the field.

use super::field::LineField;
use super::text::{cut, draw_lines, frame, framed_height, pad, wrapped_lines, FRAME_COLUMNS};
use crate::port::NewAgent;
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormResult {
    Done(NewAgent),
    Cancelled,
}

/// The text fields, in order; the scope row comes after them.
const LABELS: [&str; 4] = ["Name", "Description", "Tools", "Prompt"];
const SCOPE: usize = 4;
/// Below this inner width a label sits above its value instead of beside it.
const SIDE_BY_SIDE: usize = 40;
const LABEL_CELLS: usize = 15;

#[derive(Debug, Default)]
pub struct AgentForm {
    fields: [LineField; 4],
    /// `false`: project (`.claude/agents`); `true`: user (`~/.claude/agents`).
    user_scope: bool,
    focus: usize,
    /// One message per field (index as `focus`), shown under it.
    errors: [Option<String>; 5],
}

impl AgentForm {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Option<FormResult> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Some(FormResult::Cancelled),
            KeyCode::Char('s') if ctrl => return self.submit(),
            KeyCode::Enter if self.focus == SCOPE => return self.submit(),
            KeyCode::Enter | KeyCode::Down => self.focus = (self.focus + 1).min(SCOPE),
            KeyCode::BackTab | KeyCode::Up => self.focus = self.focus.saturating_sub(1),
            KeyCode::Tab if self.focus < SCOPE => self.focus += 1,
            KeyCode::Tab | KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right
                if self.focus == SCOPE =>
            {
                self.user_scope = !self.user_scope
            }
            _ if self.focus < SCOPE && self.fields[self.focus].handle_key(key) => {
                self.errors[self.focus] = None;
            }
            _ => {}
        }
        None
    }

    pub fn handle_paste(&mut self, text: &str) {
        if let Some(field) = self.fields.get_mut(self.focus) {
            field.insert_str(text);
            self.errors[self.focus] = None;
        }
    }

    /// Checks every field; on an error, shows it and moves to the first field at fault.
    fn submit(&mut self) -> Option<FormResult> {
        let text = |i: usize| self.fields[i].text().trim().to_string();
        let name = text(0);
        self.errors = Default::default();
        if name.is_empty() {
            self.errors[0] = Some("a name is required".into());
        } else if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            self.errors[0] = Some("use lowercase letters, digits and hyphens".into());
        }
        if text(1).is_empty() {
            self.errors[1] = Some("say when to use this agent".into());
        }
        if text(3).is_empty() {
            self.errors[3] = Some("a prompt is required".into());
        }
        if let Some(first) = self.errors.iter().position(Option::is_some) {
            self.focus = first;
            return None;
        }
        let tools: Vec<String> = text(2)
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect();
        Some(FormResult::Done(NewAgent {
            name,
            description: text(1),
            tools: tools.join(", "),
            prompt: text(3),
            scope: if self.user_scope { "user" } else { "project" }.into(),
        }))
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
        let block = frame(theme.style(Role::Accent)).title(Span::styled(
            cut(" New agent ", usize::from(area.width).saturating_sub(2)),
            theme.style(Role::Heading),
        ));
        let inner = block.inner(area);
        block.render(area, buf);
        draw_lines(&self.lines(usize::from(inner.width), theme), inner, buf);
    }

    fn lines(&self, w: usize, theme: &Theme) -> Vec<Line<'static>> {
        let side = w >= SIDE_BY_SIDE;
        let mut out = Vec::new();
        for row in 0..=SCOPE {
            let focused = row == self.focus;
            let marker = if focused { "❯ " } else { "  " };
            let name = LABELS.get(row).copied().unwrap_or("Scope");
            let label_role = if focused { Role::Accent } else { Role::Text };
            let label = Span::styled(
                format!(
                    "{marker}{}",
                    if side {
                        pad(name, LABEL_CELLS - 2)
                    } else {
                        name.to_string()
                    }
                ),
                theme
                    .style(label_role)
                    .add_modifier(ratatui::style::Modifier::BOLD),
            );
            let value_room = if side {
                w.saturating_sub(LABEL_CELLS)
            } else {
                w.saturating_sub(4)
            };
            let value = self.value_line(row, value_room, focused, theme);
            if side {
                let mut line = Line::from(label);
                line.spans.extend(value.spans);
                out.push(line);
            } else {
                out.push(Line::from(label));
                let mut line = Line::from(Span::raw("    "));
                line.spans.extend(value.spans);
                out.push(line);
            }
            if let Some(err) = &self.errors[row] {
                let indent = if side {
                    pad("", LABEL_CELLS)
                } else {
                    "    ".into()
                };
                out.extend(wrapped_lines(
                    &format!("✗ {err}"),
                    w,
                    &indent,
                    theme.style(Role::Error),
                ));
            }
        }
        out.push(Line::default());
        out.push(Line::from(Span::styled(
            cut("Tab next · Shift+Tab back · Ctrl+S create · Esc cancel", w),
            theme.style(Role::Dim),
        )));
        out
    }

    fn value_line(&self, row: usize, room: usize, focused: bool, theme: &Theme) -> Line<'static> {
        if row == SCOPE {
            let (p, u) = if self.user_scope {
                (" ", "•")
            } else {
                ("•", " ")
            };
            let text = format!("({p}) project  ({u}) user");
            let text = if room < 24 {
                format!(
                    "{} (space)",
                    if self.user_scope { "user" } else { "project" }
                )
            } else {
                text
            };
            return Line::from(Span::styled(cut(&text, room), theme.style(Role::Text)));
        }
        let field = &self.fields[row];
        if field.text().is_empty() && !focused {
            let placeholder = match row {
                0 => "lowercase-with-hyphens",
                1 => "when to use it",
                2 => "all tools (or Read, Grep, …)",
                _ => "what the agent is told",
            };
            return Line::from(Span::styled(cut(placeholder, room), theme.style(Role::Dim)));
        }
        field.line(room, focused, theme)
    }
}
