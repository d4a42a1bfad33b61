//! A one-line text field: the permission prompt's feedback, the task panel's message and
//! the agent form's inputs. The cursor is drawn as a reversed cell so it shows with
//! `NO_COLOR` and needs no terminal cursor placement from the app.

use super::text::{cut, take_cells, width};
use crate::theme::{Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LineField {
    text: String,
    /// In characters, 0..=len.
    cursor: usize,
}

impl LineField {
    pub fn text(&self) -> &str {
        &self.text
    }

    fn byte_at(&self, char_index: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_index)
            .map_or(self.text.len(), |(i, _)| i)
    }

    fn len(&self) -> usize {
        self.text.chars().count()
    }

    pub fn insert_str(&mut self, s: &str) {
        // One line: pasted line breaks and tabs become spaces.
        let clean: String = s
            .chars()
            .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
            .filter(|c| !c.is_control())
            .collect();
        let at = self.byte_at(self.cursor);
        self.text.insert_str(at, &clean);
        self.cursor += clean.chars().count();
    }

    /// Edits for the keys a one-line field understands; `true` when the key was used.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                self.cursor = 0;
            }
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.len(),
            KeyCode::Char(_) if ctrl => return false,
            KeyCode::Char(c) => {
                let at = self.byte_at(self.cursor);
                self.text.insert(at, c);
                self.cursor += 1;
            }
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                let at = self.byte_at(self.cursor);
                self.text.remove(at);
            }
            KeyCode::Delete if self.cursor < self.len() => {
                let at = self.byte_at(self.cursor);
                self.text.remove(at);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.len()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.len(),
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return false,
        }
        true
    }

    /// The field in `max` cells: the window scrolls so the cursor stays visible. With
    /// `focused` false no cursor is drawn.
    pub fn line(&self, max: usize, focused: bool, theme: &Theme) -> Line<'static> {
        let text_style = theme.style(Role::Text);
        if !focused {
            return Line::from(Span::styled(cut(&self.text, max), text_style));
        }
        if max == 0 {
            return Line::default();
        }
        let before: String = self.text.chars().take(self.cursor).collect();
        let at: Option<char> = self.text.chars().nth(self.cursor);
        let after: String = self.text.chars().skip(self.cursor + 1).collect();
        let cursor_w = at.and_then(|c| c.width()).unwrap_or(1).max(1);
        // Keep the cursor cell on screen: drop whole characters from the left until it fits.
        let room_before = max.saturating_sub(cursor_w);
        let mut shown_before = before.as_str();
        while width(shown_before) > room_before {
            let mut chars = shown_before.chars();
            chars.next();
            shown_before = chars.as_str();
        }
        let room_after = max.saturating_sub(width(shown_before) + cursor_w);
        let cursor_style = text_style.add_modifier(Modifier::REVERSED);
        Line::from(vec![
            Span::styled(shown_before.to_string(), text_style),
            Span::styled(at.map_or(" ".to_string(), String::from), cursor_style),
            Span::styled(take_cells(&after, room_after), text_style),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn edits_in_the_middle_of_wide_text() {
        let mut f = LineField::default();
        f.insert_str("日本");
        f.handle_key(key(KeyCode::Left));
        f.handle_key(key(KeyCode::Char('x')));
        assert_eq!(f.text(), "日x本");
        f.handle_key(key(KeyCode::Backspace));
        f.handle_key(key(KeyCode::Backspace));
        assert_eq!(f.text(), "本");
        f.handle_key(key(KeyCode::Backspace));
        assert_eq!(f.text(), "本");
    }

    #[test]
    fn pasted_lines_become_one() {
        let mut f = LineField::default();
        f.insert_str("a\nb\tc");
        assert_eq!(f.text(), "a b c");
    }

    #[test]
    fn the_window_follows_the_cursor() {
        let mut f = LineField::default();
        f.insert_str("abcdefghij");
        let line = f.line(5, true, &Theme::mono());
        let shown: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(shown, "ghij ");
        assert!(f.line(0, true, &Theme::mono()).spans.is_empty());
    }
}
