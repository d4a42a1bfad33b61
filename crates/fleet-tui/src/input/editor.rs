//! The text buffer behind the composer: a string, a cursor and a few atomic elements.
//!
//! The cursor is a byte offset that always sits on a grapheme boundary, so a wide character,
//! an emoji with a skin tone or a letter with a combining accent moves and deletes as one.
//! Elements are byte ranges (the "[pasted 240 lines]" tokens) that editing treats as a single
//! unit: the cursor never rests inside one, and a deletion touching one removes it whole, so a
//! placeholder can never be half-deleted into text that no longer maps to its paste.

use unicode_segmentation::UnicodeSegmentation;

/// An atomic span of the text; `id` names what it stands for (a paste).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    pub start: usize,
    pub end: usize,
    pub id: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Editor {
    text: String,
    cursor: usize,
    elements: Vec<Element>,
}

impl Editor {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The elements, in text order.
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// Replaces everything (a history entry, a completion); the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.elements.clear();
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Moves the cursor, snapped out of any element (toward its end when `forward`).
    pub fn set_cursor(&mut self, pos: usize, forward: bool) {
        let pos = self.boundary_at_or_before(pos.min(self.text.len()));
        self.cursor = self.snap(pos, forward);
    }

    pub fn insert_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.cursor = self.snap(self.cursor, true);
        let at = self.cursor;
        self.text.insert_str(at, s);
        for e in &mut self.elements {
            if e.start >= at {
                e.start += s.len();
                e.end += s.len();
            }
        }
        self.cursor += s.len();
    }

    /// Inserts `label` as one atomic element standing for `id`.
    pub fn insert_element(&mut self, label: &str, id: usize) {
        self.cursor = self.snap(self.cursor, true);
        let start = self.cursor;
        self.insert_str(label);
        self.elements.push(Element {
            start,
            end: start + label.len(),
            id,
        });
        self.elements.sort_by_key(|e| e.start);
    }

    /// Replaces `start..end` (widened to whole elements) with `s`; the cursor ends after `s`.
    pub fn replace_range(&mut self, start: usize, end: usize, s: &str) {
        let start = self.delete_range(start, end);
        self.cursor = start;
        self.insert_str(s);
    }

    /// Deletes `start..end`, widened to cover every element it touches; answers where the
    /// deletion began.
    fn delete_range(&mut self, start: usize, end: usize) -> usize {
        let (mut start, mut end) = (start.min(end), end.max(start).min(self.text.len()));
        for e in &self.elements {
            if e.start < end && e.end > start {
                start = start.min(e.start);
                end = end.max(e.end);
            }
        }
        if start >= end {
            return start;
        }
        let len = end - start;
        self.text.replace_range(start..end, "");
        self.elements.retain(|e| !(e.start < end && e.end > start));
        for e in &mut self.elements {
            if e.start >= end {
                e.start -= len;
                e.end -= len;
            }
        }
        if self.cursor >= end {
            self.cursor -= len;
        } else if self.cursor > start {
            self.cursor = start;
        }
        start
    }

    pub fn backspace(&mut self) {
        let from = self.prev_boundary(self.cursor);
        self.delete_range(from, self.cursor);
    }

    pub fn delete(&mut self) {
        let to = self.next_boundary(self.cursor);
        self.delete_range(self.cursor, to);
    }

    /// The character before the cursor, when it is `c` (the `\` of `\`+Enter).
    pub fn char_before_is(&self, c: char) -> bool {
        self.text[..self.cursor].ends_with(c) && self.element_containing(self.cursor - 1).is_none()
    }

    pub fn move_left(&mut self) {
        self.cursor = self.prev_boundary(self.cursor);
    }

    pub fn move_right(&mut self) {
        self.cursor = self.next_boundary(self.cursor);
    }

    pub fn move_word_left(&mut self) {
        self.cursor = self.word_left(self.cursor);
    }

    pub fn move_word_right(&mut self) {
        self.cursor = self.word_right(self.cursor);
    }

    pub fn move_line_start(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    pub fn move_line_end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    /// Ctrl+W: the word before the cursor and the blanks after it.
    pub fn delete_word_back(&mut self) {
        let from = self.word_left(self.cursor);
        self.delete_range(from, self.cursor);
    }

    /// Alt+D: the word after the cursor.
    pub fn delete_word_forward(&mut self) {
        let to = self.word_right(self.cursor);
        self.delete_range(self.cursor, to);
    }

    /// Ctrl+U: from the start of the line to the cursor.
    pub fn delete_to_line_start(&mut self) {
        let from = self.line_start(self.cursor);
        self.delete_range(from, self.cursor);
    }

    /// Ctrl+K: from the cursor to the end of the line, or the line break when already there.
    pub fn kill_to_line_end(&mut self) {
        let end = self.line_end(self.cursor);
        let to = if end == self.cursor {
            self.next_boundary(end)
        } else {
            end
        };
        self.delete_range(self.cursor, to);
    }

    fn line_start(&self, pos: usize) -> usize {
        self.text[..pos].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, pos: usize) -> usize {
        self.text[pos..]
            .find('\n')
            .map_or(self.text.len(), |i| pos + i)
    }

    fn element_containing(&self, pos: usize) -> Option<&Element> {
        self.elements.iter().find(|e| e.start <= pos && pos < e.end)
    }

    /// `pos` moved out of an element's inside, to its end when `forward`, else its start.
    fn snap(&self, pos: usize, forward: bool) -> usize {
        match self.elements.iter().find(|e| e.start < pos && pos < e.end) {
            Some(e) if forward => e.end,
            Some(e) => e.start,
            None => pos,
        }
    }

    fn boundary_at_or_before(&self, pos: usize) -> usize {
        let mut pos = pos;
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        pos
    }

    fn prev_boundary(&self, pos: usize) -> usize {
        if let Some(e) = self.elements.iter().find(|e| e.end == pos) {
            return e.start;
        }
        let prev = self.text[..pos]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i);
        self.snap(prev, false)
    }

    fn next_boundary(&self, pos: usize) -> usize {
        if let Some(e) = self.elements.iter().find(|e| e.start == pos) {
            return e.end;
        }
        let next = self.text[pos..]
            .graphemes(true)
            .next()
            .map_or(pos, |g| pos + g.len());
        self.snap(next, true)
    }

    fn word_left(&self, pos: usize) -> usize {
        let before = &self.text[..pos];
        let trimmed = before.trim_end();
        let start = trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        self.snap(start, false)
    }

    fn word_right(&self, pos: usize) -> usize {
        let after = &self.text[pos..];
        let blanks = after.len() - after.trim_start().len();
        let word = after[blanks..]
            .find(char::is_whitespace)
            .unwrap_or(after.len() - blanks);
        self.snap(pos + blanks + word, true)
    }
}
