//! What the UI leaves in the terminal when it ends. The UI draws on the alternate screen,
//! which vanishes on exit; so after leaving it, the conversation is printed to the normal
//! screen, where it stays in the terminal's scrollback: the prompts, the assistant's text,
//! one line per tool call, notices and errors. Printing it once, after the terminal is
//! restored, is robust where an inline viewport is not (a resize, a terminal that reports
//! its cursor late, a panic mid-frame cannot leave half a transcript behind).

use ratatui::backend::IntoCrossterm;
use ratatui::text::Line;
use std::io::{self, Write};

/// Writes `lines` with their styles (colours only where the theme gave them: `NO_COLOR`
/// leaves bold and dim), each ended by a newline and every style reset at its end.
pub fn print(lines: &[Line<'_>], out: &mut impl Write) -> io::Result<()> {
    use crossterm::style::{Attribute, PrintStyledContent, SetAttribute, StyledContent};
    for line in lines {
        for span in &line.spans {
            let style = line.style.patch(span.style).into_crossterm();
            crossterm::queue!(
                out,
                PrintStyledContent(StyledContent::new(style, span.content.as_ref()))
            )?;
        }
        crossterm::queue!(out, SetAttribute(Attribute::Reset))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};
    use ratatui::text::Span;

    #[test]
    fn lines_are_printed_in_order_with_their_text_and_styles() {
        let lines = vec![
            Line::from(vec![
                Span::styled("› ", Style::default().fg(Color::Cyan)),
                Span::raw("what is it"),
            ]),
            Line::raw("the answer"),
        ];
        let mut out = Vec::new();
        print(&lines, &mut out).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out);
        let plain = strip(&text);
        assert_eq!(plain, "› what is it\nthe answer\n");
        assert!(text.contains("\u{1b}["), "styles are kept: {text:?}");
    }

    /// The text without escape sequences.
    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
