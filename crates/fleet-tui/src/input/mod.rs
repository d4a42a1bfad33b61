//! The composer: where the person types. Multi-line editing, history, large pastes
//! collapsed, `@` path and `/` command completion, `!` shell lines, Ctrl+R history search.
//! It turns keys into [`ComposerAction`]s and leaves everything else (Esc with no popup open,
//! Ctrl+C, Ctrl+B…) to the app by answering `Unhandled`.
//!
//! PLACEHOLDER (skeleton): the public API is the contract the app builds on.

pub mod commands;

use crate::theme::Theme;
use commands::CommandInfo;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};
use std::path::PathBuf;

/// What the composer needs from outside.
#[derive(Debug, Clone, Default)]
pub struct ComposerContext {
    /// Where `@` completion looks (the repository, gitignore aware).
    pub cwd: PathBuf,
    /// Where submitted prompts are kept between sessions (`None`: memory only).
    pub history_file: Option<PathBuf>,
    /// Built-in and custom slash commands, for `/` completion.
    pub commands: Vec<CommandInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    /// The key was used (edited, moved, completed).
    Handled,
    /// Not the composer's key: the app decides (Esc, Ctrl+C, Ctrl+B, Ctrl+O, Ctrl+T…).
    Unhandled,
    /// Enter on a prompt; pasted blocks are inlined again.
    Submit(String),
    /// Enter on `!command`.
    Shell(String),
    /// Enter on `/name args`.
    Command { name: String, args: String },
}

#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    context: ComposerContext,
}

impl Composer {
    pub fn new(context: ComposerContext) -> Self {
        Self {
            text: String::new(),
            context,
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.push(c);
                ComposerAction::Handled
            }
            KeyCode::Backspace => {
                self.text.pop();
                ComposerAction::Handled
            }
            KeyCode::Enter if !self.text.is_empty() => {
                let text = std::mem::take(&mut self.text);
                if let Some(command) = text.strip_prefix('!') {
                    return ComposerAction::Shell(command.to_string());
                }
                if let Some(rest) = text.strip_prefix('/') {
                    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
                    return ComposerAction::Command {
                        name: name.to_string(),
                        args: args.to_string(),
                    };
                }
                ComposerAction::Submit(text)
            }
            _ => ComposerAction::Unhandled,
        }
    }

    /// Bracketed paste: large pastes are shown as "[pasted 240 lines]" and kept whole.
    pub fn handle_paste(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn clear(&mut self) {
        self.text.clear();
    }

    pub fn set_commands(&mut self, commands: Vec<CommandInfo>) {
        self.context.commands = commands;
    }

    /// Rows wanted at `width`, popups (completion, search) included.
    pub fn height(&self, width: u16) -> u16 {
        let _ = width;
        3
    }

    /// Draws itself; answers where the cursor goes.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<(u16, u16)> {
        let _ = theme;
        Paragraph::new(format!("> {}", self.text)).render(area, buf);
        Some((area.x + 2 + self.text.chars().count() as u16, area.y))
    }
}
