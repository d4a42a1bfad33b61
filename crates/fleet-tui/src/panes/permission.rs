//! The inline permission prompt: which agent asks, the call, and four answers (allow once,
//! allow always with the rule it writes, deny, deny with feedback typed in place). A pane
//! teammate's question that can be forwarded has a fifth: ask the team's lead, whose answer
//! comes back by mail.
//!
//! Subagents and background agents ask too, so the title names the asker: a person must
//! never approve a background agent's `rm` believing the main agent asked.

use super::field::LineField;
use super::teammate::LEAD_NAME;
use super::text::{cut, draw_lines, frame, width as width_of, wrap, wrapped_lines, FRAME_COLUMNS};
use crate::port::{PermissionAnswer, PermissionAsk};
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use serde_json::Value;

/// Rows of a non-Bash input summary before it is cut.
const INPUT_ROWS: usize = 3;

/// One of the answers, in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Always,
    Deny,
    Feedback,
    AskLead,
}

impl Choice {
    fn letter(self) -> char {
        match self {
            Choice::Once => 'y',
            Choice::Always => 'a',
            Choice::Deny => 'n',
            Choice::Feedback => 'f',
            Choice::AskLead => 'l',
        }
    }
}

#[derive(Debug)]
pub struct PermissionPrompt {
    pub ask: PermissionAsk,
    selected: usize,
    /// `Some` while the person types what the model should do instead.
    feedback: Option<LineField>,
}

impl PermissionPrompt {
    pub fn new(ask: PermissionAsk) -> Self {
        Self {
            ask,
            selected: 0,
            feedback: None,
        }
    }

    /// Whether the feedback field is open (the app may show a different hint).
    pub fn is_typing_feedback(&self) -> bool {
        self.feedback.is_some()
    }

    /// "Allow always" is offered only when there is a rule to write, "ask the lead" only when
    /// the driver can forward the question.
    fn choices(&self) -> Vec<Choice> {
        let mut out = vec![Choice::Once];
        if self.ask.suggested_rule.is_some() {
            out.push(Choice::Always);
        }
        out.extend([Choice::Deny, Choice::Feedback]);
        if self.ask.forwardable {
            out.push(Choice::AskLead);
        }
        out
    }

    fn choose(&mut self, choice: Choice) -> Option<PermissionAnswer> {
        match choice {
            Choice::Once => Some(PermissionAnswer::AllowOnce),
            Choice::Always => Some(PermissionAnswer::AllowAlways),
            Choice::Deny => Some(PermissionAnswer::Deny),
            Choice::AskLead => Some(PermissionAnswer::AskLead),
            Choice::Feedback => {
                if let Some(i) = self.choices().iter().position(|c| *c == choice) {
                    self.selected = i;
                }
                self.feedback = Some(LineField::default());
                None
            }
        }
    }

    /// `Some` once the person has answered.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<PermissionAnswer> {
        if let Some(field) = &mut self.feedback {
            match key.code {
                KeyCode::Enter => {
                    let text = field.text().trim().to_string();
                    return Some(if text.is_empty() {
                        PermissionAnswer::Deny
                    } else {
                        PermissionAnswer::DenyWithFeedback(text)
                    });
                }
                KeyCode::Esc => self.feedback = None,
                _ => {
                    field.handle_key(key);
                }
            }
            return None;
        }
        let choices = self.choices();
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return None;
        }
        match key.code {
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(choices.len() - 1),
            KeyCode::Enter => return self.choose(choices[self.selected.min(choices.len() - 1)]),
            KeyCode::Esc => return Some(PermissionAnswer::Deny),
            KeyCode::Char(c) => {
                let by_number = c
                    .to_digit(10)
                    .and_then(|d| (d as usize).checked_sub(1))
                    .and_then(|i| choices.get(i).copied());
                let lower = c.to_ascii_lowercase();
                let by_letter = choices.iter().copied().find(|ch| ch.letter() == lower);
                if let Some(choice) = by_number.or(by_letter) {
                    return self.choose(choice);
                }
            }
            _ => {}
        }
        None
    }

    /// Pastes into the feedback field; ignored while the answers are shown, so a stray
    /// paste can never pick one.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(field) = &mut self.feedback {
            field.insert_str(text);
        }
    }

    pub fn height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(FRAME_COLUMNS));
        let rows = self.lines(inner, &Theme::mono()).len() + 2;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width < 2 || area.height < 2 {
            return;
        }
        let title_room = usize::from(area.width).saturating_sub(4);
        let block = frame(theme.style(Role::Warning)).title(Span::styled(
            format!(" {} ", cut(&self.title(), title_room.saturating_sub(2))),
            theme.style(Role::Tool),
        ));
        let inner = block.inner(area);
        block.render(area, buf);
        draw_lines(&self.lines(usize::from(inner.width), theme), inner, buf);
    }

    /// `Bash — asked by Explore (map the crate)` for a subagent; the tool alone for the main
    /// agent.
    fn title(&self) -> String {
        // By id, not by parentage: a pane teammate asks through its lead with no parent call.
        let main = self.ask.agent.agent_id == "main";
        match &self.ask.agent.subagent {
            Some(label) if !main => format!(
                "{} — asked by {} ({})",
                self.ask.tool, label.subagent_type, label.description
            ),
            _ if !main => {
                format!("{} — asked by {}", self.ask.tool, self.ask.agent.agent_id)
            }
            _ => self.ask.tool.clone(),
        }
    }

    fn lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if !self.ask.description.is_empty() {
            out.extend(wrapped_lines(
                &self.ask.description,
                width,
                "",
                theme.style(Role::Text),
            ));
        }
        out.extend(self.input_lines(width, theme));
        out.push(Line::default());
        match &self.feedback {
            Some(field) => {
                out.extend(wrapped_lines(
                    "Tell the model what to do differently:",
                    width,
                    "",
                    theme.style(Role::Text),
                ));
                let mut line = Line::from(Span::styled("> ", theme.style(Role::Accent)));
                line.spans
                    .extend(field.line(width.saturating_sub(2), true, theme).spans);
                out.push(line);
                out.push(hint("Enter send · Esc back", width, theme));
            }
            None => {
                for (i, choice) in self.choices().into_iter().enumerate() {
                    out.extend(self.choice_lines(i, choice, width, theme));
                }
                out.push(hint("↑↓ Enter · number · Esc no", width, theme));
            }
        }
        out
    }

    fn choice_lines(
        &self,
        index: usize,
        choice: Choice,
        width: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let text = match choice {
            Choice::Once => "Yes".to_string(),
            Choice::Always => format!(
                "Yes, and don't ask again for {}",
                self.ask.suggested_rule.as_deref().unwrap_or_default()
            ),
            Choice::Deny => "No".to_string(),
            Choice::Feedback => "No, and tell the model what to do differently".to_string(),
            Choice::AskLead => format!("Ask {LEAD_NAME} (their answer comes back by mail)"),
        };
        let selected = index == self.selected;
        let marker = if selected { "❯ " } else { "  " };
        let number = format!("{}. ", index + 1);
        let label = format!("{text} ({})", choice.letter());
        let style = theme.style(if selected { Role::Selected } else { Role::Text });
        let lead_cells = width_of(marker) + width_of(&number);
        wrap(&label, width.saturating_sub(lead_cells))
            .into_iter()
            .enumerate()
            .map(|(row, part)| {
                let lead = if row == 0 {
                    vec![
                        Span::styled(marker.to_string(), theme.style(Role::Accent)),
                        Span::styled(number.clone(), style),
                    ]
                } else {
                    vec![Span::raw(" ".repeat(lead_cells))]
                };
                let mut spans = lead;
                spans.push(Span::styled(part, style));
                Line::from(spans)
            })
            .collect()
    }

    /// The call itself: Bash's command in full, a file tool's path, anything else as
    /// compact JSON cut to a few rows.
    fn input_lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let code = theme.style(Role::Code);
        let field = |name: &str| self.ask.input.get(name).and_then(Value::as_str);
        match self.ask.tool.as_str() {
            "Bash" => match field("command") {
                Some(command) => wrapped_lines(command, width, "  $ ", code),
                None => Vec::new(),
            },
            "Edit" | "Write" | "MultiEdit" | "Read" | "NotebookEdit" => {
                match field("file_path").or_else(|| field("notebook_path")) {
                    Some(path) => wrapped_lines(path, width, "  ", code),
                    None => Vec::new(),
                }
            }
            _ => {
                let json = serde_json::to_string(&self.ask.input).unwrap_or_default();
                if json == "{}" || json == "null" {
                    return Vec::new();
                }
                let room = width.saturating_sub(2);
                let mut rows = wrap(&json, room);
                if rows.len() > INPUT_ROWS {
                    rows.truncate(INPUT_ROWS);
                    if let Some(last) = rows.last_mut() {
                        *last = cut(&format!("{last}…"), room);
                    }
                }
                rows.into_iter()
                    .map(|r| Line::from(vec![Span::raw("  "), Span::styled(r, code)]))
                    .collect()
            }
        }
    }
}

fn hint(text: &str, width: usize, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(cut(text, width), theme.style(Role::Dim)))
}
