//! Ctrl+R: reverse incremental search over the history. The query grows as the person types;
//! each change looks again from the newest entry, Ctrl+R again steps to the next older match,
//! Enter takes the match into the buffer and Esc leaves the buffer as it was.

use super::history::History;
use super::wrap::truncate;
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// What a key did to the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchOutcome {
    /// Still searching.
    Continue,
    /// Take this text (the match, or nothing when there was none).
    Accept(Option<String>),
    Cancel,
    /// Not a search key: the caller decides (the search stays open).
    Unhandled,
}

#[derive(Debug, Default)]
pub struct Search {
    query: String,
    /// Index into the history of the shown match.
    found: Option<usize>,
}

impl Search {
    /// Starts with an empty query showing the newest entry.
    pub fn new(history: &History) -> Self {
        let mut search = Self::default();
        search.find(history, history.entries().len());
        search
    }

    /// The match shown, if any.
    pub fn found<'h>(&self, history: &'h History) -> Option<&'h str> {
        self.found
            .and_then(|i| history.entries().get(i))
            .map(String::as_str)
    }

    /// Looks for the query in entries older than `before`, newest first, ignoring case.
    fn find(&mut self, history: &History, before: usize) {
        let query = self.query.to_lowercase();
        let entries = history.entries();
        self.found = entries[..before.min(entries.len())]
            .iter()
            .rposition(|e| e.to_lowercase().contains(&query));
    }

    /// Pasted text extends the query.
    pub fn push_str(&mut self, text: &str, history: &History) {
        self.query.push_str(text);
        self.find(history, history.entries().len());
    }

    pub fn handle_key(&mut self, key: KeyEvent, history: &History) -> SearchOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('r') if ctrl => {
                let before = self.found.unwrap_or(0);
                let previous = self.found;
                self.find(history, before);
                // No older match: keep showing the one we had.
                if self.found.is_none() {
                    self.found = previous;
                }
                SearchOutcome::Continue
            }
            KeyCode::Char('g') if ctrl => SearchOutcome::Cancel,
            KeyCode::Esc => SearchOutcome::Cancel,
            KeyCode::Enter | KeyCode::Tab => {
                SearchOutcome::Accept(self.found(history).map(str::to_string))
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.find(history, history.entries().len());
                SearchOutcome::Continue
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.find(history, history.entries().len());
                SearchOutcome::Continue
            }
            _ => SearchOutcome::Unhandled,
        }
    }

    /// One row: `search: <query> → <first line of the match>`; answers the cursor column.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, history: &History) -> u16 {
        if area.width == 0 || area.height == 0 {
            return area.x;
        }
        let width = usize::from(area.width);
        let label = "search: ";
        let query = truncate(&self.query, width.saturating_sub(label.len() + 2));
        let head = format!("{label}{query}");
        buf.set_stringn(area.x, area.y, label, width, theme.style(Role::Accent));
        let (end, _) = buf.set_stringn(
            area.x + label.len().min(width) as u16,
            area.y,
            &query,
            width.saturating_sub(label.len()),
            theme.style(Role::Text),
        );
        let tail = match self.found(history) {
            Some(found) => format!(" → {}", found.lines().next().unwrap_or("")),
            None if self.query.is_empty() => String::new(),
            None => " (no match)".to_string(),
        };
        let room = width.saturating_sub(super::wrap::display_width(&head));
        buf.set_stringn(
            end,
            area.y,
            truncate(&tail, room),
            room,
            theme.style(Role::Dim),
        );
        end.min(area.right().saturating_sub(1))
    }
}
