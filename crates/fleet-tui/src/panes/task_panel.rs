//! The task panel (Ctrl+T, `/tasks`): every task of the session with its state and
//! counters; from here a person views a task's transcript, stops it, or sends it a message.
//! The panel keeps only the selection and the message being typed; the tasks themselves
//! are read from the [`TaskBoard`] at every key and frame, so they are never stale.

use super::field::LineField;
use super::tasks::{TaskBoard, TaskEntry};
use super::text::{cut, draw_lines, duration, frame, pad, tokens, width};
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskPanelAction {
    /// Show this task's transcript (`Transcript::render_agent` with the task's
    /// `tool_use_id`, or its agent id).
    View(String),
    Stop(String),
    /// SendMessage to the task's agent.
    Message {
        task_id: String,
        text: String,
    },
    Close,
}

#[derive(Debug, Default)]
pub struct TaskPanel {
    selected: usize,
    /// The task being written to, and the text so far.
    message: Option<(String, LineField)>,
    /// A one-off remark under the list ("that task is not running").
    note: Option<String>,
}

impl TaskPanel {
    pub fn new() -> Self {
        Self::default()
    }

    /// The task under the cursor.
    pub fn selected<'b>(&self, board: &'b TaskBoard) -> Option<&'b TaskEntry> {
        let tasks = board.tasks();
        tasks.get(self.selected.min(tasks.len().saturating_sub(1)))
    }

    pub fn handle_key(&mut self, key: KeyEvent, board: &TaskBoard) -> Option<TaskPanelAction> {
        self.note = None;
        if let Some((task_id, field)) = &mut self.message {
            match key.code {
                KeyCode::Esc => self.message = None,
                KeyCode::Enter => {
                    let text = field.text().trim().to_string();
                    let task_id = task_id.clone();
                    self.message = None;
                    if !text.is_empty() {
                        return Some(TaskPanelAction::Message { task_id, text });
                    }
                }
                _ => {
                    field.handle_key(key);
                }
            }
            return None;
        }
        let last = board.tasks().len().saturating_sub(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Some(TaskPanelAction::Close),
            KeyCode::Char('t') if ctrl => return Some(TaskPanelAction::Close),
            KeyCode::Char(_) if ctrl => {}
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.min(last).saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Enter => {
                return self
                    .selected(board)
                    .map(|t| TaskPanelAction::View(t.task_id.clone()))
            }
            KeyCode::Char('x') | KeyCode::Delete => {
                let task = self.selected(board)?;
                if task.is_live() {
                    return Some(TaskPanelAction::Stop(task.task_id.clone()));
                }
                self.note = Some(format!("That task is already {}.", task.status));
            }
            KeyCode::Char('m') => {
                let task = self.selected(board)?;
                self.message = Some((task.task_id.clone(), LineField::default()));
            }
            _ => {}
        }
        None
    }

    /// Pastes into the message field, when it is open.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some((_, field)) = &mut self.message {
            field.insert_str(text);
        }
    }

    /// Rows the panel needs: its frame, one row a task (one for "No tasks yet."), and the
    /// keys under them, at most `max`. No empty rows are reserved: they would only hide
    /// the transcript, or the task's transcript being viewed above the panel.
    pub fn height(&self, board: &TaskBoard, width: u16, max: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(2));
        let footer = self.footer_lines(board, inner, &Theme::default()).len();
        let rows = 2 + board.tasks().len().max(1) + footer;
        u16::try_from(rows).unwrap_or(u16::MAX).min(max)
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, board: &TaskBoard, theme: &Theme) {
        if area.width < 2 || area.height < 2 {
            return;
        }
        let running = board.running();
        let title = match running {
            0 => " Tasks ".to_string(),
            n => format!(" Tasks · {n} running "),
        };
        let block = frame(theme.style(Role::Accent)).title(Span::styled(
            cut(&title, usize::from(area.width).saturating_sub(2)),
            theme.style(Role::Heading),
        ));
        let inner = block.inner(area);
        block.render(area, buf);
        let w = usize::from(inner.width);

        let footer = self.footer_lines(board, w, theme);
        let list_rows = usize::from(inner.height).saturating_sub(footer.len());
        let tasks = board.tasks();
        let mut lines = Vec::new();
        if tasks.is_empty() {
            lines.push(Line::from(Span::styled(
                cut("No tasks yet.", w),
                theme.style(Role::Dim),
            )));
        } else {
            let selected = self.selected.min(tasks.len() - 1);
            let first = (selected + 1).saturating_sub(list_rows.max(1));
            for (i, task) in tasks.iter().enumerate().skip(first).take(list_rows) {
                lines.push(row(task, board, i == selected, w, theme));
            }
        }
        lines.resize(list_rows, Line::default());
        lines.extend(footer);
        draw_lines(&lines, inner, buf);
    }

    /// The message field or the keys, under the list.
    fn footer_lines(&self, board: &TaskBoard, w: usize, theme: &Theme) -> Vec<Line<'static>> {
        let dim = theme.style(Role::Dim);
        let mut out = Vec::new();
        if let Some(note) = &self.note {
            out.push(Line::from(Span::styled(
                cut(note, w),
                theme.style(Role::Warning),
            )));
        }
        match &self.message {
            Some((task_id, field)) => {
                let to = board
                    .get(task_id)
                    .map_or(task_id.clone(), |t| t.kind_label().to_string());
                out.push(Line::from(Span::styled(
                    cut(&format!("Message to {to}:"), w),
                    theme.style(Role::Text),
                )));
                let mut line = Line::from(Span::styled("> ", theme.style(Role::Accent)));
                line.spans
                    .extend(field.line(w.saturating_sub(2), true, theme).spans);
                out.push(line);
                out.push(Line::from(Span::styled(
                    cut("Enter send · Esc back", w),
                    dim,
                )));
            }
            None => out.push(Line::from(Span::styled(
                cut("↑↓ select · Enter view · x stop · m message · Esc close", w),
                dim,
            ))),
        }
        out
    }
}

/// The status as a shape, so it reads without colour.
fn icon(task: &TaskEntry) -> (&'static str, Role) {
    match task.status.as_str() {
        "running" => ("◇", Role::Accent),
        "pending" => ("○", Role::Dim),
        "idle" => ("◌", Role::Dim),
        "failed" => ("✗", Role::Error),
        "killed" => ("■", Role::Warning),
        _ => ("✓", Role::Success),
    }
}

/// `❯ ◇ Explore  map the crate ……  3 turns · 1.2k tok · 45s`, the right part shortened
/// first on narrow screens, the description cut last.
fn row(
    task: &TaskEntry,
    board: &TaskBoard,
    selected: bool,
    w: usize,
    theme: &Theme,
) -> Line<'static> {
    let turns = match task.turns {
        1 => "1 turn".to_string(),
        n => format!("{n} turns"),
    };
    let time = board
        .elapsed(&task.task_id)
        .map(|d| duration(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
    let mut full = vec![turns.clone(), format!("{} tok", tokens(task.tokens))];
    full.extend(time.clone());
    if !task.is_live() {
        full.push(task.status.clone());
    }
    let mut short = vec![turns];
    short.extend(time);
    let (icon, icon_role) = icon(task);
    let lead = format!("{} {icon} ", if selected { "❯" } else { " " });
    let kind = task.kind_label().to_string();
    let left_min = width(&lead) + width(&kind) + 6;
    let right = [full.join(" · "), short.join(" · ")]
        .into_iter()
        .find(|r| left_min + 2 + width(r) <= w)
        .unwrap_or_default();
    let room = w.saturating_sub(width(&lead) + width(&right) + usize::from(!right.is_empty()) * 2);
    let kind_shown = cut(&kind, room);
    let desc_room = room.saturating_sub(width(&kind_shown) + 2);
    let desc = if desc_room > 0 && !task.description.is_empty() {
        format!("  {}", cut(&task.description, desc_room))
    } else {
        String::new()
    };
    let left_w = width(&lead) + width(&kind_shown) + width(&desc);
    let gap = pad("", w.saturating_sub(left_w + width(&right)));
    let text = theme.style(if selected { Role::Selected } else { Role::Text });
    Line::from(vec![
        Span::styled(lead, theme.style(icon_role)),
        Span::styled(
            kind_shown,
            text.add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Span::styled(desc, text),
        Span::styled(gap, text),
        Span::styled(right, theme.style(Role::Dim)),
    ])
}
