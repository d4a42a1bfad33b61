//! Helpers shared by the `input_*` tests: keys, typing, and the composer drawn to text.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fleet_tui::input::{Composer, ComposerAction, ComposerContext};
use fleet_tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Terminal;
use std::path::Path;

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

pub fn shift(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::SHIFT)
}

pub fn enter() -> KeyEvent {
    key(KeyCode::Enter)
}

/// A composer with the built-in commands, no history file, looking at `cwd`.
pub fn composer_in(cwd: &Path) -> Composer {
    Composer::new(ComposerContext {
        cwd: cwd.to_path_buf(),
        history_file: None,
        commands: fleet_tui::input::commands::builtin(),
    })
}

pub fn composer() -> Composer {
    composer_in(Path::new("."))
}

/// Types `text` key by key (`\n` as Shift+Enter); every key must be the composer's.
pub fn type_text(composer: &mut Composer, text: &str) {
    for c in text.chars() {
        let event = if c == '\n' {
            shift(KeyCode::Enter)
        } else {
            key(KeyCode::Char(c))
        };
        assert_eq!(
            composer.handle_key(event),
            ComposerAction::Handled,
            "typing {c:?}"
        );
    }
}

/// Types `text` and presses Enter.
pub fn submit(composer: &mut Composer, text: &str) -> ComposerAction {
    type_text(composer, text);
    composer.handle_key(enter())
}

/// The rows a person reads at `width` (trailing blanks trimmed), and the cursor.
pub fn screen(composer: &Composer, width: u16) -> (Vec<String>, Option<(u16, u16)>) {
    let height = composer.height(width).max(1);
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    let cursor = composer.render(area, &mut buf, &Theme::mono());
    let mut lines = Vec::new();
    for y in 0..height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..width {
            let cell = &buf[(x, y)];
            if skip > 0 {
                skip -= 1;
                continue;
            }
            line.push_str(cell.symbol());
            skip = unicode_width::UnicodeWidthStr::width(cell.symbol()).saturating_sub(1);
        }
        lines.push(line.trim_end().to_string());
    }
    (lines, cursor)
}

pub fn lines(composer: &Composer, width: u16) -> Vec<String> {
    screen(composer, width).0
}

/// The drawing as a snapshot: the terminal's rows and where the cursor is.
pub fn snapshot(composer: &Composer, width: u16) -> String {
    let height = composer.height(width).max(1);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let mut cursor = None;
    terminal
        .draw(|frame| {
            let area = frame.area();
            cursor = composer.render(area, frame.buffer_mut(), &Theme::mono());
        })
        .expect("draw");
    format!("{}cursor: {cursor:?}\n", terminal.backend())
}
