//! Completion popups: `@` followed by part of a path offers the repository's files, `/` at the
//! start of the input offers the slash commands. This module finds what is being completed
//! (the trigger), holds the choices and the selection, and draws them; `path`, `command` and
//! `fuzzy` find the choices.

pub mod command;
pub mod fuzzy;
pub mod path;

use super::commands::CommandInfo;
use super::wrap::{display_width, truncate};
use crate::theme::{Role, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// Choices shown at most.
pub const MAX_ROWS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Command,
}

/// What is being completed: `start..end` of the text is replaced on accepting, and `query`
/// is the part typed so far (without the `@` or `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub query: String,
}

/// The trigger at `cursor`: a `/word` that is the whole first token of a one-line input,
/// or a blank-separated word starting with `@`.
pub fn detect(text: &str, cursor: usize) -> Option<Trigger> {
    let before = &text[..cursor];
    if let Some(query) = before.strip_prefix('/') {
        if !before.contains(char::is_whitespace) && !text.contains('\n') {
            let end = text.find(char::is_whitespace).unwrap_or(text.len());
            return Some(Trigger {
                kind: Kind::Command,
                start: 0,
                end,
                query: query.to_string(),
            });
        }
    }
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let query = before[start..].strip_prefix('@')?;
    if query.starts_with('"') {
        return None;
    }
    let end = text[cursor..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| cursor + i);
    Some(Trigger {
        kind: Kind::File,
        start,
        end,
        query: query.to_string(),
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Items {
    /// `None` while the file index is being built.
    Files(Option<Vec<String>>),
    Commands(Vec<CommandInfo>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popup {
    pub trigger: Trigger,
    pub items: Items,
    pub selected: usize,
}

impl Popup {
    pub fn len(&self) -> usize {
        match &self.items {
            Items::Files(files) => files.as_ref().map_or(0, Vec::len),
            Items::Commands(commands) => commands.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows the popup takes: its choices, or one line saying why there are none.
    pub fn rows(&self) -> usize {
        self.len().clamp(1, MAX_ROWS)
    }

    pub fn select_next(&mut self) {
        if !self.is_empty() {
            self.selected = (self.selected + 1) % self.len();
        }
    }

    pub fn select_previous(&mut self) {
        if !self.is_empty() {
            self.selected = (self.selected + self.len() - 1) % self.len();
        }
    }

    /// The text that replaces the trigger when the selection is accepted.
    pub fn replacement(&self) -> Option<String> {
        match &self.items {
            Items::Files(files) => {
                let path = files.as_ref()?.get(self.selected)?;
                Some(if path.contains(char::is_whitespace) {
                    format!("@\"{path}\"")
                } else {
                    format!("@{path}")
                })
            }
            Items::Commands(commands) => {
                let command = commands.get(self.selected)?;
                Some(format!("/{}", command.name))
            }
        }
    }

    /// The selected command, for Enter on the `/` popup.
    pub fn selected_command(&self) -> Option<&CommandInfo> {
        match &self.items {
            Items::Commands(commands) => commands.get(self.selected),
            Items::Files(_) => None,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        if width == 0 || area.height == 0 {
            return;
        }
        let dim = theme.style(Role::Dim);
        let note = match &self.items {
            Items::Files(None) => Some("indexing…"),
            Items::Files(Some(files)) if files.is_empty() => Some("no matching files"),
            Items::Commands(commands) if commands.is_empty() => Some("no matching commands"),
            _ => None,
        };
        if let Some(note) = note {
            buf.set_stringn(
                area.x,
                area.y,
                truncate(&format!("  {note}"), width),
                width,
                dim,
            );
            return;
        }
        // Scroll so the selection is always among the shown rows.
        let shown = usize::from(area.height).clamp(1, MAX_ROWS);
        let first = self.selected.saturating_sub(shown - 1);
        let rows: Vec<(String, String)> = match &self.items {
            Items::Files(files) => files
                .iter()
                .flatten()
                .map(|p| (p.clone(), String::new()))
                .collect(),
            Items::Commands(commands) => commands.iter().map(command_row).collect(),
        };
        let name_width = rows
            .iter()
            .map(|(name, _)| display_width(name))
            .max()
            .unwrap_or(0)
            .min((width / 3).max(16));
        for (i, (name, detail)) in rows.iter().enumerate().skip(first).take(shown) {
            let y = area.y + (i - first) as u16;
            let selected = i == self.selected;
            let marker = if selected { "› " } else { "  " };
            let style = if selected {
                theme.style(Role::Selected)
            } else {
                theme.style(Role::Text)
            };
            let limit = if detail.is_empty() {
                width.saturating_sub(2)
            } else {
                name_width
            };
            let name = truncate(name, limit);
            let head = format!("{marker}{name}");
            let (x, _) = buf.set_stringn(area.x, y, &head, width, style);
            if !detail.is_empty() {
                let pad = name_width.saturating_sub(display_width(&name)) + 2;
                let room = width.saturating_sub(display_width(&head) + pad);
                if room > 3 {
                    let x = x + pad as u16;
                    buf.set_stringn(x, y, truncate(detail, room), room, dim);
                }
            }
        }
    }
}

/// `/compact [instructions]` and its description.
fn command_row(command: &CommandInfo) -> (String, String) {
    let name = if command.argument_hint.is_empty() {
        format!("/{}", command.name)
    } else {
        format!("/{} {}", command.name, command.argument_hint)
    };
    (name, command.description.clone())
}
