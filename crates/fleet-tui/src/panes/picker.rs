//! A list to choose one item from (`/resume`'s sessions, `/model`'s models), filtered as the
//! person types: every word typed must appear in the label, the detail or the id, in any
//! case.

use super::text::{cut, draw_lines, frame, pad, width};
use crate::port::Choice;
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use std::cell::Cell;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    Chosen(String),
    Cancelled,
}

#[derive(Debug)]
pub struct Picker {
    pub title: String,
    pub items: Vec<Choice>,
    /// Index into the filtered list.
    selected: usize,
    filter: String,
    /// Rows the list had at the last render: what PageUp/PageDown move by.
    page: Cell<usize>,
}

impl Picker {
    pub fn new(title: impl Into<String>, items: Vec<Choice>) -> Self {
        Self {
            title: title.into(),
            items,
            selected: 0,
            filter: String::new(),
            page: Cell::new(10),
        }
    }

    /// What has been typed to filter the list.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// The items the filter lets through, in their order.
    pub fn visible(&self) -> Vec<&Choice> {
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.items
            .iter()
            .filter(|c| {
                let hay = format!("{} {} {}", c.label, c.detail, c.id).to_lowercase();
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect()
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Picked> {
        let count = self.visible().len();
        let last = count.saturating_sub(1);
        let page = self.page.get().max(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => {
                return self
                    .visible()
                    .get(self.selected.min(last))
                    .map(|c| Picked::Chosen(c.id.clone()))
            }
            KeyCode::Esc => return Some(Picked::Cancelled),
            KeyCode::Up => self.selected = self.selected.min(last).saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.min(last).saturating_sub(page),
            KeyCode::PageDown => self.selected = (self.selected + page).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Char('u') if ctrl => self.set_filter(String::new()),
            KeyCode::Char(_) if ctrl => {}
            KeyCode::Char(c) => {
                let mut f = std::mem::take(&mut self.filter);
                f.push(c);
                self.set_filter(f);
            }
            KeyCode::Backspace => {
                let mut f = std::mem::take(&mut self.filter);
                f.pop();
                self.set_filter(f);
            }
            _ => {}
        }
        None
    }

    fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.selected = 0;
    }

    /// Rows wanted: the border, the filter row and every item, up to `max`. Counted on
    /// all items, so the box does not jump while the person types.
    pub fn height(&self, max: u16) -> u16 {
        let rows = self.items.len().max(1) + 3;
        max.min(u16::try_from(rows).unwrap_or(u16::MAX))
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width < 2 || area.height < 2 {
            return;
        }
        let visible = self.visible();
        let selected = self.selected.min(visible.len().saturating_sub(1));
        let counter = format!(" {}/{} ", (selected + 1).min(visible.len()), visible.len());
        let room = usize::from(area.width).saturating_sub(4);
        let block = frame(theme.style(Role::Accent))
            .title(Span::styled(
                format!(" {} ", cut(&self.title, room.saturating_sub(2))),
                theme.style(Role::Heading),
            ))
            .title_bottom(
                Line::from(Span::styled(counter, theme.style(Role::Dim))).right_aligned(),
            );
        let inner = block.inner(area);
        block.render(area, buf);
        let w = usize::from(inner.width);

        let mut lines = vec![if self.filter.is_empty() {
            Line::from(Span::styled(
                cut("Type to filter", w),
                theme.style(Role::Dim),
            ))
        } else {
            Line::from(vec![
                Span::styled("filter: ", theme.style(Role::Dim)),
                Span::styled(
                    cut(&self.filter, w.saturating_sub(8)),
                    theme.style(Role::Text),
                ),
            ])
        }];
        let rows = usize::from(inner.height).saturating_sub(1);
        self.page.set(rows.max(1));
        if visible.is_empty() {
            lines.push(Line::from(Span::styled(
                cut("no matches", w),
                theme.style(Role::Dim),
            )));
        }
        let first = (selected + 1).saturating_sub(rows.max(1));
        for (i, choice) in visible.iter().enumerate().skip(first).take(rows) {
            lines.push(item_line(choice, i == selected, w, theme));
        }
        draw_lines(&lines, inner, buf);
    }
}

/// `❯ label  detail`: the label keeps its room first, the detail takes what is left.
fn item_line(choice: &Choice, selected: bool, w: usize, theme: &Theme) -> Line<'static> {
    let marker = if selected { "❯ " } else { "  " };
    let room = w.saturating_sub(width(marker));
    let label = cut(&choice.label, room);
    let detail_room = room.saturating_sub(width(&label) + 2);
    let detail = if detail_room >= 4 && !choice.detail.is_empty() {
        format!("  {}", cut(&choice.detail, detail_room))
    } else {
        String::new()
    };
    let (label_role, detail_role) = if selected {
        let sel = theme.style(Role::Selected);
        (sel, sel.add_modifier(ratatui::style::Modifier::DIM))
    } else {
        (theme.style(Role::Text), theme.style(Role::Dim))
    };
    let fill = pad("", room.saturating_sub(width(&label) + width(&detail)));
    let mut spans = vec![
        Span::styled(marker, theme.style(Role::Accent)),
        Span::styled(label, label_role),
        Span::styled(detail, detail_role),
    ];
    if selected {
        spans.push(Span::styled(fill, theme.style(Role::Selected)));
    }
    Line::from(spans)
}
