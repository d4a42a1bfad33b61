//! The inline permission prompt: which agent asks, the call (for a Write or Edit, the path
//! and the diff of what it would change), and four answers (allow once,
//! allow always with the rule it writes, deny, deny with feedback typed in place). A pane
//! teammate's question that can be forwarded has a fifth: ask the team's lead, whose answer
//! comes back by mail.
//!
//! Subagents and background agents ask too, so the title names the asker: a person must
//! never approve a background agent's `rm` believing the main agent asked.
//!
//! The box shows the whole call whatever its shape or the terminal's height, because what is
//! not seen is approved too: `git status`, a hundred blank lines and `touch …` must not read
//! as `git status`. The rows of the call come from [`call_view`]; this module shares the rows
//! the box gets among its parts by what matters most: the answers first (compacted into a
//! row or two when the full list does not fit), then the call's last rows and the count of
//! what is hidden, then the key hint, then the rest of the call (scrolled with PgUp/PgDn,
//! Home/End), then a blank separator, and the description last.
//!
//! - `call_view`: the call as rows, and fitting them into fewer rows.
//! - `answers`: the answers as a full or a compact list.
//! - `diff_view`: a Write's or Edit's change as diff rows with the file's line numbers.

mod answers;
mod call_view;
mod diff_view;

use super::escape::escaped;
use super::field::LineField;
use super::text::{cut, draw_lines, frame, wrap, FRAME_COLUMNS};
use crate::port::{PermissionAnswer, PermissionAsk};
use crate::theme::{Role, Theme};
use answers::Choice;
use call_view::{fit, rows, Fitted, COMMAND, PLAIN};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use serde_json::Value;
use std::cell::Cell;

/// Rows of the description at most: it is the checker's summary, the call itself is below.
const DESCRIPTION_ROWS: usize = 2;

/// Rows of the call the full list of answers must leave; with fewer, the answers are
/// compacted so that the call keeps enough rows to be read around its end (a wrapped last
/// line can take two rows by itself).
const CALL_BESIDE_FULL: usize = 4;

#[derive(Debug)]
pub struct PermissionPrompt {
    pub ask: PermissionAsk,
    selected: usize,
    /// `Some` while the person types what the model should do instead.
    feedback: Option<LineField>,
    /// Rows the call is scrolled down from its top, when it does not fit.
    scroll: usize,
    /// What the last frame measured: the largest useful scroll and one page, so the keys
    /// move within what is drawn.
    scroll_room: Cell<(usize, usize)>,
}

/// The box's content for one size.
struct Arranged {
    lines: Vec<Line<'static>>,
    fitted: Fitted,
}

impl PermissionPrompt {
    pub fn new(ask: PermissionAsk) -> Self {
        Self {
            ask,
            selected: 0,
            feedback: None,
            scroll: 0,
            scroll_room: Cell::new((0, 1)),
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
        if self.scroll_key(key) {
            return None;
        }
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

    /// PgUp / PgDn scroll the call a page, Home / End to its top and bottom (not while the
    /// feedback field is open: there they move its cursor). Whether `key` was one of them.
    fn scroll_key(&mut self, key: KeyEvent) -> bool {
        let (max, page) = self.scroll_room.get();
        let current = self.scroll.min(max);
        self.scroll = match key.code {
            KeyCode::PageUp => current.saturating_sub(page),
            KeyCode::PageDown => (current + page).min(max),
            KeyCode::Home if self.feedback.is_none() => 0,
            KeyCode::End if self.feedback.is_none() => max,
            _ => return false,
        };
        true
    }

    /// Pastes into the feedback field; ignored while the answers are shown, so a stray
    /// paste can never pick one.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(field) = &mut self.feedback {
            field.insert_str(text);
        }
    }

    /// Rows the box wants at `width`: everything, the whole call included.
    pub fn height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(FRAME_COLUMNS));
        let rows = self.arrange(inner, usize::MAX, &Theme::mono()).lines.len() + 2;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    /// Rows the box needs at `width` to show the full list of answers, the call's last rows
    /// with the count of what is hidden, and the key hint. The app gives it at least this
    /// much when the terminal has it; with less, the answers are compacted, never cut.
    pub fn min_height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(FRAME_COLUMNS));
        let theme = Theme::mono();
        let call = self.call_rows(inner, &theme).len().min(CALL_BESIDE_FULL);
        let rows = 2 + self.answer_rows(inner, &theme).0.len() + call + 1;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width < 2 || area.height == 0 {
            return;
        }
        let inner_width = usize::from(area.width.saturating_sub(FRAME_COLUMNS));
        let (_, compact) = self.answer_rows(inner_width, theme);
        let call = self.call_rows(inner_width, theme).len().min(2);
        // Too short for a frame around the least the box must show: no frame, then.
        let framed = usize::from(area.height) >= 2 + compact.len() + call;
        let inner = if framed {
            let title_room = usize::from(area.width).saturating_sub(4);
            let block = frame(theme.style(Role::Warning)).title(Span::styled(
                format!(" {} ", cut(&self.title(), title_room.saturating_sub(2))),
                theme.style(Role::Tool),
            ));
            let inner = block.inner(area);
            block.render(area, buf);
            inner
        } else {
            area
        };
        let arranged = self.arrange(usize::from(inner.width), usize::from(inner.height), theme);
        self.scroll_room
            .set((arranged.fitted.max_scroll, arranged.fitted.page));
        draw_lines(&arranged.lines, inner, buf);
    }

    /// `Bash — asked by Explore (map the crate)` for a subagent; the tool alone for the main
    /// agent.
    fn title(&self) -> String {
        // By id, not by parentage: a pane teammate asks through its lead with no parent call.
        let main = self.ask.agent.agent_id == "main";
        let title = match &self.ask.agent.subagent {
            Some(label) if !main => format!(
                "{} — asked by {} ({})",
                self.ask.tool, label.subagent_type, label.description
            ),
            _ if !main => {
                format!("{} — asked by {}", self.ask.tool, self.ask.agent.agent_id)
            }
            _ => self.ask.tool.clone(),
        };
        escaped(&title)
    }

    /// The box's lines in `rows` rows of `width` cells, shared out as the module doc says.
    fn arrange(&self, width: usize, rows: usize, theme: &Theme) -> Arranged {
        let call = self.call_rows(width, theme);
        let (full, compact) = self.answer_rows(width, theme);
        let call_least = call.len().min(2);
        let answers = if full.len() + call.len().min(CALL_BESIDE_FULL) <= rows {
            full
        } else {
            compact
        };
        let mut left = rows.saturating_sub(answers.len());
        let mut call_room = call_least.min(left);
        left -= call_room;
        // The hint names the scroll keys, which matter only while rows are hidden: when the
        // rest of the call fits, it goes first.
        let hidden = call.len() - call_room;
        let hint_rows;
        if hidden <= left {
            call_room += hidden;
            left -= hidden;
            hint_rows = left.min(1);
            left -= hint_rows;
        } else {
            hint_rows = left.min(1);
            call_room += left - hint_rows;
            left = 0;
        }
        let separator = left.min(1);
        left -= separator;
        let mut lines = self.description_lines(width, left, theme);
        let mut fitted = fit(call, call_room, self.scroll, theme.style(Role::Dim));
        lines.append(&mut fitted.lines);
        lines.extend(std::iter::repeat_n(Line::default(), separator));
        lines.extend(answers);
        if hint_rows > 0 {
            lines.push(self.hint(fitted.elided, width, theme));
        }
        Arranged { lines, fitted }
    }

    /// The check's description, on one line ([`flattened`]) and cut to at most `room` rows;
    /// left out when it only repeats the command shown in full below it.
    fn description_lines(&self, width: usize, room: usize, theme: &Theme) -> Vec<Line<'static>> {
        let description = &self.ask.description;
        let repeats = self
            .field("command")
            .is_some_and(|c| *description == format!("{} command `{}`", self.ask.tool, c.trim()));
        if description.is_empty() || repeats {
            return Vec::new();
        }
        let room = room.min(DESCRIPTION_ROWS);
        let mut rows = wrap(&flattened(description), width);
        if rows.len() > room {
            rows.truncate(room);
            if let Some(last) = rows.last_mut() {
                *last = cut(&format!("{last}…"), width);
            }
        }
        rows.into_iter()
            .map(|r| Line::from(Span::styled(r, theme.style(Role::Text))))
            .collect()
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.ask.input.get(name).and_then(Value::as_str)
    }

    /// The call itself, every row of it: Bash's command, a file tool's path (and the diff of
    /// the change it would make, when the tool worked it out), anything else as compact JSON.
    fn call_rows(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let code = theme.style(Role::Code);
        let dim = theme.style(Role::Dim);
        let path = || {
            self.field("file_path")
                .or_else(|| self.field("notebook_path"))
        };
        match self.ask.tool.as_str() {
            "Bash" => {
                if let Some(command) = self.field("command") {
                    return rows(command, width, COMMAND, code, dim);
                }
            }
            "Edit" | "Write" | "MultiEdit" | "Read" | "NotebookEdit" => {
                if let Some(path) = path() {
                    let mut out = rows(path, width, PLAIN, code, dim);
                    if let Some(change) = &self.ask.change {
                        out.extend(diff_view::rows(change, width, theme));
                    }
                    return out;
                }
            }
            _ => {}
        }
        let json = serde_json::to_string(&self.ask.input).unwrap_or_default();
        if json == "{}" || json == "null" {
            return Vec::new();
        }
        rows(&json, width, PLAIN, code, dim)
    }

    /// The answers as the full list and as the compact one; while the feedback field is open,
    /// its question and the field, and the field alone.
    fn answer_rows(&self, width: usize, theme: &Theme) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
        if let Some(field) = &self.feedback {
            let mut line = Line::from(Span::styled("> ", theme.style(Role::Accent)));
            line.spans
                .extend(field.line(width.saturating_sub(2), true, theme).spans);
            let mut full: Vec<Line<'static>> =
                wrap("Tell the model what to do differently:", width)
                    .into_iter()
                    .map(|r| Line::from(Span::styled(r, theme.style(Role::Text))))
                    .collect();
            full.push(line.clone());
            return (full, vec![line]);
        }
        let choices = self.choices();
        let rule = self.ask.suggested_rule.as_deref();
        (
            answers::full(&choices, self.selected, rule, width, theme),
            answers::compact(&choices, self.selected, width, theme),
        )
    }

    fn hint(&self, elided: bool, width: usize, theme: &Theme) -> Line<'static> {
        let keys = if self.feedback.is_some() {
            "Enter send · Esc back"
        } else {
            "↑↓ Enter · number · Esc no"
        };
        let text = if elided {
            format!("PgUp/PgDn scroll · {keys}")
        } else {
            keys.to_string()
        };
        Line::from(Span::styled(cut(&text, width), theme.style(Role::Dim)))
    }
}

/// `text` as one line: each run of line breaks written `⏎` (`⏎×80` for a run of 80), the
/// rest escaped. For the description, a summary: the call itself is shown line by line.
fn flattened(text: &str) -> String {
    let mut out = String::new();
    let mut breaks = 0;
    for part in text.split('\n') {
        if part.is_empty() {
            breaks += 1;
            continue;
        }
        if !out.is_empty() || breaks > 0 {
            match breaks + usize::from(!out.is_empty()) {
                0 | 1 => out.push_str(" ⏎ "),
                n => out.push_str(&format!(" ⏎×{n} ")),
            }
        }
        breaks = 0;
        out.push_str(&escaped(part));
    }
    match breaks {
        0 => {}
        1 => out.push_str(" ⏎"),
        n => out.push_str(&format!(" ⏎×{n}")),
    }
    out
}
