//! Large pastes: a log or a file pasted whole would push everything else off the box, so it
//! is shown as one token ("[pasted 240 lines]") and kept aside; the submitted text has it back
//! in place. Small pastes go into the text as they are.

use super::editor::Editor;

/// More lines than this, or more characters than [`MAX_INLINE_CHARS`], and a paste collapses.
pub const MAX_INLINE_LINES: usize = 10;
pub const MAX_INLINE_CHARS: usize = 1_000;

/// Line breaks as `\n` (terminals paste `\r\n` or a lone `\r`).
pub fn normalise(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

pub fn is_large(text: &str) -> bool {
    text.lines().count() > MAX_INLINE_LINES || text.chars().count() > MAX_INLINE_CHARS
}

/// The pastes of the text being composed; an element's id indexes them.
#[derive(Debug, Default, Clone)]
pub struct Pastes {
    blocks: Vec<String>,
}

impl Pastes {
    /// Keeps `text` and answers its id and the token that stands for it.
    pub fn add(&mut self, text: String) -> (usize, String) {
        let id = self.blocks.len();
        let lines = text.lines().count();
        let size = if lines > 1 {
            format!("{lines} lines")
        } else {
            format!("{} chars", group_thousands(text.chars().count()))
        };
        let label = if id == 0 {
            format!("[pasted {size}]")
        } else {
            format!("[pasted #{} {size}]", id + 1)
        };
        self.blocks.push(text);
        (id, label)
    }

    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// The editor's text with every paste token replaced by what was pasted.
    pub fn expand(&self, editor: &Editor) -> String {
        let text = editor.text();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for element in editor.elements() {
            out.push_str(&text[at..element.start]);
            match self.blocks.get(element.id) {
                Some(block) => out.push_str(block),
                None => out.push_str(&text[element.start..element.end]),
            }
            at = element.end;
        }
        out.push_str(&text[at..]);
        out
    }
}

fn group_thousands(n: usize) -> String {
    crate::figures::group_thousands(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_count_lines_then_number_later_pastes() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.add("a\n".repeat(240)).1, "[pasted 240 lines]");
        assert_eq!(pastes.add("b\n".repeat(120)).1, "[pasted #2 120 lines]");
        assert_eq!(pastes.add("x".repeat(1500)).1, "[pasted #3 1,500 chars]");
    }

    #[test]
    fn crlf_and_lone_cr_become_newlines() {
        assert_eq!(normalise("a\r\nb\rc"), "a\nb\nc");
    }
}
